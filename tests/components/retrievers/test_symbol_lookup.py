"""Tests for SymbolRetriever: identifiers the user typed become exact symbol lookups."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.records import provenance_header, record_id
from codeground.components.retrievers.symbol_lookup import SymbolRetriever
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed


def _record(
    path: str, symbol: str, line: int, source_type: str = "impl", content: str | None = None
) -> Document:
    return Document(
        id=record_id(path, symbol, line),
        content=content or f"def {symbol.rsplit('.', 1)[-1]}(self): ...",
        meta={
            "file_path": path,
            "symbol": symbol,
            "source_type": source_type,
            "start_line": line,
            "end_line": line + 3,
            "header": provenance_header(path, symbol, source_type),
        },
    )


def _records() -> list[Document]:
    forward_classes = ["Attention", "MLP", "Decoder", "Encoder", "Embedding"]
    return [
        _record("trainer.py", "Trainer", 1, "api"),
        _record("trainer.py", "Trainer.fit", 10, "api"),
        _record("engine.py", "LLMEngine", 1, "api"),
        _record("engine.py", "LLMEngine.add_request", 40, "impl"),
        _record("models.py", "model", 1, "impl"),
        _record("loader.py", "load_weights", 80, "impl"),  # a second piece of a long definition ...
        _record("loader.py", "load_weights", 12, "impl"),  # ... written before its first piece
        *[_record("layers.py", f"{cls}.forward", 10 * i + 5) for i, cls in enumerate(forward_classes)],
        _record("docs/guide.md", "load_adapter", 1, "docs", content="# load_adapter\nHow to load one."),
        _record("notebooks/demo.ipynb", "run_inference", 3, "notebook", content="run_inference(x)"),
        _record("utils.py", "get_config", 1, "impl"),
        _record("utils.py", "set_seed", 9, "impl"),
        _record("utils.py", "make_cache", 20, "impl"),
    ]


@pytest.fixture(params=["sqlite", "in-memory"])
def retriever(request) -> SymbolRetriever:
    """The same rules whether the store looks names up itself (the BM25 store) or the retriever
    builds the vocabulary from any store's records (Haystack's in-memory store)."""
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = SQLiteBM25DocumentStore() if request.param == "sqlite" else InMemoryDocumentStore()
    store.write_documents(_records())
    return SymbolRetriever(document_store=store)


def test_the_bm25_store_answers_lookups_without_a_vocabulary_being_built(monkeypatch):
    store = SQLiteBM25DocumentStore()
    store.write_documents(_records())
    retriever = SymbolRetriever(document_store=store)
    listed = []
    monkeypatch.setattr(store, "meta_rows", lambda fields: listed.append(fields) or [])
    retriever.warm_up()
    assert _symbols(retriever.run(query="How does `Trainer.fit` work?")) == ["Trainer.fit", "Trainer"]
    assert listed == []


def _symbols(out: dict) -> list[str]:
    return [d.meta["symbol"] for d in out["documents"]]


def test_dotted_name_finds_the_method(retriever):
    out = retriever.run(query="What does Trainer.fit return?")
    assert _symbols(out)[0] == "Trainer.fit"
    assert out["documents"][0].id == "trainer.py:Trainer.fit:10"


def test_dotted_name_matches_via_full_symbol_and_via_last_part(retriever):
    out = retriever.run(query="How does LLMEngine.add_request queue work?")
    assert _symbols(out)[0] == "LLMEngine.add_request"
    assert _symbols(retriever.run(query="Who calls add_request?")) == ["LLMEngine.add_request"]


def test_module_qualified_path_finds_the_method(retriever):
    out = retriever.run(query="Is vllm.engine.LLMEngine.add_request thread safe?")
    assert "LLMEngine.add_request" in _symbols(out)


def test_one_record_per_symbol_even_when_named_twice(retriever):
    out = retriever.run(query="LLMEngine.add_request vs add_request")
    ids = [d.id for d in out["documents"]]
    assert len(ids) == len(set(ids))
    assert ids.count("engine.py:LLMEngine.add_request:40") == 1


def test_plain_english_words_are_not_looked_up_unless_backticked(retriever):
    assert retriever.run(query="How is the model trained?")["documents"] == []
    assert retriever.run(query="Model loading is slow")["documents"] == []
    assert _symbols(retriever.run(query="What does `model` return?")) == ["model"]


def test_key_naming_more_than_max_symbols_per_key_is_ignored(retriever):
    # `forward` is defined in 5 classes (> max_symbols_per_key=3): too generic to be a lookup
    assert retriever.run(query="What does `forward` compute?")["documents"] == []
    assert retriever.run(query="Explain forward_pass and `forward`")["documents"] == []
    # the full symbol stays an exact lookup
    assert _symbols(retriever.run(query="What does MLP.forward compute?")) == ["MLP.forward"]


def test_max_symbols_per_key_is_configurable(retriever):
    loose = SymbolRetriever(document_store=retriever.document_store, max_symbols_per_key=5, top_k=10)
    assert len(loose.run(query="What does `forward` compute?")["documents"]) == 5


def test_first_record_lowest_line_per_symbol(retriever):
    out = retriever.run(query="Where is load_weights defined?")
    assert [d.id for d in out["documents"]] == ["loader.py:load_weights:12"]


def test_docs_and_notebook_records_are_not_in_the_vocabulary(retriever):
    vocabulary = retriever.vocabulary
    assert "load_adapter" not in vocabulary and "run_inference" not in vocabulary
    assert {"Trainer.fit", "fit", "LLMEngine.add_request", "add_request", "model"} <= vocabulary
    assert retriever.run(query="How do I use load_adapter and `run_inference`?")["documents"] == []


def test_top_k_limits_records_in_question_order(retriever):
    query = "Compare get_config, set_seed and make_cache"
    assert _symbols(retriever.run(query=query)) == ["get_config", "set_seed", "make_cache"]
    narrow = SymbolRetriever(document_store=retriever.document_store, top_k=2)
    assert _symbols(narrow.run(query=query)) == ["get_config", "set_seed"]


def test_full_symbol_matches_come_before_last_part_matches(retriever):
    out = retriever.run(query="Does `fit` call set_seed?")
    assert _symbols(out) == ["set_seed", "Trainer.fit"]


def test_question_without_identifiers_returns_nothing(retriever):
    assert retriever.run(query="how do I install this?")["documents"] == []
    assert retriever.run(query="")["documents"] == []


def test_backticked_call_with_parentheses_is_looked_up(retriever):
    assert _symbols(retriever.run(query="What does `model()` return?")) == ["model"]


def test_round_trips_through_serialization_with_its_store(tmp_path):
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    retriever = SymbolRetriever(document_store=store, top_k=3, max_symbols_per_key=2, source_types=["api"])
    data = component_to_dict(retriever, "symbols")
    store_type = data["init_parameters"]["document_store"]["type"]
    assert store_type == "codeground.components.stores.sqlite_bm25.SQLiteBM25DocumentStore"
    with codeground_components_allowed():
        again = component_from_dict(SymbolRetriever, data, "symbols")
    assert isinstance(again.document_store, SQLiteBM25DocumentStore)
    assert (again.top_k, again.max_symbols_per_key, again.source_types) == (3, 2, ["api"])
    assert component_to_dict(again, "symbols") == data


def test_named_holds_only_symbols_the_question_writes_out_in_full(retriever):
    out = retriever.run(query="What does Trainer.fit return, and what does add_request do?")
    assert [d.meta["symbol"] for d in out["named"]] == ["Trainer.fit"]  # add_request alone is not named
    assert retriever.run(query="How do I use `Trainer`?")["named"] == []
