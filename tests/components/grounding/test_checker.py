"""Tests for GroundingChecker: grounded in the excerpts, known in the repository, or unknown."""

from __future__ import annotations

import copy

import pytest
from haystack import Document, Pipeline
from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.dataclasses import ChatMessage

from codeground.components.grounding.checker import GroundingChecker
from codeground.components.records import provenance_header, record_id
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed


def _record(path: str, symbol: str, line: int, source_type: str, content: str, **meta) -> Document:
    return Document(
        id=record_id(path, symbol, line),
        content=content,
        meta={
            "file_path": path,
            "symbol": symbol,
            "source_type": source_type,
            "start_line": line,
            "header": provenance_header(path, symbol, source_type),
            **meta,
        },
    )


TRAINER = _record(
    "pkg/trainer.py",
    "Trainer",
    1,
    "api",
    "class Trainer:\n    def __init__(self, model, trust_remote_code=False): ...",
)
FIT = _record(
    "pkg/trainer.py",
    "Trainer.fit",
    10,
    "api",
    'def fit(self, loader, max_epochs=1):\n    """Train the model."""',
    impl="def fit(self, loader, max_epochs=1):\n"
    "    for epoch in range(max_epochs):\n        self.step(loader)",
)
ENGINE = _record(
    "pkg/engine/llm_engine.py",
    "LLMEngine.add_request",
    40,
    "impl",
    "def add_request(self, request_id, prompt, sampling_params): ...",
)
GUIDE = _record("docs/guide.md", "Quickstart", 1, "docs", "# Quickstart\nCall `Trainer.fit` with a loader.")


@pytest.fixture
def store() -> SQLiteBM25DocumentStore:
    store = SQLiteBM25DocumentStore()
    store.write_documents([TRAINER, FIT, ENGINE, GUIDE])
    return store


def _reply(text: str) -> list[ChatMessage]:
    return [ChatMessage.from_assistant(text)]


def test_identifier_in_the_excerpts_is_grounded(store):
    checker = GroundingChecker(document_store=store)
    out = checker.run(replies=_reply("Use `Trainer(model, trust_remote_code=True)`."), documents=[TRAINER])
    assert out["grounding"]["grounded"] == ["Trainer", "trust_remote_code"]
    assert out["grounding"]["unknown"] == [] and out["notices"] == []


def test_meta_impl_counts_as_an_excerpt_and_a_dotted_name_falls_back_to_its_last_part(store):
    checker = GroundingChecker(document_store=store)
    answer = "```python\ntrainer.fit(loader, max_epochs=3)\nfor epoch in x:\n    trainer.step(loader)\n```"
    out = checker.run(replies=_reply(answer), documents=[FIT])
    assert out["grounding"]["identifiers"] == ["trainer.fit", "max_epochs", "trainer.step"]
    assert out["grounding"]["grounded"] == ["trainer.fit", "max_epochs", "trainer.step"]


def test_identifier_elsewhere_in_the_repository_is_known_but_not_in_excerpts(store):
    checker = GroundingChecker(document_store=store)
    answer = "LLMEngine.add_request takes sampling_params; see pkg.engine.llm_engine."
    out = checker.run(replies=_reply(answer), documents=[TRAINER])
    grounding = out["grounding"]
    assert grounding["known_not_in_excerpts"] == [
        "LLMEngine.add_request",
        "sampling_params",
        "pkg.engine.llm_engine",
    ]
    assert grounding["grounded"] == grounding["unknown"] == []
    assert out["notices"] == []


def test_invented_method_and_kwarg_are_unknown_and_named_in_the_notice(store):
    checker = GroundingChecker(document_store=store)
    answer = "Call `Trainer.fit_fast(loader)` or `Trainer(model, trust_remote=True)`."
    out = checker.run(replies=_reply(answer), documents=[TRAINER, FIT])
    grounding = out["grounding"]
    assert grounding["identifiers"] == ["Trainer.fit_fast", "Trainer", "trust_remote"]
    assert grounding["grounded"] == ["Trainer"]
    assert grounding["unknown"] == ["Trainer.fit_fast", "trust_remote"]
    assert out["notices"] == ["not found in this repository: Trainer.fit_fast, trust_remote"]


def test_known_is_case_sensitive_and_whole_words_not_bm25_tokens(store):
    checker = GroundingChecker(document_store=store)
    assert checker.is_known("trust_remote_code") and checker.is_known("LLMEngine")
    assert not checker.is_known("trust_remote")  # a BM25 part of trust_remote_code, not an identifier
    assert not checker.is_known("llmengine")
    assert checker.is_known("Trainer.fit") and checker.is_known("pkg.trainer")


def test_grounding_needs_word_boundaries(store):
    checker = GroundingChecker(document_store=store)
    out = checker.run(replies=_reply("Use `trust_remote`."), documents=[TRAINER])
    assert out["grounding"]["unknown"] == ["trust_remote"]


@pytest.mark.parametrize("replies", [[], _reply(""), [ChatMessage.from_assistant("The model is trained.")]])
def test_no_reply_or_no_identifiers_gives_an_empty_report_and_no_notice(store, replies):
    out = GroundingChecker(document_store=store).run(replies=replies, documents=[TRAINER])
    assert out == {
        "grounding": {"identifiers": [], "grounded": [], "known_not_in_excerpts": [], "unknown": []},
        "notices": [],
    }


def test_without_a_store_whatever_the_excerpts_lack_is_unknown():
    out = GroundingChecker().run(replies=_reply("`Trainer.fit` and `LLMEngine`"), documents=[FIT])
    assert out["grounding"]["grounded"] == ["Trainer.fit"]
    assert out["grounding"]["unknown"] == ["LLMEngine"]


def test_allowlist_names_are_not_checked(store):
    checker = GroundingChecker(document_store=store, allowlist=["torch"])
    out = checker.run(replies=_reply("Wrap it in `torch.no_grad()` and call `Trainer.fit`."), documents=[FIT])
    assert out["grounding"]["identifiers"] == ["Trainer.fit"]


def test_inputs_are_not_mutated(store):
    checker = GroundingChecker(document_store=store)
    replies = _reply("Call `Trainer.fit_fast(loader)`.")
    documents = [TRAINER, FIT]
    before = (copy.deepcopy(replies), copy.deepcopy(documents))
    checker.run(replies=replies, documents=documents)
    assert (replies, documents) == before


def test_round_trips_through_serialization_with_its_store(tmp_path):
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    checker = GroundingChecker(document_store=store, allowlist=["torch"])
    data = component_to_dict(checker, "grounding")
    assert data["type"] == "codeground.components.grounding.checker.GroundingChecker"
    assert (
        data["init_parameters"]["document_store"]["type"]
        == "codeground.components.stores.sqlite_bm25.SQLiteBM25DocumentStore"
    )
    with codeground_components_allowed():
        again = component_from_dict(GroundingChecker, data, "grounding")
    assert isinstance(again.document_store, SQLiteBM25DocumentStore)
    assert again.allowlist == ["torch"]
    assert component_to_dict(again, "grounding") == data


def test_round_trips_without_a_store():
    data = component_to_dict(GroundingChecker(), "grounding")
    with codeground_components_allowed():
        again = component_from_dict(GroundingChecker, data, "grounding")
    assert again.document_store is None and again.allowlist is None


def test_round_trips_through_pipeline_yaml(tmp_path):
    pipeline = Pipeline()
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    pipeline.add_component("grounding", GroundingChecker(document_store=store, allowlist=["np"]))
    text = pipeline.dumps()
    assert "codeground.components.grounding.checker.GroundingChecker" in text
    again = Pipeline.loads(text, allowed_modules=["codeground.components.*"])
    checker = again.get_component("grounding")
    assert isinstance(checker, GroundingChecker) and checker.allowlist == ["np"]
    assert again.dumps() == text


def _lang_store() -> SQLiteBM25DocumentStore:
    store = SQLiteBM25DocumentStore()
    store.write_documents(
        [
            _record("src/point.rs", "Point.new", 3, "impl", "pub fn new(x: i32) -> Self { Point { x } }"),
            _record("server.go", "Server.Start", 9, "impl", "func (s *Server) Start() error { return nil }"),
        ]
    )
    return store


def test_each_repository_languages_standard_names_are_not_claims_but_invented_methods_are():
    store = _lang_store()
    checker = GroundingChecker(document_store=store)
    checker.warm_up()
    reply = ChatMessage.from_assistant(
        "Call `Point::new(1)`, reserve with `Vec::with_capacity(8)`, or `Point::new_fast(1)`; "
        "then `s.Start()` after `http.HandleFunc` and `fmt.Println`; `Server.StartFast` does not exist."
    )
    report = checker.run(replies=[reply], documents=[])["grounding"]
    assert report["unknown"] == ["Point.new_fast", "Server.StartFast"]
    assert "Vec.with_capacity" not in report["identifiers"] and "fmt.Println" not in report["identifiers"]


def test_a_python_only_repository_does_not_allow_other_languages_standard_names(store):
    checker = GroundingChecker(document_store=store)
    checker.warm_up()
    reply = ChatMessage.from_assistant("Use `Vec::with_capacity(8)`.")
    assert checker.run(replies=[reply], documents=[])["grounding"]["unknown"] == ["Vec.with_capacity"]
