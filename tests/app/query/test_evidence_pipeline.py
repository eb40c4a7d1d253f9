"""query_evidence.yaml end to end (real index, fake Ollama): the refusal path makes no model call and
still lists the closest sources; a question the excerpts answer goes to the model as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from codeground.components.grounding.evidence import REFUSAL
from codeground.components.grounding.premise import REFUSAL as PREMISE_REFUSAL
from codeground.components.notices import NO_ANSWER, kind_of

EVIDENCE = PIPELINES_DIR / "query_evidence.yaml"


@pytest.fixture(scope="module")
def index_dir(indexed_sample) -> Path:
    return indexed_sample[1]


def test_a_question_the_excerpts_do_not_answer_is_refused_without_a_model_call(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="It does.")
    tokens: list[str] = []
    result = QueryEngine(index_dir, EVIDENCE).answer(
        "How do I bake a chocolate cake with sprinkles?", on_token=tokens.append
    )
    assert result.answer == REFUSAL and "".join(tokens) == REFUSAL
    assert NO_ANSWER in [kind_of(n) for n in result.notices]
    assert result.documents  # the closest sources are still listed
    assert fake_ollama.requests_to("/api/chat") == []


def test_the_premise_refusal_passes_through_the_judge(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="It does.")
    result = QueryEngine(index_dir, EVIDENCE).answer("How do I call `Trainer.fly_to_moon`?")
    assert result.answer == PREMISE_REFUSAL
    assert [n for n in result.notices if kind_of(n) == NO_ANSWER] == [
        "this repository has no Trainer.fly_to_moon; the model was not asked"
    ]
    assert fake_ollama.requests_to("/api/chat") == []


def test_a_question_the_excerpts_answer_reaches_the_model(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="`Trainer.fit(data)` trains it.")
    result = QueryEngine(index_dir, EVIDENCE).answer("What does Trainer.fit do with the data?")
    assert result.answer == "`Trainer.fit(data)` trains it."
    assert NO_ANSWER not in [kind_of(n) for n in result.notices]
