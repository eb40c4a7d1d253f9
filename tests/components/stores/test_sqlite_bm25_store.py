"""The on-disk BM25 store: identifier-aware tokens over header + content, the stock BM25L/BM25+
scores for those tokens, and postings that stay exact through deletes, overwrites and reopening."""

import random
import sqlite3
import threading

import numpy as np
import pytest
from haystack import Document, Pipeline
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy

from codeground.components.identifiers import query_tokens, tokenize
from codeground.components.retrievers.bm25 import BM25Retriever
from codeground.components.stores.sqlite_bm25 import (
    LENGTHS_KEY,
    LENGTHS_SQL,
    SQLiteBM25DocumentStore,
    meta_rows,
)


def docs():
    return [
        Document(
            id="a",
            content="def load(trust_remote_code=False): ...",
            meta={"header": "File: a.py | Symbol: load | Type: impl", "source_type": "impl"},
        ),
        Document(
            id="b",
            content="Install the package with pip.",
            meta={
                "header": "File: docs/install.md | Symbol: Installation | Type: docs",
                "source_type": "docs",
            },
        ),
        Document(
            id="c",
            content="class Gemma2DecoderLayer: pass",
            meta={
                "header": "File: models/gemma2.py | Symbol: Gemma2DecoderLayer | Type: impl",
                "source_type": "impl",
            },
        ),
    ]


def top(store, query, k=10):
    return [d.id for d in BM25Retriever(document_store=store, top_k=k).run(query=query)["documents"]]


def test_identifier_parts_match_a_plain_words_query():
    store = SQLiteBM25DocumentStore()
    store.write_documents(docs())
    assert top(store, "trust remote code")[0] == "a"


def test_camel_case_part_matches():
    store = SQLiteBM25DocumentStore()
    store.write_documents(docs())
    assert top(store, "decoder layer")[0] == "c"


def test_header_is_indexed_but_not_stored_in_content():
    store = SQLiteBM25DocumentStore()
    store.write_documents(docs())
    hit = BM25Retriever(document_store=store).run(query="install.md")["documents"][0]
    assert hit.id == "b" and "File:" not in hit.content and hit.meta == docs()[1].meta


# -- the scores are the stock ones for the same tokens ----------------------------------------------
WORDS = (
    "load save model config token layer attention cache tensor device trust_remote_code "
    "Gemma2DecoderLayer HTTPServer batch shape rope kv quant pip install docs the a of return self "
    "def class import torch"
).split()
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
    "",
    "device cache rope quant kv",
]


def random_docs(seed: int, n: int, prefix: str = "d") -> list[Document]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        # Zipf-ish: early words are common, late ones rare; some records carry a header.
        words = [WORDS[min(int(rng.expovariate(0.25)), len(WORDS) - 1)] for _ in range(rng.randint(1, 12))]
        meta = (
            {"header": f"File: m{i % 7}.py | Symbol: {rng.choice(WORDS)} | Type: impl"} if i % 3 == 0 else {}
        )
        meta["group"] = i % 4
        out.append(Document(id=f"{prefix}{i}", content=" ".join(words), meta=meta))
    # records without content (never scored) and with empty content (zero length, no tokens)
    out.append(Document(id=f"{prefix}-none", content=None, meta={"group": 0}))
    out.append(Document(id=f"{prefix}-empty", content="", meta={"group": 1}))
    return out


def stock_reference(records: list[Document], algorithm: str) -> InMemoryDocumentStore:
    """Haystack's in-memory BM25 over the same tokens (joined by spaces), records in the same order."""
    ref = InMemoryDocumentStore(bm25_algorithm=algorithm, bm25_tokenization_regex=r"(?u)\b\w+\b")
    texts = [
        None
        if d.content is None
        else " ".join(tokenize(f"{d.meta['header']}\n{d.content}" if d.meta.get("header") else d.content))
        for d in records
    ]
    ref.write_documents(
        [Document(id=d.id, content=t, meta=d.meta) for d, t in zip(records, texts, strict=True)]
    )
    return ref


def assert_same_as_stock(store, algorithm, filters=None, scale_score=False):
    ref = stock_reference(store.filter_documents(), algorithm)
    for query in QUERIES:
        for top_k in (1, 5, 10, 400):
            got = store.bm25_retrieval(query, top_k=top_k, filters=filters, scale_score=scale_score)
            want = ref.bm25_retrieval(
                " ".join(query_tokens(query)) or "absentword",
                top_k=top_k,
                filters=filters,
                scale_score=scale_score,
            )
            want = [d for d in want if d.score > (0.5 if scale_score else 0.0)]  # stock keeps zero scores
            assert [d.id for d in got] == [d.id for d in want], query
            assert [d.score for d in got] == pytest.approx([d.score for d in want], abs=1e-9, rel=0), query


@pytest.mark.parametrize("scale_score", [False, True])
@pytest.mark.parametrize("algorithm", ["BM25L", "BM25Plus"])
def test_scores_and_order_are_the_stock_ones_for_the_same_tokens(algorithm, scale_score):
    store = SQLiteBM25DocumentStore(bm25_algorithm=algorithm)
    store.write_documents(random_docs(7, 300))
    assert_same_as_stock(store, algorithm, scale_score=scale_score)


def test_filters_keep_the_best_matching_records():
    store = SQLiteBM25DocumentStore()
    store.write_documents(random_docs(7, 300))
    assert_same_as_stock(store, "BM25L", filters={"field": "meta.group", "operator": "in", "value": [1, 2]})


def postings_on_disk(path) -> dict[str, dict[int, int]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT term, docs, tfs FROM postings").fetchall()
    return {
        term: dict(zip(np.frombuffer(d, np.int64).tolist(), np.frombuffer(t, np.int32).tolist(), strict=True))
        for term, d, t in rows
    }


def expected_postings(path) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    with sqlite3.connect(path) as conn:
        for rowid, content, meta in conn.execute("SELECT rowid, content, meta FROM records"):
            if content is None:
                continue
            header = Document.from_dict(
                {"content": content, "meta": __import__("json").loads(meta)}
            ).meta.get("header")
            for term in tokenize(f"{header}\n{content}" if header else content):
                out.setdefault(term, {}).setdefault(rowid, 0)
                out[term][rowid] += 1
    return out


def test_postings_on_disk_stay_exact_through_deletes_overwrites_and_reopening(tmp_path):
    path = str(tmp_path / "bm25.sqlite3")
    store = SQLiteBM25DocumentStore(persist_path=path)
    store.write_documents(random_docs(7, 300))
    store.save()
    store = SQLiteBM25DocumentStore(persist_path=path)  # an incremental run opens the saved file
    store.delete_documents([f"d{i}" for i in range(0, 300, 5)] + ["d1", "d1", "missing", "d-none"])
    store.write_documents(random_docs(8, 40), policy=DuplicatePolicy.OVERWRITE)  # rewrites d0..d39
    store.write_documents(random_docs(9, 30, prefix="n"), policy=DuplicatePolicy.SKIP)
    store.write_documents(random_docs(10, 30, prefix="n"), policy=DuplicatePolicy.SKIP)
    assert_same_as_stock(store, "BM25L")  # pending postings are merged before a retrieval
    store.save()
    assert postings_on_disk(path) == expected_postings(path)
    reopened = SQLiteBM25DocumentStore(persist_path=path)
    assert [d.id for d in reopened.filter_documents()] == [d.id for d in store.filter_documents()]
    assert_same_as_stock(reopened, "BM25L")


def _raw_postings(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT term, docs, tfs FROM postings ORDER BY term").fetchall()


def test_pending_postings_over_the_limit_are_merged_early_into_the_same_rows_without_committing(
    tmp_path, monkeypatch
):
    def build(path):
        store = SQLiteBM25DocumentStore(persist_path=str(path))
        pending = []
        for seed, batch in enumerate(random_docs(s, 40, prefix=f"b{s}") for s in range(11, 19)):
            store.write_documents(batch)
            pending.append(len(store._added.terms))
            if seed == 3:  # an incremental run deletes and overwrites between writes
                store.delete_documents([f"b11{i}" for i in range(0, 40, 3)] + ["b12-none"])
                store.write_documents(random_docs(30, 12, prefix="b13"), policy=DuplicatePolicy.OVERWRITE)
        unsaved = SQLiteBM25DocumentStore(persist_path=str(path)).count_documents()
        store.save()
        return store, pending, unsaved

    whole, pending_whole, _ = build(tmp_path / "whole.sqlite3")
    monkeypatch.setattr("codeground.components.stores.sqlite_bm25.MAX_PENDING_POSTINGS", 500)
    monkeypatch.setattr("codeground.components.stores.sqlite_bm25.MERGE_TERMS_PER_STEP", 7)
    sliced, pending_sliced, unsaved = build(tmp_path / "sliced.sqlite3")
    assert max(pending_whole) > 2000 and max(pending_sliced) < 500  # the bound held after every write
    assert sliced.count_documents() == whole.count_documents() == 8 * 42 - 14 - 1
    assert unsaved == 0  # merging early committed nothing: a reader still sees an empty store
    assert _raw_postings(tmp_path / "sliced.sqlite3") == _raw_postings(tmp_path / "whole.sqlite3")
    for path in (tmp_path / "whole.sqlite3", tmp_path / "sliced.sqlite3"):
        assert postings_on_disk(path) == expected_postings(path)
    assert_same_as_stock(sliced, "BM25L")
    assert [top(sliced, q) for q in QUERIES] == [top(whole, q) for q in QUERIES]


def test_a_record_written_and_deleted_before_a_save_leaves_no_posting(tmp_path):
    path = str(tmp_path / "bm25.sqlite3")
    store = SQLiteBM25DocumentStore(persist_path=path)
    store.write_documents(docs())
    store.delete_documents(["c"])  # still pending: never merged into the postings
    store.save()
    assert "gemma2" not in postings_on_disk(path)
    assert postings_on_disk(path) == expected_postings(path)
    assert top(store, "gemma2 decoder layer") == []


def test_deleting_a_record_rewrites_only_its_terms(tmp_path):
    path = str(tmp_path / "bm25.sqlite3")
    store = SQLiteBM25DocumentStore(persist_path=path)
    store.write_documents(docs())
    store.save()
    before = postings_on_disk(path)
    store.delete_documents(["c"])
    store.save()
    after = postings_on_disk(path)
    own = set(tokenize(docs()[2].meta["header"] + "\n" + docs()[2].content))
    row_c = 3
    assert {t: p for t, p in before.items() if t not in own} == {
        t: p for t, p in after.items() if t not in own
    }
    assert {
        t: {r: n for r, n in p.items() if r != row_c}
        for t, p in before.items()
        if t in own and set(p) != {row_c}
    } == {t: p for t, p in after.items() if t in own}


def test_duplicate_policies_follow_the_stock_semantics():
    store = SQLiteBM25DocumentStore()
    assert store.write_documents(docs()) == 3
    with pytest.raises(DuplicateDocumentError):
        store.write_documents([docs()[0]])
    assert store.write_documents(docs(), policy=DuplicatePolicy.SKIP) == 0
    changed = Document(id="a", content="def save(path): ...", meta={})
    assert store.write_documents([changed], policy=DuplicatePolicy.OVERWRITE) == 1
    assert store.count_documents() == 3
    assert top(store, "save path") == ["a"] and top(store, "trust remote") == []
    with pytest.raises(ValueError):
        store.write_documents("not a list of documents")


def test_a_failed_write_leaves_the_store_as_it_was(tmp_path):
    path = str(tmp_path / "bm25.sqlite3")
    store = SQLiteBM25DocumentStore(persist_path=path)
    store.write_documents(docs())
    store.save()
    with pytest.raises(DuplicateDocumentError):
        store.write_documents([Document(id="z", content="zeta"), docs()[0]])
    assert store.count_documents() == 3 and top(store, "zeta") == []
    assert postings_on_disk(path) == expected_postings(path)


def test_a_missing_file_reads_as_empty_and_is_not_created(tmp_path):
    path = tmp_path / "sub" / "bm25.sqlite3"
    store = SQLiteBM25DocumentStore(persist_path=str(path))
    assert store.count_documents() == 0 and store.filter_documents() == [] and store.bm25_retrieval("x") == []
    store.save()
    assert not path.exists()


def test_a_damaged_file_is_one_error_that_says_how_to_rebuild(tmp_path):
    path = tmp_path / "bm25.sqlite3"
    path.write_text("{garbage")
    with pytest.raises(ValueError, match=r"BM25 store .* cannot be read \("):
        SQLiteBM25DocumentStore(persist_path=str(path)).count_documents()


def test_unsaved_writes_are_not_seen_by_other_readers(tmp_path):
    path = tmp_path / "bm25.sqlite3"
    SQLiteBM25DocumentStore(persist_path=str(path)).write_documents(docs())
    # not saved: the writer's transaction was never committed, so a reader sees nothing
    assert SQLiteBM25DocumentStore(persist_path=str(path)).count_documents() == 0


def test_retrieval_reads_only_the_query_terms(tmp_path, monkeypatch):
    path = str(tmp_path / "bm25.sqlite3")
    writer = SQLiteBM25DocumentStore(persist_path=path)
    writer.write_documents(random_docs(7, 100))
    writer.save()
    reader = SQLiteBM25DocumentStore(persist_path=path)
    monkeypatch.setattr(reader, "filter_documents", lambda *a, **k: pytest.fail("full listing"))
    statements = []
    reader._db().set_trace_callback(statements.append)
    assert reader.bm25_retrieval("load model", top_k=3)
    postings_reads = [s for s in statements if "FROM postings" in s]
    assert postings_reads and all("'load'" in s and "'model'" in s for s in postings_reads)


def test_token_counts_are_read_from_their_own_index_and_a_file_written_before_it_answers_the_same(tmp_path):
    """A first search after the file left the OS cache scanned the whole records table for them
    (77 of vLLM's 92 MB); their index is 0.5 MB."""
    path = str(tmp_path / "bm25.sqlite3")
    writer = SQLiteBM25DocumentStore(persist_path=path)
    writer.write_documents(random_docs(7, 100))
    writer.save()

    def plan() -> str:
        with sqlite3.connect(path) as conn:
            return " ".join(str(row) for row in conn.execute("EXPLAIN QUERY PLAN " + LENGTHS_SQL))

    def found() -> list[tuple[str, float]]:
        reader = SQLiteBM25DocumentStore(persist_path=path)
        return [(d.id, d.score) for d in reader.bm25_retrieval("load model", top_k=20)]

    assert "records_scorable" in plan()
    expected = found()
    assert expected
    _forget_stored_lengths(path)  # as a file written before they were kept: they are read with SQL
    with sqlite3.connect(path) as conn:  # statistics make the planner prefer a scan: the index is named
        conn.execute("ANALYZE")
    assert "records_scorable" in plan() and found() == expected
    with sqlite3.connect(path) as conn:
        conn.execute("DROP INDEX records_scorable")
    with pytest.raises(sqlite3.OperationalError, match="no such index"):
        plan()
    assert found() == expected
    writer = SQLiteBM25DocumentStore(persist_path=path)  # an incremental run adds the index
    writer.write_documents(random_docs(8, 5, prefix="n"))
    writer.save()
    assert "records_scorable" in plan()


def _forget_stored_lengths(path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TRIGGER lengths_stale_after_insert")
        conn.execute("DROP TRIGGER lengths_stale_after_delete")
        conn.execute("DELETE FROM info WHERE key = ?", (LENGTHS_KEY,))


def _stored_lengths(path) -> bytes | None:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT value FROM info WHERE key = ?", (LENGTHS_KEY,)).fetchone()
    return row and row[0]


def test_a_search_reads_the_token_counts_as_one_kept_value_that_any_change_of_the_records_removes(tmp_path):
    """Reading them row by row was a quarter of a cold search on a 352k-record index. The kept value
    is the table's whatever wrote the file: an insert, delete or update by anything (an older
    codeground, a rolled-back write) removes it in the same transaction, a reader that remembered it
    reads again after another connection's commit, and a value that cannot be the table's is not used."""
    path = str(tmp_path / "bm25.sqlite3")
    writer = SQLiteBM25DocumentStore(persist_path=path)
    writer.write_documents(random_docs(7, 200))
    writer.save()
    reader = SQLiteBM25DocumentStore(persist_path=path)
    statements: list[str] = []
    reader._db().set_trace_callback(statements.append)
    assert_same_as_stock(reader, "BM25L")
    assert not [s for s in statements if "n_tokens" in s], "token counts read row by row"
    assert sum(f"key = '{LENGTHS_KEY}'" in s for s in statements) == 1  # once, then remembered

    def table() -> list[list[int]]:
        with sqlite3.connect(path) as conn:
            return sorted(list(r) for r in conn.execute(LENGTHS_SQL))  # the index's order: by count

    def counts_read(store) -> list[list[int]]:
        _, length, alive, n_corpus, _ = store._doc_lengths(store._db())
        rows = np.flatnonzero(alive)
        assert n_corpus == len(rows)
        return [[int(r), int(length[r])] for r in rows]

    for change in (  # a writer that knows nothing of the kept value
        "INSERT INTO records (id, content, meta, n_tokens) VALUES ('x', 'load load', '{}', 2)",
        "UPDATE records SET n_tokens = 7 WHERE id = 'x'",
        "DELETE FROM records WHERE id = 'x'",
    ):
        writer.save()  # kept again
        assert _stored_lengths(path) is not None
        with sqlite3.connect(path) as conn:
            conn.execute(change)
        assert _stored_lengths(path) is None, change
        assert counts_read(reader) == table(), change  # the same reader, after another's commit

    writer.delete_documents(["d3"])
    writer.save()
    kept = np.frombuffer(_stored_lengths(path), dtype=np.int64).reshape(-1, 2)
    assert sorted(kept.tolist()) == table() == counts_read(reader)
    assert_same_as_stock(reader, "BM25L")

    writer.write_documents(random_docs(8, 3, prefix="n"))
    writer._rollback(writer._db(write=True))  # a failed save: nothing of it is kept
    assert np.array_equal(np.frombuffer(_stored_lengths(path), dtype=np.int64).reshape(-1, 2), kept)

    for foreign in (b"\x00" * 15, np.array([[10**6, 3]], dtype=np.int64).tobytes()):
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE info SET value = ? WHERE key = ?", (foreign, LENGTHS_KEY))
        assert counts_read(SQLiteBM25DocumentStore(persist_path=path)) == table()
    writer.close()
    reader.close()


def test_concurrent_readers_get_the_same_results(tmp_path):
    path = str(tmp_path / "bm25.sqlite3")
    writer = SQLiteBM25DocumentStore(persist_path=path)
    writer.write_documents(random_docs(7, 300))
    writer.save()
    reader = SQLiteBM25DocumentStore(persist_path=path)
    want = {q: [d.id for d in reader.bm25_retrieval(q)] for q in QUERIES}
    errors = []

    def ask():
        try:
            for q in QUERIES * 3:
                assert [d.id for d in reader.bm25_retrieval(q)] == want[q]
        except Exception as exc:  # noqa: BLE001 - collected for the main thread
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_meta_rows_read_the_metadata_of_any_store():
    store = SQLiteBM25DocumentStore()
    store.write_documents(docs())
    assert list(meta_rows(store, ["source_type", "absent"])) == [
        ("a", "impl", None),
        ("b", "docs", None),
        ("c", "impl", None),
    ]
    stock = InMemoryDocumentStore()
    stock.write_documents(docs())
    assert sorted(meta_rows(stock, ["source_type"])) == [("a", "impl"), ("b", "docs"), ("c", "impl")]


def test_filter_by_ids_returns_records_in_storage_order():
    store = SQLiteBM25DocumentStore()
    store.write_documents(docs())
    got = store.filter_documents({"field": "id", "operator": "in", "value": ["c", "a", "missing"]})
    assert [d.id for d in got] == ["a", "c"]
    got = store.filter_documents({"field": "meta.source_type", "operator": "==", "value": "docs"})
    assert [d.id for d in got] == ["b"]


def test_store_and_retriever_round_trip_through_to_dict(tmp_path):
    store = SQLiteBM25DocumentStore(
        persist_path=str(tmp_path / "x.sqlite3"), bm25_algorithm="BM25Plus", bm25_parameters={"k1": 1.2}
    )
    assert SQLiteBM25DocumentStore.from_dict(store.to_dict()).to_dict() == store.to_dict()
    pipeline = Pipeline()
    pipeline.add_component("bm25", BM25Retriever(document_store=store, top_k=3, scale_score=True))
    again = Pipeline.loads(pipeline.dumps(), allowed_modules=["codeground.components.*"])
    assert again.dumps() == pipeline.dumps()
    assert isinstance(again.get_component("bm25").document_store, SQLiteBM25DocumentStore)


def test_unknown_algorithm_and_bad_top_k_are_refused():
    with pytest.raises(ValueError, match="BM25L"):
        SQLiteBM25DocumentStore(bm25_algorithm="BM25Okapi")
    with pytest.raises(ValueError, match="top_k"):
        BM25Retriever(document_store=SQLiteBM25DocumentStore(), top_k=0)


def test_records_by_symbol_finds_full_names_and_last_parts_and_forgets_deleted_records(tmp_path):
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    docs = [
        Document(id="t:Trainer.fit:10", content="def fit", meta={"symbol": "Trainer.fit", "start_line": 10}),
        Document(id="t:fit:3", content="def fit", meta={"symbol": "fit", "start_line": 3}),
        Document(id="e:LLMEngine:1", content="class", meta={"symbol": "LLMEngine", "start_line": 1}),
        Document(id="d:none:1", content="text", meta={}),
    ]
    store.write_documents(docs)
    store.save()
    by = lambda *names: store.records_by_symbol(list(names), ["start_line"])  # noqa: E731
    assert by("fit") == [("t:Trainer.fit:10", "Trainer.fit", 10), ("t:fit:3", "fit", 3)]
    assert by("Trainer.fit", "LLMEngine") == [
        ("t:Trainer.fit:10", "Trainer.fit", 10),
        ("e:LLMEngine:1", "LLMEngine", 1),
    ]
    store.delete_documents(["t:fit:3"])
    renamed = Document(id="e:LLMEngine:1", content="c", meta={"symbol": "Engine", "start_line": 2})
    store.write_documents([renamed], policy=DuplicatePolicy.OVERWRITE)
    store.save()
    again = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    assert again.records_by_symbol(["fit", "LLMEngine"], []) == [("t:Trainer.fit:10", "Trainer.fit")]
    assert again.records_by_symbol(["Engine"], ["start_line"]) == [("e:LLMEngine:1", "Engine", 2)]
    assert again.records_by_symbol([], []) == []


def _definition_and_caller() -> list[Document]:
    header = "File: {} | Symbol: {} | Type: impl"
    definition = "def step(self):\n    return self._advance()"
    caller = (
        "def loop(engine):\n    while engine.scheduler.has_work():\n"
        "        engine.scheduler.step()  # scheduler step\n        engine.log(step)"
    )
    return [
        Document(
            id="definition",
            content=definition,
            meta={"header": header.format("core/scheduler.py", "Scheduler.step")},
        ),
        Document(id="caller", content=caller, meta={"header": header.format("core/loop.py", "loop")}),
    ] + [
        Document(
            id=f"other{i}",
            content=f"filler text number {i} about other things",
            meta={"header": header.format(f"x{i}.py", f"x{i}")},
        )
        for i in range(8)
    ]


def test_the_header_written_twice_puts_the_definition_above_a_caller_that_repeats_its_name():
    ranked = {}
    for weight in (1, 2):
        store = SQLiteBM25DocumentStore(header_weight=weight)
        store.write_documents(_definition_and_caller())
        ranked[weight] = [d.id for d in store.bm25_retrieval("What does Scheduler.step do?", top_k=2)]
    assert ranked == {1: ["caller", "definition"], 2: ["definition", "caller"]}


def test_a_question_about_initialization_finds_the_init_method_over_a_sibling_method():
    header = "File: models/nemotron_vl.py | Symbol: {} | Type: code"
    init = (
        "def __init__(self, config, min_dynamic_patch=None):\n    self.min_dynamic_patch = min_dynamic_patch"
    )
    sibling = "def resolve(self, min_dynamic_patch):\n    return min_dynamic_patch or self.min_dynamic_patch"
    docs = [
        Document(id="init", content=init, meta={"header": header.format("NemotronVLProcessor.__init__")}),
        Document(
            id="sibling", content=sibling, meta={"header": header.format("NemotronVLProcessor.resolve")}
        ),
    ] + [Document(id=f"other{i}", content=f"filler text number {i} about other things") for i in range(8)]
    store = SQLiteBM25DocumentStore(header_weight=2)
    store.write_documents(docs)
    asked = "What is the default value for min_dynamic_patch in NemotronVL model {}?"
    # the sibling names the parameter more often; "initialization" is what points at __init__
    assert [d.id for d in store.bm25_retrieval(asked.format("preprocessing"), top_k=2)] == ["sibling", "init"]
    assert [d.id for d in store.bm25_retrieval(asked.format("initialization"), top_k=2)] == [
        "init",
        "sibling",
    ]


def test_a_question_spelling_out_boolean_finds_the_function_code_calls_bool():
    header = "File: src/input/shared.rs | Symbol: {} | Type: code"
    parse = 'pub fn str_as_bool(s: &str) -> bool {\n    s == "1" || s == "true" || s == "yes"\n}'
    listed = "pub fn is_listed(text: &str, values: &[&str]) -> Truth {\n    LISTED.contains(&text)\n}"
    docs = [
        Document(id="parse", content=parse, meta={"header": header.format("str_as_bool")}),
        Document(id="listed", content=listed, meta={"header": header.format("is_listed")}),
    ] + [Document(id=f"other{i}", content=f"filler words number {i} about other things") for i in range(8)]
    store = SQLiteBM25DocumentStore(header_weight=2)
    store.write_documents(docs)
    question = "Which text values mean true for a boolean?"
    # the other function writes the question's "text" and "values"; "boolean" also asks for `bool`
    # (components.abbreviations), which the parser's name and return type write
    assert [d.id for d in store.bm25_retrieval(question, top_k=2)] == ["parse", "listed"]
    assert "bool" not in tokenize(question)  # the index's tokens are not changed by the rule


def test_index_yaml_writes_the_header_twice_and_the_qdrant_pair_weighs_it_the_same():
    from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict

    index = read_pipeline_dict(PIPELINES_DIR / "index.yaml")["components"]
    qdrant = read_pipeline_dict(PIPELINES_DIR / "index_qdrant.yaml")["components"]
    store = index["bm25_writer"]["init_parameters"]["document_store"]["init_parameters"]
    assert store["header_weight"] == 2 == qdrant["sparse"]["init_parameters"]["header_weight"]


def test_a_header_weight_below_one_is_refused_at_construction():
    with pytest.raises(ValueError, match="header_weight"):
        SQLiteBM25DocumentStore(header_weight=0)
