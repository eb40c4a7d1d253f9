"""RecordsById: retrieved ids become the record store's records, scores and order kept."""

from __future__ import annotations

from haystack import Document

from codeground.components.retrievers.records_by_id import RecordsById
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed


def _store() -> SQLiteBM25DocumentStore:
    store = SQLiteBM25DocumentStore()
    store.write_documents(
        [
            Document(id=f"m.py:f{i}:{i}", content=f"def f{i}(): ...", meta={"symbol": f"f{i}"})
            for i in range(5)
        ]
    )
    return store


def test_records_come_back_in_the_retrieved_order_with_the_retrieved_scores():
    hits = [Document(id="m.py:f3:3", score=0.9), Document(id="m.py:f0:0", score=0.4)]
    out = RecordsById(document_store=_store()).run(documents=hits)["documents"]
    assert [(d.id, d.content, d.meta["symbol"], d.score) for d in out] == [
        ("m.py:f3:3", "def f3(): ...", "f3", 0.9),
        ("m.py:f0:0", "def f0(): ...", "f0", 0.4),
    ]


def test_an_id_the_record_store_lacks_is_dropped_not_passed_on_empty():
    hits = [Document(id="gone.py:g:1", score=0.9), Document(id="m.py:f1:1", score=0.5)]
    out = RecordsById(document_store=_store()).run(documents=hits)["documents"]
    assert [d.id for d in out] == ["m.py:f1:1"]


def test_inputs_are_not_mutated_and_an_embedding_is_kept():
    hit = Document(id="m.py:f2:2", score=0.7, embedding=[0.1, 0.2])
    out = RecordsById(document_store=_store()).run(documents=[hit])["documents"]
    assert hit.content is None and hit.meta == {}
    assert out[0].embedding == [0.1, 0.2] and out[0].content == "def f2(): ..."
    assert RecordsById(document_store=_store()).run(documents=[])["documents"] == []


def test_round_trips_through_yaml_with_its_store(tmp_path):
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    data = RecordsById(document_store=store).to_dict()
    with codeground_components_allowed():
        again = RecordsById.from_dict(data)
    assert again.to_dict() == data and again.document_store.persist_path == store.persist_path
