"""The dense store on a real Chroma server (`chroma run`, started and stopped by PID here):
index into it, query through it, update it incrementally, and drop a replaced generation's
collection."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from tests.conftest import FIXTURES, closed_port

CHROMA = str(Path(sys.executable).parent / "chroma")


@pytest.fixture
def chroma_server(tmp_path, monkeypatch):
    import chromadb
    from chromadb.config import Settings

    port = closed_port()
    log = open(tmp_path / "chroma.log", "w")
    proc = subprocess.Popen(
        [CHROMA, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:  # whatever happens, the server process is stopped
        deadline = time.monotonic() + 60
        while True:
            try:  # the client connects when made
                client = chromadb.HttpClient(
                    host="127.0.0.1", port=port, settings=Settings(anonymized_telemetry=False)
                )
                break
            except Exception:  # noqa: BLE001 - not up yet
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"chroma run did not start: {(tmp_path / 'chroma.log').read_text()[-1500:]}")
                time.sleep(0.3)
        monkeypatch.setenv("CODEGROUND_CHROMA_URL", f"http://127.0.0.1:{port}")
        yield client
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _collections(client) -> dict[str, int]:
    return {c.name: client.get_collection(c.name).count() for c in client.list_collections()}


def test_index_query_update_and_drop_through_a_chroma_server(chroma_server, tmp_path):
    repo, idx = tmp_path / "repo", tmp_path / "idx"
    shutil.copytree(FIXTURES / "languages", repo)
    first = run_index(repo, idx, PIPELINES_DIR / "index_chroma_server.yaml")
    gen1 = IndexDir(idx).current()
    assert not (gen1 / "chroma").exists()  # the vectors are on the server, one collection per generation
    held = _collections(chroma_server)
    assert (
        list(held) == [f"codeground-{gen1.name}"] and held[f"codeground-{gen1.name}"] == first.chunk_count
    )  # a vector per record, as index.yaml embeds

    reader = QueryEngine(idx, PIPELINES_DIR / "query_chroma_server.yaml")
    assert reader.search("What does Server.Start return?", k=3).documents[0].meta["symbol"] == "Server.Start"

    with (repo / "server.go").open("a") as fh:
        fh.write("\n// Stop stops the server.\nfunc (s *Server) Stop() error {\n\treturn nil\n}\n")
    second = run_index(repo, idx, PIPELINES_DIR / "index_chroma_server.yaml")
    gen2 = IndexDir(idx).current()
    assert (
        not second.full and second.written_records < second.chunk_count
    )  # incremental: seeded, then updated
    held = _collections(chroma_server)
    # Stop adds its records, each with its vector
    assert held[f"codeground-{gen2.name}"] == second.chunk_count > first.chunk_count
    fresh = QueryEngine(idx, PIPELINES_DIR / "query_chroma_server.yaml")
    assert fresh.search("What does Server.Stop do?", k=3).documents[0].meta["symbol"] == "Server.Stop"

    del reader  # the last reader of the replaced generation lets go: its folder and collection go
    gc.collect()
    assert not gen1.exists() and list(_collections(chroma_server)) == [f"codeground-{gen2.name}"]


def test_removing_a_generation_never_drops_the_collection_of_the_one_it_was_copied_from(
    chroma_server, tmp_path
):
    from codeground.components.stores.server_chroma import REGISTRY_FILE, drop_registered

    repo, idx = tmp_path / "repo", tmp_path / "idx"
    shutil.copytree(FIXTURES / "languages", repo)
    run_index(repo, idx, PIPELINES_DIR / "index_chroma_server.yaml")
    live = IndexDir(idx).current()
    copy = IndexDir(idx).new_generation(copy_from=live)  # what an incremental run starts from
    assert (copy / REGISTRY_FILE).is_file()
    drop_registered(copy)  # e.g. the run failed and its half-written generation is removed
    assert f"codeground-{live.name}" in _collections(chroma_server)


def test_a_chroma_server_that_is_down_is_one_line(tmp_path, monkeypatch):
    from codeground.app.errors import CodegroundError

    monkeypatch.setenv("CODEGROUND_CHROMA_URL", f"http://127.0.0.1:{closed_port()}")
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    with pytest.raises(CodegroundError) as info:
        run_index(repo, tmp_path / "idx", PIPELINES_DIR / "index_chroma_server.yaml")
    assert "\n" not in str(info.value) and "Chroma server" in str(info.value)
    assert IndexDir(tmp_path / "idx").current() is None


def test_an_incremental_run_while_the_server_is_down_says_so_and_keeps_the_index(
    chroma_server, tmp_path, monkeypatch
):
    """Not "previous index unreadable", then a full rebuild announced for every file and failing at
    the end: the server that does not answer is named before anything is chunked, the live
    generation stays, and no half-made one is left."""
    from codeground.app.errors import CodegroundError
    from codeground.app.index.store_counts import SERVER_DOWN_FIX

    repo, idx = tmp_path / "repo", tmp_path / "idx"
    shutil.copytree(FIXTURES / "languages", repo)
    run_index(repo, idx, PIPELINES_DIR / "index_chroma_server.yaml")
    live = IndexDir(idx).current()
    with (repo / "server.go").open("a") as fh:
        fh.write("\n// Stop stops the server.\nfunc (s *Server) Stop() error {\n\treturn nil\n}\n")
    down = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("CODEGROUND_CHROMA_URL", down)
    walked = []
    with pytest.raises(CodegroundError) as info:
        run_index(
            repo, idx, PIPELINES_DIR / "index_chroma_server.yaml", on_walk=lambda r, n: walked.append(n)
        )
    said = str(info.value)
    assert f"on the server at {down} cannot be read" in said and SERVER_DOWN_FIX in said, said
    assert walked == []  # refused before the run announced what it would index
    assert IndexDir(idx).current() == live
    assert sorted(p.name for p in idx.glob("gen-*")) == [live.name]
