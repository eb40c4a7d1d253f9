"""Models built on this machine are built once, under a lock, and appear whole or not at all."""

from __future__ import annotations

import threading
import time

import pytest

from codeground.components.embedders.model_cache import built_once, source_fingerprint


def test_a_model_is_built_once_and_then_reused(tmp_path):
    builds = []

    def build(out):
        builds.append(out)
        (out / "model.bin").write_text("weights")

    target = tmp_path / "models" / "m-1"
    assert built_once(target, build, marker="model.bin") == target
    assert built_once(target, build, marker="model.bin") == target
    assert len(builds) == 1 and (target / "model.bin").read_text() == "weights"


def test_concurrent_builders_build_once(tmp_path):
    builds = []

    def slow_build(out):
        builds.append(out)
        time.sleep(0.3)
        (out / "model.bin").write_text("weights")

    target = tmp_path / "m"
    threads = [threading.Thread(target=built_once, args=(target, slow_build), kwargs={"marker": "model.bin"})
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and (target / "model.bin").is_file()


def test_a_failed_build_leaves_nothing_a_later_run_would_load(tmp_path):
    def broken(out):
        (out / "model.bin").write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        built_once(tmp_path / "m", broken, marker="model.bin")
    assert not (tmp_path / "m").exists()
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".m.lock")] == []


def test_the_fingerprint_follows_the_model_files_and_the_settings(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    first = source_fingerprint(tmp_path, "dims 256")
    assert source_fingerprint(tmp_path, "dims 256") == first
    assert source_fingerprint(tmp_path, "dims 128") != first
    (tmp_path / "config.json").write_text('{"changed": true}')
    assert source_fingerprint(tmp_path, "dims 256") != first
