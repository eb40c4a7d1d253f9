"""BatchedChromaDocumentStore writes exactly what the stock store writes, in far fewer calls."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack_integrations.document_stores.chroma import ChromaDocumentStore

from codeground.components.stores.batched_chroma import BatchedChromaDocumentStore


def _docs(n: int, version: str = "v1") -> list[Document]:
    docs = []
    for i in range(n):
        meta = {"file_path": f"pkg/m{i % 7}.py", "start_line": i, "source_type": "impl"} if i % 5 else {}
        embedding = [float((i * 7 + j) % 11) / 11 + 0.01 for j in range(8)]
        content = f"def f{i}(): return '{version}'"
        docs.append(Document(id=f"d{i}", content=content, meta=meta, embedding=embedding))
    return docs


def _store(cls, path, **extra):
    return cls(persist_path=str(path), collection_name="codeground", distance_function="cosine", **extra)


def _rows(store: ChromaDocumentStore) -> dict[str, tuple]:
    return {d.id: (d.content, d.meta, None if d.embedding is None else [round(x, 5) for x in d.embedding])
            for d in store.filter_documents()}


def test_batched_writes_store_the_same_rows_as_the_stock_store(tmp_path):
    stock = _store(ChromaDocumentStore, tmp_path / "stock")
    batched = _store(BatchedChromaDocumentStore, tmp_path / "batched", write_batch_size=4)
    docs = _docs(23)  # with and without meta (rows of each kind go in their own calls)
    assert stock.write_documents(docs, DuplicatePolicy.OVERWRITE) == batched.write_documents(
        docs, DuplicatePolicy.OVERWRITE
    ) == 23
    assert _rows(batched) == _rows(stock) and len(_rows(stock)) == 23


def test_writes_go_in_batches_not_one_call_per_document(tmp_path, monkeypatch):
    store = _store(BatchedChromaDocumentStore, tmp_path / "s", write_batch_size=10)
    store.write_documents(_docs(1), DuplicatePolicy.OVERWRITE)  # creates the collection
    calls = []
    real = store._collection.upsert
    monkeypatch.setattr(store._collection, "upsert", lambda **kw: (calls.append(len(kw["ids"])), real(**kw)))
    docs = [Document(id=f"x{i}", content="c", meta={"k": 1}, embedding=[0.1] * 8) for i in range(25)]
    store.write_documents(docs, DuplicatePolicy.OVERWRITE)
    assert calls == [10, 10, 5]


def test_overwrite_replaces_and_the_last_copy_of_a_repeated_id_wins(tmp_path):
    store = _store(BatchedChromaDocumentStore, tmp_path / "s")
    store.write_documents(_docs(6), DuplicatePolicy.OVERWRITE)
    again = [*_docs(3, "v2"), Document(id="d1", content="last copy", embedding=[0.5] * 8)]
    assert store.write_documents(again, DuplicatePolicy.OVERWRITE) == 3
    rows = _rows(store)
    assert len(rows) == 6 and rows["d1"][0] == "last copy" and "v2" in rows["d2"][0]


def test_fail_and_skip_policies_behave_as_the_stock_store(tmp_path):
    store = _store(BatchedChromaDocumentStore, tmp_path / "s")
    store.write_documents(_docs(4))
    with pytest.raises(DuplicateDocumentError):
        store.write_documents(_docs(2, "v2"), DuplicatePolicy.FAIL)
    assert store.write_documents(_docs(6, "v2"), DuplicatePolicy.SKIP) == 2
    rows = _rows(store)
    assert "v1" in rows["d0"][0] and "v2" in rows["d5"][0]


def test_round_trips_with_its_batch_size_and_the_stock_parameters(tmp_path):
    store = _store(BatchedChromaDocumentStore, tmp_path / "s", write_batch_size=250)
    data = store.to_dict()
    assert data["init_parameters"]["write_batch_size"] == 250
    assert data["init_parameters"]["persist_path"] == str(tmp_path / "s")
    assert BatchedChromaDocumentStore.from_dict(data).to_dict() == data
    with pytest.raises(ValueError, match="write_batch_size"):
        BatchedChromaDocumentStore(write_batch_size=0)


def test_a_vectors_only_store_keeps_ids_and_vectors_and_nothing_else(tmp_path):
    full = _store(BatchedChromaDocumentStore, tmp_path / "full")
    vectors = _store(BatchedChromaDocumentStore, tmp_path / "vectors", vectors_only=True, write_batch_size=4)
    docs = _docs(23)
    full.write_documents(docs, DuplicatePolicy.OVERWRITE)
    assert vectors.write_documents(docs, DuplicatePolicy.OVERWRITE) == 23
    rows = _rows(vectors)
    assert {i: v for i, (_, _, v) in rows.items()} == {i: v for i, (_, _, v) in _rows(full).items()}
    assert all(content is None and meta == {} for content, meta, _ in rows.values())
    query = [docs[3].embedding]
    found = vectors.search_embeddings(query, top_k=5)[0]
    expected = full.search_embeddings(query, top_k=5)[0]  # _docs repeats vectors: ties in any order
    assert [round(d.score, 5) for d in found] == [round(d.score, 5) for d in expected]
    assert {d.id for d in found} <= set(rows)
    assert vectors.to_dict()["init_parameters"]["vectors_only"] is True
    assert BatchedChromaDocumentStore.from_dict(vectors.to_dict()).vectors_only is True


def test_a_vectors_only_store_refuses_a_document_without_a_vector(tmp_path):
    store = _store(BatchedChromaDocumentStore, tmp_path / "s", vectors_only=True)
    with pytest.raises(ValueError, match="needs an embedding"):
        store.write_documents([Document(id="a", content="no vector")], DuplicatePolicy.OVERWRITE)
    assert store.count_documents() == 0
