from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

from components.stores.code_bm25 import CodeBM25DocumentStore


def docs():
    return [
        Document(
            id="a",
            content="def load(trust_remote_code=False): ...",
            meta={"header": "File: a.py | Symbol: load | Type: impl"},
        ),
        Document(
            id="b",
            content="Install the package with pip.",
            meta={"header": "File: docs/install.md | Symbol: Installation | Type: docs"},
        ),
        Document(
            id="c",
            content="class Gemma2DecoderLayer: pass",
            meta={"header": "File: models/gemma2.py | Symbol: Gemma2DecoderLayer | Type: impl"},
        ),
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


# -- fast (inverted-index) bm25_retrieval == stock bm25_retrieval -----------------------------------
import random  # noqa: E402

import pytest  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402
from haystack.document_stores.types import DuplicatePolicy  # noqa: E402

ALGORITHMS = ["BM25Okapi", "BM25L", "BM25Plus"]
WORDS = [
    "load",
    "save",
    "model",
    "config",
    "token",
    "layer",
    "attention",
    "cache",
    "tensor",
    "device",
    "trust_remote_code",
    "Gemma2DecoderLayer",
    "HTTPServer",
    "batch",
    "shape",
    "rope",
    "kv",
    "quant",
    "pip",
    "install",
    "docs",
    "the",
    "a",
    "of",
    "return",
    "self",
    "def",
    "class",
    "import",
    "torch",
]


def random_docs(seed: int, n: int, prefix: str = "d") -> list[Document]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        # Zipf-ish: early words are common, late ones rare; some docs carry a header.
        words = [WORDS[min(int(rng.expovariate(0.25)), len(WORDS) - 1)] for _ in range(rng.randint(1, 12))]
        meta = (
            {"header": f"File: m{i % 7}.py | Symbol: {rng.choice(WORDS)} | Type: impl"} if i % 3 == 0 else {}
        )
        meta["group"] = i % 4
        out.append(Document(id=f"{prefix}{i}", content=" ".join(words), meta=meta))
    # Documents without content (never scored) and with empty content (zero length, no tokens).
    out.append(Document(id=f"{prefix}-none", content=None, meta={"group": 0}))
    out.append(Document(id=f"{prefix}-empty", content="", meta={"group": 1}))
    return out


QUERIES = [
    "load model",
    "trust remote code",
    "decoder layer",
    "gemma2",
    "httpserver http server",
    "the the the",
    "load load save",
    "absentword",
    "absentword load",
    "zzz yyy",
    "kv cache quant",
    "pip install docs",
    "torch tensor device",
    "rope",
    "self",
    "def class import",
    "attention attention layer",
    "m3.py",
    "impl",
    "File Symbol Type",
    "batch shape",
    "quant",
    "return self",
    "config token",
    "a of the",
    "save",
    "Gemma2DecoderLayer",
    "install.md",
    "docs docs",
    "device cache rope quant kv",
]


def assert_same_as_stock(store, query, top_k, scale_score, filters=None):
    fast = store.bm25_retrieval(query=query, filters=filters, top_k=top_k, scale_score=scale_score)
    stock = InMemoryDocumentStore.bm25_retrieval(
        store, query=query, filters=filters, top_k=top_k, scale_score=scale_score
    )
    assert [d.id for d in fast] == [d.id for d in stock], query
    assert [d.score for d in fast] == pytest.approx([d.score for d in stock], abs=1e-9, rel=0), query
    assert [(d.content, d.meta, d.embedding) for d in fast] == [
        (d.content, d.meta, d.embedding) for d in stock
    ]
    for doc in fast:
        assert doc is not store.storage[doc.id] and store.storage[doc.id].score is None


def assert_all_queries_match(store, scale_score):
    for query in QUERIES:
        for top_k in (1, 5, 10, 400):
            assert_same_as_stock(store, query, top_k, scale_score)


@pytest.mark.parametrize("scale_score", [False, True])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_fast_bm25_matches_stock_scores_and_order(algorithm, scale_score):
    store = CodeBM25DocumentStore(bm25_algorithm=algorithm)
    store.write_documents(random_docs(7, 300))
    assert_all_queries_match(store, scale_score)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_postings_stay_consistent_after_deletes_and_rewrites(algorithm):
    store = CodeBM25DocumentStore(bm25_algorithm=algorithm)
    store.write_documents(random_docs(7, 300))
    store.delete_documents([f"d{i}" for i in range(0, 300, 5)] + ["d1", "d1", "missing", "d-none"])
    store.write_documents(random_docs(8, 40), policy=DuplicatePolicy.OVERWRITE)  # rewrites d0..d39
    store.write_documents(random_docs(9, 30, prefix="n"), policy=DuplicatePolicy.SKIP)
    store.write_documents(random_docs(10, 30, prefix="n"), policy=DuplicatePolicy.SKIP)
    store.delete_by_filter({"field": "meta.group", "operator": "==", "value": 3})
    assert_all_queries_match(store, scale_score=False)
    # The postings equal those rebuilt from the stock stats.
    postings = {}
    for doc_id, stats in store._bm25_attr.items():
        for token, tf in stats.freq_token.items():
            postings.setdefault(token, {})[doc_id] = tf
    assert store._postings.postings == postings
    store.delete_all_documents()
    assert store.bm25_retrieval("load") == []
    store.write_documents(random_docs(11, 50))
    assert_all_queries_match(store, scale_score=True)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_filters_fall_back_to_stock(algorithm, monkeypatch):
    store = CodeBM25DocumentStore(bm25_algorithm=algorithm)
    store.write_documents(random_docs(7, 300))
    flt = {"field": "meta.group", "operator": "in", "value": [1, 2]}
    for query in QUERIES[:10]:
        assert_same_as_stock(store, query, 10, False, filters=flt)
    calls = []
    stock_scorer = store.bm25_algorithm_inst
    monkeypatch.setattr(store, "bm25_algorithm_inst", lambda q, d: calls.append(q) or stock_scorer(q, d))
    store.bm25_retrieval("load", filters=flt)
    assert calls == ["load"]


def test_okapi_negative_scores_rank_after_zero_score_documents():
    # Nearly every document holds "common": its IDF is negative, as is the vocabulary's mean, so
    # the epsilon floor is negative and matching documents score below the non-matching zeros.
    contents = ["common also both"] * 6 + ["common also both common"] * 5 + ["rare", "solo"]
    store = CodeBM25DocumentStore(bm25_algorithm="BM25Okapi")
    store.write_documents([Document(id=f"x{i}", content=c) for i, c in enumerate(contents)])
    stock = InMemoryDocumentStore.bm25_retrieval(store, query="common rare", top_k=20)
    assert any(d.score < 0 for d in stock) and any(d.score == 0 for d in stock)
    for query in ("common rare", "common", "also", "rare", "nothing", "common common solo", "both rare solo"):
        for top_k in (1, 2, 3, 12, 20):
            assert_same_as_stock(store, query, top_k, scale_score=False)
            assert_same_as_stock(store, query, top_k, scale_score=True)


def test_shared_stores_on_one_file_share_the_index(tmp_path):
    path = str(tmp_path / "shared.json")
    first = CodeBM25DocumentStore(persist_path=path)
    second = CodeBM25DocumentStore(persist_path=path)
    first.write_documents(random_docs(7, 100))
    assert second.bm25_retrieval("load model")
    first.delete_documents(["d1", "d2"])
    assert_same_as_stock(second, "load model", 50, False)
    assert_same_as_stock(first, "load model", 50, False)


def test_index_rebuilds_when_stats_change_behind_its_back():
    store = CodeBM25DocumentStore(bm25_algorithm="BM25Okapi")
    store.write_documents(random_docs(7, 100))
    store.bm25_retrieval("load")
    # The stock write (content-only tokens) bypasses the override and so the postings.
    InMemoryDocumentStore.write_documents(store, random_docs(12, 20, prefix="s"))
    InMemoryDocumentStore.delete_documents(store, ["d3"])
    assert_all_queries_match(store, scale_score=False)


def test_retriever_results_unchanged_through_stock_retriever():
    store = CodeBM25DocumentStore()
    store.write_documents(random_docs(7, 200))
    retriever = InMemoryBM25Retriever(document_store=store, top_k=7, scale_score=True)
    for query in QUERIES:
        got = retriever.run(query=query)["documents"]
        want = InMemoryDocumentStore.bm25_retrieval(store, query=query, top_k=7, scale_score=True)
        assert [(d.id, d.score) for d in got] == [(d.id, d.score) for d in want]


def test_unfiltered_retrieval_does_not_scan_every_document(monkeypatch):
    store = CodeBM25DocumentStore(bm25_algorithm="BM25L")
    store.write_documents(random_docs(7, 100))

    def no_scan(*args, **kwargs):
        raise AssertionError("the fast path must not filter/score every document")

    monkeypatch.setattr(store, "filter_documents", no_scan)
    monkeypatch.setattr(store, "_score_bm25l", no_scan)
    assert [d.id for d in store.bm25_retrieval("load model", top_k=3)]


def _scores(store, q):
    hits = InMemoryBM25Retriever(document_store=store, top_k=10).run(query=q)["documents"]
    return [(d.id, round(d.score, 9)) for d in hits]


def test_reload_uses_saved_term_frequencies_and_keeps_scores_after_more_writes(tmp_path, monkeypatch):
    import components.stores.code_bm25 as module

    path = tmp_path / "bm25.json"
    store = CodeBM25DocumentStore(persist_path=str(path))
    store.write_documents(docs())
    store.save()
    tokenized = []
    real = module.tokenize
    monkeypatch.setattr(module, "tokenize", lambda text: tokenized.append(text) or real(text))
    again = CodeBM25DocumentStore(persist_path=str(path))
    assert tokenized == []  # nothing re-tokenized on load
    extra = Document(id="d", content="def load_lora(path): ...", meta={"header": "File: d.py"})
    for s in (store, again):
        s.delete_documents(["b"])
        s.write_documents([extra])
    for q in ("load remote code", "gemma2 decoder", "lora path", "install pip"):
        assert _scores(again, q) == _scores(store, q)


def test_a_format_1_store_file_still_loads_by_tokenizing_again(tmp_path):
    import json

    path = tmp_path / "bm25.json"
    old = {"format": 1, "documents": [{"id": d.id, "content": d.content, "meta": d.meta} for d in docs()]}
    path.write_text(json.dumps(old))
    fresh = CodeBM25DocumentStore()
    fresh.write_documents(docs())
    loaded = CodeBM25DocumentStore(persist_path=str(path))
    assert _scores(loaded, "gemma2 decoder layer") == _scores(fresh, "gemma2 decoder layer")
