"""End-to-end indexing with the real embedding model, real Chroma on disk and the BM25 store."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.index.manifest import Manifest
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
from tests.conftest import PLANTED_SECRETS

SECRETS = (*PLANTED_SECRETS, "SECRET_OUTPUT", "hidden_function")


def snapshot(index_dir: Path) -> dict:
    """Every search-visible record in both stores: id -> (content, meta, rounded embedding)."""
    from haystack_integrations.document_stores.chroma import ChromaDocumentStore

    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    gen = IndexDir(index_dir).current()
    bm25 = {
        d.id: (d.content, d.meta)
        for d in SQLiteBM25DocumentStore(persist_path=str(gen / "bm25.sqlite3")).filter_documents()
    }
    chroma_store = ChromaDocumentStore(
        persist_path=str(gen / "chroma"), collection_name="codeground", distance_function="cosine"
    )
    chroma = {
        d.id: (d.content, d.meta, tuple(round(x, 4) for x in d.embedding))
        for d in chroma_store.filter_documents()
    }
    return {"bm25": bm25, "chroma": chroma}


def index(repo: Path, index_dir: Path, **kwargs):
    return run_index(repo, index_dir, DEFAULT_INDEX_PIPELINE, **kwargs)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One full index of the sample repository, shared by the read-only tests."""
    from tests.conftest import make_sample_repo

    base = tmp_path_factory.mktemp("built")
    repo = make_sample_repo(base / "repo")
    result = index(repo, base / "idx")
    return repo, base / "idx", result


def test_default_index_has_every_source_type(built):
    _, _, result = built
    assert set(result.records_by_type) == {"api", "impl", "module", "docs", "notebook", "text"}
    assert result.full and result.reason == "no previous index"


def test_secrets_binaries_and_ignored_files_never_reach_either_store(built):
    _, index_dir, result = built
    gen = IndexDir(index_dir).current()
    blobs = [p.read_bytes() for p in gen.rglob("*") if p.is_file()]
    for secret in SECRETS:
        assert not any(secret.encode() in blob for blob in blobs), secret
    skipped = dict((p, r) for p, r in result.walk["skipped_files"])
    assert skipped[".env"] == "secret" and skipped["server.pem"] == "secret"
    assert skipped["pkg/fake.py"] == "binary"


def test_syntax_error_file_is_indexed_as_text_and_automodule_page_yields_no_records(built):
    _, index_dir, result = built
    assert result.walk["unparsed"] == {"pkg/broken.py": "syntax_error_as_text"}
    manifest = Manifest.load(IndexDir(index_dir).current())
    assert manifest.files["pkg/broken.py"].ids == ["pkg/broken.py:broken.py:1"]
    assert manifest.files["docs/api.rst"].ids == []
    assert manifest.files["pkg/trainer.py"].ids


def test_manifest_records_embedder_settings_hashes_and_count(built):
    repo, index_dir, result = built
    manifest = Manifest.load(IndexDir(index_dir).current())
    assert manifest.embedder == "sentence-transformers/all-MiniLM-L6-v2"
    assert manifest.embedder_kind == "StaticEmbedder"
    export = manifest.embedder_export  # the table that embedded, named by its hash
    assert export["backend"] == "model2vec" and len(export["weights_sha256"]) == 64
    assert manifest.embedding_dim == 256  # the static model distilled from MiniLM (dims: 256 in index.yaml)
    assert manifest.chunk_count == result.chunk_count == sum(len(e.ids) for e in manifest.files.values())
    assert manifest.root == str(repo.resolve())
    import hashlib

    sha = hashlib.sha256((repo / "pkg" / "trainer.py").read_bytes()).hexdigest()
    assert manifest.files["pkg/trainer.py"].sha256 == sha


def test_stored_ranges_slice_back_to_the_file(built):
    repo, index_dir, _ = built
    snap = snapshot(index_dir)
    # the dense store holds a vector of every record, raw implementations included (index.yaml)
    assert snap["chroma"].keys() == snap["bm25"].keys()
    assert any(meta["source_type"] == "impl" for _, meta in snap["bm25"].values())
    assert Manifest.load(IndexDir(index_dir).current()).store_counts == {}  # no partial store to count
    for doc_id, (content, meta) in snap["bm25"].items():
        if meta["source_type"] == "notebook":
            continue
        text = (repo / meta["file_path"]).read_text(encoding="utf-8")
        assert text[meta["start_char"] : meta["end_char"]] == content, doc_id
        assert doc_id == f"{meta['file_path']}:{meta['symbol']}:{meta['start_line']}"


def test_unchanged_repository_is_up_to_date_without_new_generation(built):
    repo, index_dir, _ = built
    before = IndexDir(index_dir).current()
    again = index(repo, index_dir)
    assert again.up_to_date and IndexDir(index_dir).current() == before


def test_incremental_run_equals_full_rebuild_and_drops_deleted_files(sample_repo, tmp_path):
    inc_dir, full_dir = tmp_path / "inc", tmp_path / "full"
    index(sample_repo, inc_dir)
    trainer = sample_repo / "pkg" / "trainer.py"
    trainer.write_text(
        trainer.read_text().replace("DEFAULT_EPOCHS = 3", "DEFAULT_EPOCHS = 5\nEXTRA = 1")
        + "\n\ndef added_function(x):\n    return x\n"
    )
    (sample_repo / "NOTES.txt").unlink()
    (sample_repo / "docs" / "new.md").write_text("# New page\n\nFresh text.\n")
    result = index(sample_repo, inc_dir)
    assert not result.full
    assert result.processed_files == 2 and result.deleted_files == 1
    index(sample_repo, full_dir)
    inc, full = snapshot(inc_dir), snapshot(full_dir)
    assert inc == full
    counts = [Manifest.load(IndexDir(d).current()).store_counts for d in (inc_dir, full_dir)]
    assert counts[0] == counts[1] == {} and inc["chroma"].keys() == inc["bm25"].keys()
    assert not any(k.startswith("NOTES.txt:") for k in inc["bm25"])
    assert "pkg/trainer.py:added_function:" in " ".join(inc["bm25"])
    assert len(list((inc_dir).glob("gen-*"))) == 1  # the replaced generation is gone


def _embedded_texts(monkeypatch) -> list[int]:
    """How many texts the static model is asked to embed, per call, from now on."""
    from model2vec import StaticModel

    calls: list[int] = []
    real = StaticModel.encode

    def counting(self, sentences, *args, **kwargs):
        calls.append(len(sentences))
        return real(self, sentences, *args, **kwargs)

    monkeypatch.setattr(StaticModel, "encode", counting)
    return calls


def test_a_changed_file_keeps_its_unchanged_records_unembedded(sample_repo, tmp_path, monkeypatch):
    inc_dir, full_dir = tmp_path / "inc", tmp_path / "full"
    index(sample_repo, inc_dir)
    before = Manifest.load(IndexDir(inc_dir).current()).files["pkg/trainer.py"].ids
    trainer = sample_repo / "pkg" / "trainer.py"
    added = '\n\ndef appended_function(x):\n    """Return x."""\n    return x\n'  # api + impl records
    trainer.write_text(trainer.read_text() + added)
    embedded = _embedded_texts(monkeypatch)
    result = index(sample_repo, inc_dir)
    after = Manifest.load(IndexDir(inc_dir).current()).files["pkg/trainer.py"].ids
    kept = [i for i in before if i in after]
    assert len(kept) >= 3 and result.unchanged_records == len(kept)
    from codeground.app.index.embedder_probe import PROBES

    # the embedder's probe texts (the index's vectors must stay comparable), then only the new
    # function's two records (its signature and docstring, its body)
    assert embedded == [len(PROBES), 2]
    assert result.written_records == len(after) - len(kept)
    monkeypatch.undo()
    index(sample_repo, full_dir)
    assert snapshot(inc_dir) == snapshot(full_dir)


def test_records_whose_lines_moved_are_written_anew(sample_repo, tmp_path):
    inc_dir, full_dir = tmp_path / "inc", tmp_path / "full"
    index(sample_repo, inc_dir)
    trainer = sample_repo / "pkg" / "trainer.py"
    trainer.write_text("# a new first line moves every record below it\n" + trainer.read_text())
    result = index(sample_repo, inc_dir)
    assert result.unchanged_records == 0 and result.written_records == result.removed_records > 0
    index(sample_repo, full_dir)
    assert snapshot(inc_dir) == snapshot(full_dir)


def test_full_flag_and_changed_settings_force_a_full_rebuild(sample_repo, tmp_path):
    index_dir = tmp_path / "idx"
    index(sample_repo, index_dir)
    assert index(sample_repo, index_dir, full=True).reason == "--full"
    changed = tmp_path / "index.yaml"
    changed.write_text(DEFAULT_INDEX_PIPELINE.read_text().replace("max_chars: 2000", "max_chars: 1500"))
    result = run_index(sample_repo, index_dir, changed)
    assert result.full and result.reason == "indexing settings changed"


def test_interrupted_index_leaves_previous_index_usable(sample_repo, tmp_path, monkeypatch):
    index_dir = tmp_path / "idx"
    index(sample_repo, index_dir)
    before_gen = IndexDir(index_dir).current()
    before = snapshot(index_dir)
    (sample_repo / "docs" / "guide.md").write_text("# Changed\n\nNew content.\n")

    from haystack import Pipeline

    def boom(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Pipeline, "run", boom)
    with pytest.raises(KeyboardInterrupt):
        index(sample_repo, index_dir)
    monkeypatch.undo()
    assert IndexDir(index_dir).current() == before_gen
    assert snapshot(index_dir) == before
    assert [p.name for p in index_dir.glob("gen-*")] == [before_gen.name]
    result = index(sample_repo, index_dir)
    assert result.processed_files == 1
    assert any("Changed" in c for c, _ in snapshot(index_dir)["bm25"].values())


def test_second_concurrent_index_run_is_refused(sample_repo, tmp_path):
    location = IndexDir(tmp_path / "idx")
    with location.lock():
        with pytest.raises(CodegroundError, match="another `codeground index`"):
            index(sample_repo, tmp_path / "idx")


def test_chunking_in_a_worker_process_gives_the_index_of_one_process(built, tmp_path, monkeypatch):
    """Two cores: the chunk stage may run ahead in a worker; records, order, failures must not change."""
    import codeground.app.index.indexing as indexing

    repo, index_dir, in_process = built
    monkeypatch.setattr(indexing, "CHUNK_WORKER_MIN_FILES", 0)
    monkeypatch.setattr(indexing, "BATCH_FILES", 3)  # several batches in flight
    in_worker = index(repo, tmp_path / "idx")
    import multiprocessing

    assert not multiprocessing.active_children()  # the worker is gone when the run returns
    assert in_worker.written_records == in_process.written_records
    assert in_worker.walk["unparsed"] == in_process.walk["unparsed"]
    ours = Manifest.load(IndexDir(tmp_path / "idx").current())
    theirs = Manifest.load(IndexDir(index_dir).current())
    assert {p: e.ids for p, e in ours.files.items()} == {p: e.ids for p, e in theirs.files.items()}
    assert snapshot(tmp_path / "idx") == snapshot(index_dir)


def test_an_index_run_frees_the_contents_of_the_files_it_has_written(tmp_path, monkeypatch):
    """Memory: the walk reads a repository's files, and each batch's contents are freed once the batch
    is written, so that the end of a run (the postings' merge) does not also hold every file (a
    repository of 37k files held 261 MB of them through the whole run)."""
    import gc
    import weakref

    import codeground.app.index.indexing as indexing
    from codeground.app.index.index_stages import _ChunkStage
    from codeground.components.walker import RepositoryWalker

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    for i in range(20):
        source = f'def f{i}(x):\n    """Return x times {i}."""\n    return x * {i}\n'
        (repo / "pkg" / f"m{i}.py").write_text(source)
    monkeypatch.setattr(indexing, "BATCH_FILES", 3)
    walked: list[weakref.ref] = []
    held: list[int] = []
    walk, chunk = RepositoryWalker.run, _ChunkStage.run

    def recording_walk(self, root, **kwargs):
        out = walk(self, root, **kwargs)
        walked.extend(weakref.ref(f) for f in out["files"])
        return out

    def counting_chunk(self, files):
        gc.collect()
        held.append(sum(ref() is not None for ref in walked))
        return chunk(self, files)

    monkeypatch.setattr(RepositoryWalker, "run", recording_walk)
    monkeypatch.setattr(_ChunkStage, "run", counting_chunk)
    result = index(repo, tmp_path / "idx")
    assert len(walked) == result.processed_files == 20 and len(held) == 7  # seven batches
    # when batch k is chunked, the files of the batches already written are freed (but the last one,
    # still in the loop's hands): only the files not yet written and that batch are held
    assert all(n <= (20 - 3 * k) + 3 for k, n in enumerate(held)), held
    assert held[-1] <= 2 * 3
    assert result.chunk_count > 20


def test_a_chunker_failure_in_the_worker_is_the_same_one_line_naming_the_component(monkeypatch):
    """The worker sends back the line a failure in this process would give (exceptions do not pickle)."""
    from haystack.dataclasses import ByteStream

    import codeground.app.index.index_stages as index_stages
    from codeground.app.index.index_stages import ChunkStageError, IndexStages
    from codeground.app.index.indexing import _failure
    from codeground.app.pipeline.loader import read_pipeline_dict, resolve
    from codeground.components.chunkers import oversize

    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(oversize.OversizeSplitter, "_merge_blank", staticmethod(broken))
    stages = IndexStages(resolve(read_pipeline_dict(DEFAULT_INDEX_PIPELINE), index_dir="/unused"))
    monkeypatch.setattr(index_stages, "_WORKER_STAGE", index_stages._ChunkStage(*stages._stage_args))
    long_page = ("# Guide\n\n" + "a line of words\n" * 400).encode()  # a section the splitter must cut
    source = ByteStream(long_page, meta={"file_path": "docs/guide.md"}, mime_type="text/markdown")
    with pytest.raises(ChunkStageError) as raised:
        index_stages._chunk_in_worker([source])
    line = _failure("indexing failed", raised.value)
    assert line.startswith("indexing failed in 'splitter' (OversizeSplitter): ") and "disk on fire" in line
    assert line.endswith("nothing in the index was changed") and "\n" not in line


def test_a_rebuild_with_the_cached_minilm_pipeline_embeds_no_text_twice(sample_repo, tmp_path, monkeypatch):
    """index_minilm.yaml keeps vectors on disk: a --full rebuild (or a second clone) embeds nothing."""
    import shutil

    import yaml

    from codeground.app.index.embedder_probe import PROBES
    from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
    from codeground.components.embedders.openvino_document import OpenVINODocumentEmbedder

    data = read_pipeline_dict(PIPELINES_DIR / "index_minilm.yaml")
    cache = tmp_path / "embeddings.sqlite"
    pipeline = tmp_path / "index_minilm.yaml"
    data["components"]["embedder"]["init_parameters"]["cache_path"] = str(cache)
    pipeline.write_text(yaml.safe_dump(data))
    embedded: list[int] = []
    real_run = OpenVINODocumentEmbedder.run

    def counting(self, documents):
        embedded.append(len(documents))
        return real_run(self, documents=documents)

    monkeypatch.setattr(OpenVINODocumentEmbedder, "run", counting)
    first = run_index(sample_repo, tmp_path / "idx", pipeline)
    assert sum(embedded) == first.chunk_count + len(PROBES) > len(PROBES)  # records + the probe texts
    embedded.clear()
    clone = tmp_path / "clone"
    shutil.copytree(sample_repo, clone)
    second = run_index(clone, tmp_path / "idx2", pipeline, full=True)
    assert second.chunk_count == first.chunk_count and sum(embedded) == 0


def test_a_lost_chunking_worker_means_chunking_here_with_nothing_lost(built, tmp_path, monkeypatch):
    """The worker dies (killed, out of memory, cannot start): the batches it owed are chunked here."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    import codeground.app.index.index_stages as index_stages
    import codeground.app.index.indexing as indexing

    class DeadPool:
        def submit(self, fn, *args):
            future: Future = Future()
            future.set_exception(BrokenProcessPool("worker killed"))
            return future

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    repo, index_dir, in_process = built
    monkeypatch.setattr(indexing, "CHUNK_WORKER_MIN_FILES", 0)
    monkeypatch.setattr(indexing, "BATCH_FILES", 3)
    monkeypatch.setattr(index_stages, "_start_worker", lambda data: DeadPool())
    result = index(repo, tmp_path / "idx")
    assert result.written_records == in_process.written_records
    assert snapshot(tmp_path / "idx") == snapshot(index_dir)


def test_a_dense_store_missing_some_of_its_records_is_refused_as_stale(sample_repo, tmp_path):
    from haystack_integrations.document_stores.chroma import ChromaDocumentStore

    from codeground.app.errors import CodegroundError
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import QueryEngine

    index(sample_repo, tmp_path / "idx")
    gen = IndexDir(tmp_path / "idx").current()
    dense = ChromaDocumentStore(persist_path=str(gen / "chroma"), collection_name="codeground")
    one = dense.filter_documents()[0].id
    dense.delete_documents([one])
    with pytest.raises(CodegroundError, match="stale index.*'dense'"):
        QueryEngine(tmp_path / "idx", PIPELINES_DIR / "query.yaml").search("Trainer fit")


@pytest.mark.parametrize(
    ("module", "version"),
    [
        ("codeground.components.identifiers", "TOKENS_VERSION"),
        ("codeground.components.records", "RECORDS_VERSION"),
    ],
    ids=["token rules", "chunking rules"],
)
def test_an_index_made_under_other_token_or_chunking_rules_is_rebuilt_in_full(
    sample_repo, tmp_path, monkeypatch, module, version
):
    import importlib

    rules = importlib.import_module(module)
    index_dir = tmp_path / "idx"
    index(sample_repo, index_dir)
    assert index(sample_repo, index_dir).up_to_date
    monkeypatch.setattr(rules, version, getattr(rules, version) + 1)
    result = index(sample_repo, index_dir)
    assert result.full and result.reason == "indexing settings changed"


def test_ctrl_c_during_indexing_is_one_line_from_the_index_run_and_none_from_its_chunking_worker(tmp_path):
    """A terminal sends Ctrl-C's SIGINT to the whole process group, the chunking worker included: it
    starts with SIGINT ignored, so the index run alone answers (one line, exit 130, the worker
    stopped) instead of the worker also printing a KeyboardInterrupt traceback."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    repo = tmp_path / "repo"
    body = "".join(f"def function_{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
    for n in range(1200):  # chunking takes seconds, so the signal comes while the worker runs
        (repo / f"pkg{n // 100}").mkdir(parents=True, exist_ok=True)
        (repo / f"pkg{n // 100}" / f"module_{n}.py").write_text(body)
    proc = subprocess.Popen(
        [sys.executable, "-m", "codeground.app.cli", "index", str(repo), "--index-dir", str(tmp_path / "ix")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job has
        preexec_fn=_sigint_delivered,  # wherever pytest runs
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not any(line.startswith("indexed ") for line in lines):  # the worker has chunked a batch
        assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
        time.sleep(0.02)
    workers = [pid for pid, cmdline in _running_in_group(proc.pid) if "multiprocessing.spawn" in cmdline]
    assert workers and all(_ignores_sigint(pid) for pid in workers), workers
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    reader.join(10)
    assert lines[-1] == "error: interrupted; the previous index is unchanged\n", "".join(lines)
    assert not any("Traceback" in line or "KeyboardInterrupt" in line for line in lines), "".join(lines)
    assert not (tmp_path / "ix" / "CURRENT").exists()  # nothing half-made became the index
    # and nothing of the run is left running in its group (the resource tracker ends on its own)
    deadline = time.monotonic() + 20
    while _running_in_group(proc.pid):
        assert time.monotonic() < deadline, _running_in_group(proc.pid)
        time.sleep(0.1)


def _sigint_delivered() -> None:
    """In the child before exec: SIGINT neither ignored nor blocked, as in a terminal's foreground job."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _running_in_group(group: int) -> list[tuple[int, str]]:
    """``(pid, command line)`` of the processes of process group ``group`` that are not zombies."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_text().replace("\0", " ")
        except OSError:
            continue
        state, _, pgrp = text.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == group and state != "Z":
            found.append((int(stat.parent.name), cmdline))
    return found


def _ignores_sigint(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    ignored = next(line for line in status if line.startswith("SigIgn:"))
    return bool(int(ignored.split()[1], 16) & (1 << (2 - 1)))  # bit n-1 stands for signal n; SIGINT is 2


def test_an_index_inside_a_git_checkout_never_shows_in_git_status(tmp_path):
    """``<repo>/.codeground`` holds a ``.gitignore`` of ``*``: ``git status`` and ``git add -A`` leave the
    index out (it had shown as untracked, a ``git add -A`` away from committing the stores); a
    ``.gitignore`` the user wrote there is kept as it is."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    from codeground.app.index.index_dir import default_index_dir

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def answer():\n    return 42\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    index(repo, default_index_dir(repo))
    status = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True
    )
    assert status.stdout == "?? app.py\n"
    subprocess.run([*git, "add", "-A"], check=True)
    staged = subprocess.run([*git, "diff", "--cached", "--name-only"], capture_output=True, text=True)
    assert staged.stdout == "app.py\n"
    (default_index_dir(repo) / "prompt.md").write_text("Answer briefly.\n")  # a repository's own prompt
    status = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True
    )
    assert status.stdout == "A  app.py\n?? .codeground/prompt.md\n"
    own = default_index_dir(repo) / ".gitignore"
    own.write_text("# mine\n*\n")
    index(repo, default_index_dir(repo))
    assert own.read_text() == "# mine\n*\n"


def test_an_existing_folder_given_as_the_index_folder_gets_no_gitignore(tmp_path):
    """``--index-dir docs/out`` (a folder of the user's, not named .codeground) is not hidden from git;
    a folder the run creates is."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def answer():\n    return 42\n")
    theirs = tmp_path / "out"
    theirs.mkdir()
    (theirs / "report.txt").write_text("mine\n")
    index(repo, theirs)
    assert not (theirs / ".gitignore").exists()
    (tmp_path / "empty").mkdir()
    index(repo, tmp_path / "empty")  # an empty folder holds nothing to hide
    assert (tmp_path / "empty" / ".gitignore").is_file()
    index(repo, tmp_path / "made")
    assert (tmp_path / "made" / ".gitignore").read_text().endswith("*\n!prompt.md\n")


def test_an_index_of_format_3_is_searched_as_it_is_and_updated_without_a_rebuild(built, tmp_path):
    """Format 4 only moved the per-file entries out of manifest.json into files.json (a search never
    reads them); format 3's stores are format 4's, so such an index keeps answering after an update of
    codeground, and its next incremental run writes format 4 instead of rebuilding everything."""
    import json
    import shutil

    from codeground.app.index.live import open_index
    from codeground.app.index.manifest import FILES, MANIFEST
    from tests.reliability.helpers import search_file

    repo, clean, _ = built
    repo_copy, idx = tmp_path / "repo", tmp_path / "idx"
    shutil.copytree(repo, repo_copy)
    shutil.copytree(clean, idx)
    gen = IndexDir(idx).current()
    raw = json.loads((gen / MANIFEST).read_text())
    raw.update(root=str(repo_copy.resolve()), format=3, files=json.loads((gen / FILES).read_text()))
    (gen / MANIFEST).write_text(json.dumps(raw))
    (gen / FILES).unlink()
    expected = Manifest.load(IndexDir(clean).current(), with_files=True).files

    assert open_index(idx)[1].files == expected
    questions = ["How do I fit a Trainer?", "install with pip"]
    assert search_file(idx, questions, tmp_path / "a") == search_file(clean, questions, tmp_path / "b")

    (repo_copy / "docs" / "added.md").write_text("# Added page\n\nWritten after the update.\n")
    result = index(repo_copy, idx)
    assert not result.full and result.reason == "incremental" and result.processed_files == 1
    gen = IndexDir(idx).current()
    assert "files" not in json.loads((gen / MANIFEST).read_text())
    after = Manifest.load(gen)
    assert after.format == 4 and set(after.files) == set(expected) | {"docs/added.md"}
