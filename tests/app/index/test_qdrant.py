"""The Qdrant pair (pipelines/index_qdrant.yaml + query_qdrant.yaml) in Qdrant's local mode: one
collection per generation holding every record with its dense and sparse vectors, the same
records, answers and index life cycle as the default pipelines."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest
from haystack import Document

from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.index.manifest import Manifest
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from codeground.components.stores.qdrant import CodegroundQdrantDocumentStore
from tests.conftest import FIXTURES

INDEX = PIPELINES_DIR / "index_qdrant.yaml"
QUERY = PIPELINES_DIR / "query_qdrant.yaml"


def _store(gen: Path) -> CodegroundQdrantDocumentStore:
    return CodegroundQdrantDocumentStore(
        path=str(gen / "qdrant"),
        index="codeground",
        embedding_dim=256,
        use_sparse_embeddings=True,
        sparse_idf=True,
        progress_bar=False,
    )


def _points(gen: Path) -> dict[str, Document]:
    store = _store(gen)
    try:
        return {d.id: d for d in store.filter_documents()}
    finally:
        store.close()


@pytest.fixture
def languages_repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    return repo


def test_one_collection_holds_every_record_with_a_sparse_and_a_dense_vector(
    languages_repo, tmp_path
):
    result = run_index(languages_repo, tmp_path / "idx", INDEX)
    gen = IndexDir(tmp_path / "idx").current()
    store = _store(gen)
    store.count_documents()  # opens the client
    try:
        points = store._client.scroll("codeground", limit=10_000, with_vectors=True, with_payload=True)[0]
    finally:
        store.close()
    assert len(points) == result.chunk_count and not (gen / "chroma").exists()
    assert all("text-sparse" in p.vector for p in points)
    assert all("text-dense" in p.vector for p in points)  # raw code too, as index.yaml embeds it
    assert "impl" in {p.payload["meta"]["source_type"] for p in points}


def test_the_qdrant_pair_finds_the_default_pairs_first_definition_in_its_top_2_and_most_of_its_top_3(
    languages_repo, tmp_path
):
    # Qdrant's IDF is BM25's, not BM25L's, and the length pivot is fixed (sparse_terms.py): on a corpus
    # of 58 records (mean length far below the pivot) that swaps near-ties, e.g. `Shape.area` in
    # shapes.rs and `Circle.area` in shapes.ts (fused 1.55 / 1.41 against 1.42 / 1.53); on vLLM every
    # R@k is the same (docs/qdrant.md). So: the default's first definition is among the Qdrant pair's
    # first two.
    run_index(languages_repo, tmp_path / "default", DEFAULT_INDEX_PIPELINE)
    run_index(languages_repo, tmp_path / "qdrant", INDEX)
    default = QueryEngine(tmp_path / "default", PIPELINES_DIR / "query.yaml")
    qdrant = QueryEngine(tmp_path / "qdrant", QUERY)
    questions = [
        "What does Server.Start return?",
        "How is the area of a shape computed?",
        "which interface do shapes implement",
        "Circle constructor radius",
        "rectangle width height",
        "how do I start the server",
    ]
    for question in questions:
        ours = [(d.meta["file_path"], d.meta["symbol"]) for d in qdrant.search(question, k=3).documents]
        theirs = [(d.meta["file_path"], d.meta["symbol"]) for d in default.search(question, k=3).documents]
        assert theirs[0] in ours[:2] and len(set(ours) & set(theirs)) >= 2, question


def test_incremental_update_deletion_and_generation_switch(languages_repo, tmp_path):
    idx = tmp_path / "idx"
    run_index(languages_repo, idx, INDEX)
    gen1 = IndexDir(idx).current()
    reader = QueryEngine(idx, QUERY)
    assert reader.search("What does Server.Start return?", k=3).documents[0].meta["symbol"] == "Server.Start"

    with (languages_repo / "server.go").open("a") as fh:
        fh.write("\n// Stop stops the server.\nfunc (s *Server) Stop() error {\n\treturn nil\n}\n")
    (languages_repo / "shapes.rs").unlink()
    second = run_index(languages_repo, idx, INDEX)
    gen2 = IndexDir(idx).current()
    assert gen2 != gen1 and not second.full and second.deleted_files == 1
    assert 0 < second.written_records < second.chunk_count  # only the changed file's records
    points = _points(gen2)
    assert len(points) == second.chunk_count == Manifest.load(gen2).chunk_count
    assert not any(d.meta["file_path"] == "shapes.rs" for d in points.values())

    fresh = QueryEngine(idx, QUERY)
    assert fresh.search("What does Server.Stop do?", k=3).documents[0].meta["symbol"] == "Server.Stop"
    # the old reader still answers from its generation until it lets go; then that folder goes
    assert reader.search("What does Server.Stop do?", k=3).documents[0].meta["symbol"] != "Server.Stop"
    del reader
    gc.collect()
    assert not gen1.exists() and len(list(idx.glob("gen-*"))) == 1


def test_an_incremental_run_equals_a_full_build(languages_repo, tmp_path):
    run_index(languages_repo, tmp_path / "inc", INDEX)
    (languages_repo / "shapes.ts").write_text(
        (languages_repo / "shapes.ts").read_text()
        + "\nexport function perimeter(r: number) { return 2 * r; }\n"
    )
    run_index(languages_repo, tmp_path / "inc", INDEX)
    run_index(languages_repo, tmp_path / "full", INDEX)
    inc, full = (_points(IndexDir(tmp_path / d).current()) for d in ("inc", "full"))
    assert inc.keys() == full.keys()
    assert all(inc[i].content == full[i].content and inc[i].meta == full[i].meta for i in inc)


def test_a_collection_missing_records_is_refused_as_stale_and_index_rebuilds_it(languages_repo, tmp_path):
    idx = tmp_path / "idx"
    run_index(languages_repo, idx, INDEX)
    gen = IndexDir(idx).current()
    store = _store(gen)
    store.delete_documents([next(iter(d.id for d in store.filter_documents()))])
    store.close()
    with pytest.raises(CodegroundError, match="stale index") as info:
        QueryEngine(idx, QUERY).search("Server Start")
    assert "\n" not in str(info.value)
    again = run_index(languages_repo, idx, INDEX, full=True)  # the command the refusal names
    assert again.full and again.chunk_count == len(_points(IndexDir(idx).current()))
    QueryEngine(idx, QUERY).search("Server Start")


def test_compare_and_bench_leave_the_qdrant_query_out_over_the_default_index():
    from codeground.app.bench.eval_runner import default_variants

    assert QUERY not in default_variants()
    assert QUERY in default_variants(INDEX)


def test_symbol_lookup_names_full_symbols_and_last_parts_but_not_substrings():
    from codeground.components.retrievers.symbol_lookup import SymbolRetriever

    store = CodegroundQdrantDocumentStore(location=":memory:", embedding_dim=4, use_sparse_embeddings=True)
    docs = [
        Document(
            id="a",
            content="def fit(self): ...",
            meta={"symbol": "Trainer.fit", "source_type": "impl", "file_path": "t.py", "start_line": 3},
        ),
        Document(
            id="b",
            content="def fitness(): ...",
            meta={"symbol": "fitness", "source_type": "impl", "file_path": "f.py", "start_line": 1},
        ),
        Document(
            id="c",
            content="class Trainer: ...",
            meta={"symbol": "Trainer", "source_type": "api", "file_path": "t.py", "start_line": 1},
        ),
    ]
    store.write_documents(docs)
    assert sorted(r[0] for r in store.records_by_symbol(["fit"], [])) == ["a"]
    assert sorted(r[0] for r in store.records_by_symbol(["Trainer", "Trainer.fit"], [])) == ["a", "c"]
    by_id = store.filter_documents({"field": "id", "operator": "in", "value": ["c", "missing"]})
    assert [(d.id, d.content) for d in by_id] == [("c", "class Trainer: ...")]  # a lookup, not a scan
    found = SymbolRetriever(document_store=store).run(query="What does `Trainer.fit` return?")
    assert [d.id for d in found["named"]] == ["a"]


def test_stores_of_one_pipeline_share_the_local_folder_and_let_go_of_it_when_all_close(tmp_path):
    import qdrant_client

    first, second = _store(tmp_path), _store(tmp_path)
    first.write_documents([Document(id="x", content="hello")])
    assert second.count_documents() == 1  # a second client on the folder would be refused by Qdrant
    first.close()
    assert second.count_documents() == 1  # still open for the other
    second.close()
    other = qdrant_client.QdrantClient(path=str(tmp_path / "qdrant"))  # the folder's lock is free
    other.close()


def test_on_a_server_the_collection_is_named_per_repository_and_generation_and_round_trips(monkeypatch):
    monkeypatch.setenv("QDRANT_API_KEY", "not-a-real-key")
    store = CodegroundQdrantDocumentStore(
        url="http://127.0.0.1:6333",
        path="/nowhere",
        index="codeground",
        repository="vllm",
        generation="gen-2",
        seed_from_generation="gen-1",
        embedding_dim=4,
        use_sparse_embeddings=True,
    )
    assert store.index == "codeground-vllm-gen-2" and store.path is None  # a server collection, no folder
    data = store.to_dict()
    assert data["init_parameters"]["index"] == "codeground"
    assert "not-a-real-key" not in str(data)  # the key stays in the environment
    again = CodegroundQdrantDocumentStore.from_dict(data)
    assert again.index == "codeground-vllm-gen-2" and again.api_key.resolve_value() == "not-a-real-key"


def test_the_index_name_is_the_repository_folder_for_a_default_index_folder(tmp_path):
    from codeground.app.pipeline.loader import index_name

    assert index_name(tmp_path / "my repo" / ".codeground") == "my-repo"
    assert index_name(tmp_path / "team-index") == "team-index"


def test_a_reader_never_creates_a_collection_and_says_which_index_to_build(languages_repo, tmp_path):
    run_index(languages_repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)  # no Qdrant collection in it
    with pytest.raises(CodegroundError, match="no Qdrant collection 'codeground'.*index_qdrant.yaml") as info:
        QueryEngine(tmp_path / "idx", QUERY).search("Server Start")
    assert "\n" not in str(info.value)
    assert not (IndexDir(tmp_path / "idx").current() / "qdrant").exists()


def test_a_dropped_engine_lets_go_of_the_local_folder_so_another_process_can_open_it(
    languages_repo, tmp_path
):
    import qdrant_client

    run_index(languages_repo, tmp_path / "idx", INDEX)
    engine = QueryEngine(tmp_path / "idx", QUERY)
    engine.search("Server Start")
    folder = engine.gen / "qdrant"
    del engine
    gc.collect()
    qdrant_client.QdrantClient(path=str(folder)).close()  # refused while any client holds the folder


def test_find_symbol_for_editors_reads_the_qdrant_collection(languages_repo, tmp_path):
    from codeground.app.serve.repo_tools import RepositoryTools

    run_index(languages_repo, tmp_path / "idx", INDEX)
    found = RepositoryTools(tmp_path / "idx", QUERY).find_symbol("Server.Start")
    assert found.records and all(r.symbol == "Server.Start" for r in found.records)


def test_a_store_collected_while_another_opens_its_client_does_not_deadlock(tmp_path, monkeypatch):
    import qdrant_client

    from codeground.components.stores import qdrant

    doomed = _store(tmp_path / "a")
    doomed.count_documents()
    real = qdrant_client.QdrantClient

    def client_that_collects(*args, **kwargs):  # the garbage collection an allocation may trigger
        nonlocal doomed
        doomed = None
        gc.collect()
        return real(*args, **kwargs)

    monkeypatch.setattr(qdrant_client, "QdrantClient", client_that_collects)
    other = _store(tmp_path / "b")
    assert other.count_documents() == 0 and str((tmp_path / "a" / "qdrant").resolve()) not in qdrant._shared
    other.close()


def test_an_index_on_a_qdrant_server_that_does_not_answer_fails_before_any_file_is_chunked(tmp_path):
    """A store that cannot answer is refused with one line naming its writer and address before the
    chunking (it had failed at the first write, after the whole embedding, behind the client's
    two-line "Failed to obtain server version" warning)."""
    import os
    import subprocess
    import sys

    from tests.conftest import closed_port, make_sample_repo

    repo = make_sample_repo(tmp_path / "repo")
    url = f"http://127.0.0.1:{closed_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "codeground.app.cli", "index", str(repo), "--index-dir", str(tmp_path / "idx")]
        + ["--pipeline", "index_qdrant", "--no-fill"],
        capture_output=True,
        text=True,
        env={**os.environ, "QDRANT_URL": url},
        timeout=120,
    )
    from codeground.app.index.store_counts import SERVER_DOWN_FIX

    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: the index store behind 'qdrant_writer' on the server at {url} cannot be read "
        f"(ResponseHandlingException: [Errno 111] Connection refused); {SERVER_DOWN_FIX} "
        "(nothing in the index was changed)"
    ], done.stderr
    assert "UserWarning" not in done.stderr and "indexed " not in done.stderr, done.stderr


def test_a_store_on_a_server_is_told_apart_from_one_in_the_index_folder():
    """Only a store on a server gets "check that server" instead of "rebuild" when it cannot be read."""
    from codeground.app.index.store_counts import SERVER_DOWN_FIX, StoreUnreadable, server_of
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    remote = CodegroundQdrantDocumentStore(url="http://127.0.0.1:1", embedding_dim=4)
    assert server_of(remote) == "http://127.0.0.1:1"
    assert server_of(SQLiteBM25DocumentStore()) is None
    down = StoreUnreadable("dense", ConnectionError("refused"), server_of(remote))
    assert down.remedy("codeground index PATH --full").endswith(f"; {SERVER_DOWN_FIX}")
    broken = StoreUnreadable("bm25", ValueError("not a database"))
    assert broken.remedy("codeground index PATH --full").endswith(
        "rebuild with `codeground index PATH --full`"
    )
