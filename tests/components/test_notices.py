"""Notices are data: each carries a kind through the pipeline, and the chat, CLI and eval read it."""

import copy
import pickle

import pytest
from haystack import Document, Pipeline

from codeground.app.serve.ui_format import notice_marker
from codeground.components.notices import (
    KINDS,
    LLM_FAILED,
    RERANK_UNAVAILABLE,
    REWRITTEN,
    UNKNOWN_IDENTIFIERS,
    Notice,
    kind_of,
)
from codeground.components.rankers.fallback import FallbackRanker


def test_a_notice_is_its_text_with_a_kind_that_copies_keep():
    notice = Notice(LLM_FAILED, "cannot reach the LLM server")
    assert notice == "cannot reach the LLM server" and isinstance(notice, str)
    for again in (copy.deepcopy(notice), pickle.loads(pickle.dumps(notice)), copy.copy(notice)):
        assert kind_of(again) == LLM_FAILED and again == notice
    assert kind_of("plain") is None
    with pytest.raises(ValueError, match="unknown notice kind"):
        Notice("colour", "x")


def test_the_kind_survives_a_haystack_pipeline_run():
    pipeline = Pipeline()
    ranker = FallbackRanker(
        ranker={
            "type": "haystack_integrations.components.rankers.sentence_transformers."
            "sentence_transformers_similarity.SentenceTransformersSimilarityRanker",
            "init_parameters": {"model": "/nonexistent/cross-encoder"},
        }
    )
    pipeline.add_component("ranker", ranker)
    docs = [Document(content="a", score=0.5), Document(content="b", score=0.4)]
    out = pipeline.run({"ranker": {"query": "q", "documents": docs}})
    [notice] = out["ranker"]["notices"]
    assert kind_of(notice) == RERANK_UNAVAILABLE


def test_the_chat_marks_a_notice_by_its_kind_not_its_wording():
    assert notice_marker(Notice(REWRITTEN, "anything at all")) == "→"
    assert notice_marker(Notice(UNKNOWN_IDENTIFIERS, "searched for: looks like a search")) == "⚠"
    assert {notice_marker(Notice(k, "x")) for k in KINDS} <= {"→", "⚠"}
