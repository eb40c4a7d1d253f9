"""Models built on this machine are built once, under a lock, and appear whole or not at all."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import threading
import time

import pytest

from codeground.components.embedders import model_cache
from codeground.components.embedders.model_cache import DIGESTS_FILE, built_once, source_fingerprint


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
    threads = [
        threading.Thread(target=built_once, args=(target, slow_build), kwargs={"marker": "model.bin"})
        for _ in range(3)
    ]
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


def test_the_fingerprint_is_the_models_content_not_its_location(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path / "cache"))
    first, second = tmp_path / "venv1" / "model", tmp_path / "venv2" / "model"
    for folder in (first, second):  # written one after the other: other paths, other mtimes
        folder.mkdir(parents=True)
        (folder / "config.json").write_text('{"hidden_size": 384}')
        (folder / "model.safetensors").write_bytes(b"weights" * 1000)
    assert source_fingerprint(first, "int8") == source_fingerprint(second, "int8")
    (second / "model.safetensors").write_bytes(b"other weights")
    assert source_fingerprint(first, "int8") != source_fingerprint(second, "int8")


def test_a_files_digest_is_read_once_per_path_size_and_mtime_and_gone_files_are_forgotten(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(model_cache, "_digests", None)  # a new process
    weights = tmp_path / "venv1" / "model.safetensors"
    weights.parent.mkdir()
    weights.write_bytes(b"a" * 4096)
    digest = model_cache.file_digest(weights)
    # the same size and mtime with other bytes: the remembered digest answers, nothing is hashed
    stat = weights.stat()
    weights.write_bytes(b"b" * 4096)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    monkeypatch.setattr(model_cache, "_digests", None)
    assert model_cache.file_digest(weights) == digest
    # a changed mtime is a new key: hashed again
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert model_cache.file_digest(weights) != digest
    memo = tmp_path / "cache" / "models" / DIGESTS_FILE
    assert len(json.loads(memo.read_text())) == 1  # the older key of the same file was replaced
    # a removed .venv's entries go when the next digest is written
    other = tmp_path / "venv2" / "tokenizer.json"
    other.parent.mkdir()
    other.write_text("{}")
    shutil.rmtree(weights.parent)
    model_cache.file_digest(other)
    assert [k.split("|")[0] for k in json.loads(memo.read_text())] == [str(other.resolve())]


def test_a_cache_that_cannot_be_written_only_costs_the_hash(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("CODEGROUND_CACHE", str(blocked))
    monkeypatch.setattr(model_cache, "_digests", None)
    (tmp_path / "config.json").write_text("{}")
    assert source_fingerprint(tmp_path) == source_fingerprint(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "config.json"]


@pytest.fixture
def announced():
    """What ``model_cache.announce`` says, whatever handlers another test installed on its logger."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    log = logging.getLogger(model_cache.PREPARE_LOGGER)
    handler, level = Collect(), log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    yield lines
    log.removeHandler(handler)
    log.setLevel(level)


def test_a_build_is_announced_once_and_a_reuse_says_nothing(tmp_path, announced):
    def build(out):
        (out / "model.bin").write_text("weights")

    built_once(tmp_path / "m-1", build, marker="model.bin", what="the demo model")
    built_once(tmp_path / "m-1", build, marker="model.bin", what="the demo model")
    built_once(tmp_path / "m-2", build, marker="model.bin", what="the other model", takes="a second")
    assert announced == [
        "making the demo model once for this machine (later runs reuse it)",
        "making the other model once for this machine (a second; later runs reuse it)",
    ]


def test_waiting_for_another_build_is_announced_once_and_nothing_is_built_twice(tmp_path, announced):
    target, builds, got = tmp_path / "m-1", [], []

    def build(out):
        builds.append(out)

    waiter = threading.Thread(
        target=lambda: got.append(built_once(target, build, marker="model.bin", what="the demo model"))
    )
    with model_cache.folder_lock(target, fcntl.LOCK_EX) as held:  # another process building it
        assert held
        waiter.start()
        deadline = time.monotonic() + 10
        while not announced and time.monotonic() < deadline:
            time.sleep(0.01)
        target.mkdir()
        (target / "model.bin").write_text("weights")  # its build lands
    waiter.join(10)
    assert got == [target] and builds == []
    assert announced == ["waiting while another codeground run makes the demo model"]


def test_a_lock_that_is_busy_is_not_waited_for_when_asked_not_to(tmp_path):
    with model_cache.folder_lock(tmp_path / "m", fcntl.LOCK_EX) as first:
        with model_cache.folder_lock(tmp_path / "m", fcntl.LOCK_SH, wait=False) as second:
            assert first and not second
