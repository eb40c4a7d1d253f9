"""query.yaml's premise check end to end (the sample repository's real index, fake Ollama): a question
asking about a name the repository lacks is refused without a model call, with the closest sources;
a name it spells otherwise reaches the model with the repository's spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from codeground.components.grounding.premise import REFUSAL
from codeground.components.notices import NO_ANSWER, UNKNOWN_IDENTIFIERS, kind_of

QUERY = PIPELINES_DIR / "query.yaml"


@pytest.fixture(scope="module")
def index_dir(indexed_sample) -> Path:
    return indexed_sample[1]


def _prompts(fake) -> list[str]:
    users = ([m for m in r.body["messages"] if m["role"] == "user"] for r in fake.requests_to("/api/chat"))
    return [u[-1]["content"] for u in users if u and "Repository material" in u[-1]["content"]]


def test_a_question_about_a_method_the_repository_lacks_is_refused_without_a_model_call(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="Call `Trainer.fly_to_moon()`.")
    tokens: list[str] = []
    result = QueryEngine(index_dir, QUERY).answer(
        "How do I call `Trainer.fly_to_moon`?", on_token=tokens.append
    )
    assert result.answer == REFUSAL and "".join(tokens) == REFUSAL
    said = [str(n) for n in result.notices if kind_of(n) == NO_ANSWER]
    assert said == ["this repository has no Trainer.fly_to_moon; the model was not asked"]
    assert UNKNOWN_IDENTIFIERS not in [kind_of(n) for n in result.notices]  # the refusal names nothing
    assert result.first_answer is None  # nothing to repair
    assert result.documents  # the closest sources are still listed
    assert _prompts(fake_ollama) == []


def test_a_name_the_repository_spells_otherwise_reaches_the_model_with_its_spelling(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="`Trainer.fit(data)` trains it.")
    result = QueryEngine(index_dir, QUERY).answer("What does `trainer.Fit` do with the data?")
    assert result.answer == "`Trainer.fit(data)` trains it."
    (prompt,) = _prompts(fake_ollama)
    assert "The question writes trainer.Fit; this repository writes fit" in prompt


def test_a_question_naming_what_the_repository_has_gets_no_note(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="`Trainer.fit(data)` trains it.")
    QueryEngine(index_dir, QUERY).answer("What does `Trainer.fit` do with the data?")
    (prompt,) = _prompts(fake_ollama)
    assert "Note:" not in prompt
