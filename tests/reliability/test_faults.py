"""Faults injected into the running product: the LLM server (down, missing model, hanging, cut
off, failing), the reranker's model, the index stores and manifest, and ``codeground index``
killed with SIGKILL. Each: a clear one-line message, the sources still shown where only the LLM
failed, and nothing lost -- the index answers again after ``codeground index`` (or never stopped).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codeground.app.index.index_dir import IndexDir
from tests.conftest import PROJECT_ROOT, closed_port, make_sample_repo
from tests.reliability.helpers import (
    QUERY_YAML,
    assert_no_traceback,
    assert_one_line_error,
    bm25_records,
    cg,
    cited_paths,
    current_generation,
    drop_bm25_records,
    manifest_of,
    search_file,
    search_lines,
    yaml_variant,
)

QUESTION = "How do I fit a Trainer?"
PROBES = ("Trainer.fit", "install with pip", "release notes", "Gemma2DecoderLayer")


def _llm_timeout(seconds: int) -> Callable[[dict], None]:
    def edit(data: dict) -> None:
        data["components"]["llm"]["init_parameters"]["generator"]["init_parameters"]["timeout"] = seconds

    return edit


# ------------------------------------------------------------------------------------------- the LLM
# (id, fake Ollama knobs or None for "nothing listens", YAML edit or None, fragment of the one notice line)
LLM_FAULTS: list[tuple[str, dict | None, Callable[[dict], None] | None, str]] = [
    ("Ollama down", None, None, "ollama serve"),
    ("model missing (404)", {"models": {"some-other-model:latest"}}, None, "ollama pull"),
    ("Ollama hanging", {"hang_seconds": 30.0}, _llm_timeout(1), "did not answer in time"),
    ("stream cut mid-answer", {"cut_after_tokens": 4, "token_delay": 0.01}, None, "closed the answer stream"),
    ("server error (HTTP 500)", {"status_code": 500}, None, "HTTP 500"),
    ("error line mid-stream", {"stream_error": "runner process has terminated"}, None, "runner process"),
]


@pytest.mark.parametrize("knobs,edit,fragment", [f[1:] for f in LLM_FAULTS], ids=[f[0] for f in LLM_FAULTS])
def test_llm_fault_is_one_notice_line_and_the_sources_are_still_shown(
    indexed_sample, fake_ollama, monkeypatch, tmp_path, knobs, edit, fragment
):
    repo, idx = indexed_sample
    if knobs is None:
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    else:
        monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
        fake_ollama.configure(
            reply="Call `Trainer.fit` with the data, see pkg/trainer.py:33-38 for more.", **knobs
        )
    pipeline = yaml_variant(QUERY_YAML, tmp_path / "query.yaml", edit) if edit else QUERY_YAML
    t0 = time.monotonic()
    result = cg("query", QUESTION, "--index-dir", idx, "--pipeline", pipeline)
    assert time.monotonic() - t0 < 20, "a failing LLM held the answer up"
    assert result.exit_code == 2, result.output  # no answer: exit 2, not a crash
    assert_no_traceback(result)
    notices = [ln for ln in result.stderr.splitlines() if fragment in ln]
    assert len(notices) == 1 and notices[0].startswith("note: "), result.stderr
    assert all(ln.startswith(("note: ", "error: ")) for ln in result.stderr.splitlines() if ln.strip())
    cited = cited_paths(result)
    assert "pkg/trainer.py" in cited and all((repo / p).is_file() for p in cited), result.stdout
    if knobs and knobs.get("cut_after_tokens"):
        assert result.stdout.startswith("Call `Trainer.fit` with ")  # what arrived stays on screen


def test_missing_reranker_model_keeps_the_fused_order_and_says_so(indexed_sample, tmp_path):
    _, idx = indexed_sample

    def no_model(data: dict) -> None:
        ranker = data["components"]["ranker"]["init_parameters"]["ranker"]["init_parameters"]
        ranker["model"] = str(tmp_path / "no-such-cross-encoder")

    pipeline = yaml_variant(QUERY_YAML, tmp_path / "query.yaml", no_model)
    result = cg("search", "how do I fit a trainer", "-k", "8", "--index-dir", idx, "--pipeline", pipeline)
    assert result.exit_code == 0, result.output
    assert_no_traceback(result)
    notes = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(notes) == 1 and notes[0].startswith("note: reranking unavailable: "), result.stderr
    assert "no-such-cross-encoder" in notes[0] and "kept the fused order" in notes[0]
    scores = [row[4] for row in search_lines(result)]
    assert len(scores) >= 3 and all(s > 0 for s in scores)  # fused scores, never zeroed
    assert scores == sorted(scores, reverse=True)


# ------------------------------------------------------------------------------- the index on disk
def answers(idx: Path, work: Path) -> list[list[dict]]:
    """The ranked sources the index gives for every probe."""
    found = search_file(idx, list(PROBES), work)
    assert all(found), found
    return found


def _chroma_sqlite(gen: Path) -> Path:
    return next((gen / "chroma").glob("*.sqlite3"))


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for i in range(0, len(data), 4096):
        data[i : i + 64] = b"\xde\xad\xbe\xef" * 16
    path.write_bytes(bytes(data))


def _edit_manifest(gen: Path) -> None:
    raw = json.loads((gen / "manifest.json").read_text())
    raw["chunk_count"] += 5
    (gen / "manifest.json").write_text(json.dumps(raw))


def _drop_bm25_records(gen: Path) -> None:
    drop_bm25_records(gen, 3)


def _point_current_at_nothing(gen: Path) -> None:
    (gen.parent / "CURRENT").write_text("gen-0-gone\n")


# (id, fault applied to the live generation, fragment of the one error line)
STORE_FAULTS: list[tuple[str, Callable[[Path], None], str]] = [
    ("Chroma directory deleted", lambda g: shutil.rmtree(g / "chroma"), "stale index"),
    ("Chroma sqlite corrupted", lambda g: _corrupt(_chroma_sqlite(g)), "cannot be read"),
    ("Chroma sqlite emptied", lambda g: _chroma_sqlite(g).write_bytes(b""), "rebuild"),
    ("BM25 store deleted", lambda g: (g / "bm25.sqlite3").unlink(), "stale index"),
    ("BM25 store not SQLite", lambda g: (g / "bm25.sqlite3").write_text("{garbage"), "BM25 store"),
    ("BM25 store missing records", _drop_bm25_records, "stale index"),
    ("manifest missing", lambda g: (g / "manifest.json").unlink(), "no readable manifest"),
    ("manifest not JSON", lambda g: (g / "manifest.json").write_text("{garbage"), "no readable manifest"),
    ("manifest count mismatched", _edit_manifest, "stale index"),
    ("CURRENT names a missing generation", _point_current_at_nothing, "no index in"),
]


@pytest.fixture(scope="module")
def pristine(indexed_sample, tmp_path_factory) -> dict:
    """What the sample index answers to ``PROBES``, before any fault."""
    return answers(indexed_sample[1], tmp_path_factory.mktemp("pristine"))


def _fix_named_in(line: str, repo: Path, idx: Path) -> list:
    """The ``codeground index …`` command an error line tells the user to run, run as it stands: it
    names this index (``--index-dir``, as the index is not ``<repo>/.codeground``) and its repository
    (``PATH`` only where the manifest that says which is lost)."""
    found = re.search(r"`codeground (index [^`]+)`", line)
    assert found, f"the error does not say how to fix it: {line}"
    words = shlex.split(found.group(1))
    assert words[words.index("--index-dir") + 1] == str(idx.resolve()), line
    assert words[1] in ("PATH", str(repo.resolve())), line
    return [repo if word == "PATH" else word for word in words]


@pytest.mark.parametrize("fault,fragment", [f[1:] for f in STORE_FAULTS], ids=[f[0] for f in STORE_FAULTS])
def test_broken_index_is_refused_in_one_line_and_the_fix_it_names_restores_every_answer(
    indexed_sample, pristine, tmp_path, fake_ollama, monkeypatch, fault, fragment
):
    repo, clean = indexed_sample
    idx = tmp_path / "idx"
    shutil.copytree(clean, idx)
    fault(current_generation(idx))
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)

    assert_one_line_error(cg("search", "Trainer.fit", "--index-dir", idx), fragment)
    refused = cg("query", QUESTION, "--index-dir", idx)
    assert_one_line_error(refused, fragment)
    assert not fake_ollama.requests_to("/api/chat"), "the model was asked without sources"

    repaired = cg(*_fix_named_in(refused.stderr, repo, idx))
    assert repaired.exit_code == 0, repaired.output
    assert_no_traceback(repaired)
    assert len(list(idx.glob("gen-*"))) == 1
    assert answers(idx, tmp_path) == pristine
    assert bm25_records(idx) == bm25_records(clean)


@pytest.mark.parametrize("fault", ["Chroma sqlite corrupted", "BM25 store not SQLite"])
def test_an_incremental_run_over_a_broken_index_rebuilds_it_from_the_repository(tmp_path, fault):
    repo, idx = make_sample_repo(tmp_path / "repo"), tmp_path / "idx"
    assert cg("index", repo, "--index-dir", idx).exit_code == 0
    before = manifest_of(idx)
    dict((f[0], f[1]) for f in STORE_FAULTS)[fault](current_generation(idx))
    (repo / "docs" / "added.md").write_text("# Added page\n\nWritten after the index broke.\n")

    result = cg("index", repo, "--index-dir", idx)  # no --full: the run finds out by itself
    assert result.exit_code == 0, result.output
    assert_no_traceback(result)
    assert "full rebuild (previous index unreadable" in " ".join(result.stdout.split())
    after = manifest_of(idx)
    assert set(after.files) == set(before.files) | {"docs/added.md"}
    assert {p: e for p, e in after.files.items() if p != "docs/added.md"} == before.files
    assert (
        len(bm25_records(idx))
        == after.chunk_count
        == before.chunk_count + len(after.files["docs/added.md"].ids)
    )
    assert search_file(idx, ["Added page"], tmp_path, k=1)[0][0]["file_path"] == "docs/added.md"


def test_a_search_reads_no_file_list_and_what_needs_one_says_how_to_rebuild_it(
    indexed_sample, pristine, tmp_path, fake_ollama, monkeypatch
):
    """The per-file entries (files.json) are read only by what needs them: without them every search
    answers as before, `get_source` and doctor say in one line how to rebuild, and `codeground index`
    rebuilds the index from the repository by itself."""
    from codeground.app.errors import CodegroundError
    from codeground.app.index.manifest import FILES
    from codeground.app.serve.repo_tools import RepositoryTools

    repo, clean = indexed_sample
    idx = tmp_path / "idx"
    shutil.copytree(clean, idx)
    (current_generation(idx) / FILES).unlink()

    assert answers(idx, tmp_path / "work") == pristine
    with pytest.raises(CodegroundError, match=rf"{FILES} cannot be read: rebuild it with `codeground index"):
        RepositoryTools(idx, QUERY_YAML).get_source("pkg/trainer.py", 1, 2)
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    doctor = cg("doctor", "--repo", repo, "--index-dir", idx)
    index_line = next(ln for ln in doctor.stdout.splitlines() if ln[2:].startswith("index"))
    assert index_line.startswith("✗") and f"{FILES} cannot be read" in index_line, index_line
    assert _fix_named_in(index_line, repo, idx)

    result = cg("index", repo, "--index-dir", idx)  # no --full: the run finds out by itself
    assert result.exit_code == 0, result.output
    assert "full rebuild (previous index unreadable" in " ".join(result.stdout.split())
    assert set(manifest_of(idx).files) == set(manifest_of(clean).files)
    assert answers(idx, tmp_path / "work2") == pristine


# ------------------------------------------------------------------------------ SIGKILL mid-index
GENERATED_FILES = 192  # three batches of 64: the run is killed after the first


def _grow(repo: Path) -> None:
    folder = repo / "generated"
    folder.mkdir()
    for i in range(GENERATED_FILES):
        (folder / f"mod_{i:03d}.py").write_text(f"def generated_{i}(value):\n    return value * {i}\n")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited (its reaper is gone with the parent)


def _stream_lines(pipe, sink: queue.Queue) -> None:
    for line in iter(pipe.readline, ""):
        sink.put(line)
    sink.put(None)


def test_index_killed_mid_run_leaves_the_previous_index_answering_and_a_rerun_completes(tmp_path):
    repo = make_sample_repo(tmp_path / "repo")
    idx = tmp_path / "idx"
    assert cg("index", repo, "--index-dir", idx).exit_code == 0
    live = current_generation(idx)
    before = answers(idx, tmp_path)
    _grow(repo)

    proc = subprocess.Popen(
        [sys.executable, "-m", "codeground.app.cli", "index", str(repo), "--index-dir", str(idx)],
        cwd=PROJECT_ROOT,
        env={**os.environ, "COLUMNS": "200"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_stream_lines, args=(proc.stderr, lines), daemon=True).start()
    seen, deadline = [], time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            assert line is not None, f"index ended before it could be killed: {seen}"
            seen.append(line)
            if line.startswith("indexed ") and f"/{GENERATED_FILES} files" in line:
                break  # a batch is embedded and written, more are to come: we are mid-run
        else:
            pytest.fail(f"no progress line within the deadline: {seen}")
        assert proc.poll() is None, f"index finished too early to be killed: {seen}"
        children = _children(proc.pid)  # the chunking worker, spawned for this many files
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert f"indexed 64/{GENERATED_FILES} files" in "".join(seen)
    # no process of the killed run lives on (the worker ends with its parent)
    assert children, "the run had no chunking worker to check"
    gone_by = time.monotonic() + 20
    while time.monotonic() < gone_by and any(_alive(pid) for pid in children):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in children), f"orphaned worker processes: {children}"

    # the previous generation is still the live one and answers exactly as before
    assert IndexDir(idx).current() == live
    assert len(list(idx.glob("gen-*"))) == 2  # the half-written generation is still on disk
    assert answers(idx, tmp_path) == before

    # a re-run finishes, removes the half-written generation, and equals a clean build
    rerun = cg("index", repo, "--index-dir", idx)
    assert rerun.exit_code == 0, rerun.output
    assert_no_traceback(rerun)
    assert [p.name for p in idx.glob("gen-*")] == [current_generation(idx).name]
    clean = tmp_path / "clean"
    assert cg("index", repo, "--index-dir", clean).exit_code == 0
    assert bm25_records(idx) == bm25_records(clean)
    assert manifest_of(idx).files == manifest_of(clean).files
    assert manifest_of(idx).chunk_count == manifest_of(clean).chunk_count
    found = cg("search", f"generated_{GENERATED_FILES - 1}", "-k", "1", "--index-dir", idx)
    assert found.stdout.startswith(f"generated/mod_{GENERATED_FILES - 1:03d}.py:"), found.stdout
