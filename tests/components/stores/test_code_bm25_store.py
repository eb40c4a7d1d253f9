from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

from components.stores.code_bm25 import CodeBM25DocumentStore


def docs():
    return [
        Document(id="a", content="def load(trust_remote_code=False): ...",
                 meta={"header": "File: a.py | Symbol: load | Type: impl"}),
        Document(id="b", content="Install the package with pip.",
                 meta={"header": "File: docs/install.md | Symbol: Installation | Type: docs"}),
        Document(id="c", content="class Gemma2DecoderLayer: pass",
                 meta={"header": "File: models/gemma2.py | Symbol: Gemma2DecoderLayer | Type: impl"}),
    ]


def test_identifier_parts_match_a_plain_words_query():
    store = CodeBM25DocumentStore()
    store.write_documents(docs())
    hits = InMemoryBM25Retriever(document_store=store).run(query="trust remote code")["documents"]
    assert hits[0].id == "a"


def test_header_is_indexed_but_not_stored_in_content():
    store = CodeBM25DocumentStore()
    store.write_documents(docs())
    hits = InMemoryBM25Retriever(document_store=store).run(query="install.md")["documents"]
    assert hits[0].id == "b"
    assert "File:" not in hits[0].content


def test_camel_case_part_matches():
    store = CodeBM25DocumentStore()
    store.write_documents(docs())
    hits = InMemoryBM25Retriever(document_store=store).run(query="decoder layer")["documents"]
    assert hits[0].id == "c"


def test_persisted_store_reloads_with_same_documents_and_scores(tmp_path):
    path = tmp_path / "bm25.json"
    store = CodeBM25DocumentStore(persist_path=str(path))
    store.write_documents(docs())
    store.save()
    again = CodeBM25DocumentStore(persist_path=str(path))
    assert again.count_documents() == 3
    q = "gemma2 decoder"
    first = InMemoryBM25Retriever(document_store=store).run(query=q)["documents"]
    second = InMemoryBM25Retriever(document_store=again).run(query=q)["documents"]
    assert [(d.id, d.score) for d in first] == [(d.id, d.score) for d in second]


def test_delete_then_rewrite_gives_same_stats_as_fresh_write():
    fresh = CodeBM25DocumentStore()
    fresh.write_documents(docs())
    churned = CodeBM25DocumentStore()
    churned.write_documents(docs())
    churned.delete_documents(["a"])
    churned.write_documents([docs()[0]])
    q = "load remote"
    a = InMemoryBM25Retriever(document_store=fresh).run(query=q)["documents"]
    b = InMemoryBM25Retriever(document_store=churned).run(query=q)["documents"]
    assert {d.id: round(d.score, 9) for d in a} == {d.id: round(d.score, 9) for d in b}


def test_store_round_trips_through_to_dict(tmp_path):
    store = CodeBM25DocumentStore(persist_path=str(tmp_path / "x.json"), bm25_algorithm="BM25Okapi")
    again = CodeBM25DocumentStore.from_dict(store.to_dict())
    assert again.to_dict() == store.to_dict()
