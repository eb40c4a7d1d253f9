"""The OpenAI-compatible query variant (pipelines/query_openai.yaml) over a real index of the sample
repository, answering through the fake Ollama server's ``/v1`` endpoint with the real ``openai`` client."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from tests.conftest import closed_port

QUERY_OPENAI = PIPELINES_DIR / "query_openai.yaml"
MODEL = "qwen2.5-coder:7b"
QUESTION = "How do I fit a Trainer?"
REPLY = "Call `Trainer.fit` with your data (see pkg/trainer.py:33-35)."
KEY_VARS = ("CODEGROUND_OPENAI_API_KEY", "OPENAI_API_KEY")


@pytest.fixture(scope="module")
def index_dir(indexed_sample) -> Path:
    return indexed_sample[1]


def point_at(monkeypatch, base_url: str, key: str | None = "test-key") -> None:
    """Configure the OpenAI variant through the environment, as a user would."""
    monkeypatch.setenv("CODEGROUND_OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("CODEGROUND_OPENAI_MODEL", MODEL)
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    if key is not None:
        monkeypatch.setenv("CODEGROUND_OPENAI_API_KEY", key)


def llm_notices(notices: list[str]) -> list[str]:
    """Notices other than the reranker's offline fallback (the only other source without history)."""
    return [n for n in notices if not n.startswith("reranking unavailable")]


def test_openai_compatible_endpoint_streams_the_answer_token_by_token(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    point_at(monkeypatch, f"{fake_ollama.url}/v1")
    fake_ollama.configure(reply=REPLY, token_delay=0.01)
    tokens: list[tuple[float, str]] = []
    result = QueryEngine(index_dir, QUERY_OPENAI).answer(
        QUESTION, on_token=lambda t: tokens.append((time.perf_counter(), t))
    )
    assert result.answer == REPLY
    words = [(at, t) for at, t in tokens if t]
    assert len(words) > 3 and "".join(t for _, t in tokens) == REPLY
    assert words[-1][0] > words[0][0]
    assert result.documents and result.cited_files
    assert llm_notices(result.notices) == []

    assert not fake_ollama.requests_to("/api/chat"), "the answer must come through /v1, not /api/chat"
    (request,) = fake_ollama.requests_to("/v1/chat/completions")
    assert request.method == "POST"
    assert request.headers["authorization"] == "Bearer test-key" and request.bearer_token == "test-key"
    body = request.body
    assert body["model"] == MODEL and body["stream"] is True and body["temperature"] == 0.1
    system, user = body["messages"][0], body["messages"][1]
    assert system["role"] == "system" and "Grounding contract" in system["content"]
    assert user["role"] == "user" and '<excerpt file="pkg/trainer.py"' in user["content"]
    assert fake_ollama.errors == []


def test_openai_variant_without_a_key_gives_sources_and_one_line(index_dir, fake_ollama, monkeypatch):
    point_at(monkeypatch, f"{fake_ollama.url}/v1", key=None)
    result = QueryEngine(index_dir, QUERY_OPENAI).answer(QUESTION)
    assert result.answer is None and result.documents
    notices = llm_notices(result.notices)
    assert len(notices) == 1 and "\n" not in notices[0]
    assert "key" in notices[0].lower()


def test_openai_endpoint_down_gives_sources_and_one_line_quickly(index_dir, monkeypatch):
    port = closed_port()
    point_at(monkeypatch, f"http://127.0.0.1:{port}/v1")
    engine = QueryEngine(index_dir, QUERY_OPENAI)
    engine.warm_up(with_answer=True)
    t0 = time.perf_counter()
    result = engine.answer(QUESTION)
    assert time.perf_counter() - t0 < 2.0
    assert result.answer is None and result.documents
    notices = llm_notices(result.notices)
    assert len(notices) == 1 and "cannot reach" in notices[0] and f"127.0.0.1:{port}" in notices[0]


def test_openai_endpoint_without_the_model_says_how_to_pull_it(index_dir, fake_ollama, monkeypatch):
    point_at(monkeypatch, f"{fake_ollama.url}/v1")
    fake_ollama.configure(models={"other:latest"})
    result = QueryEngine(index_dir, QUERY_OPENAI).answer(QUESTION)
    assert result.answer is None and result.documents
    notices = llm_notices(result.notices)
    assert len(notices) == 1 and f"ollama pull {MODEL}" in notices[0]
    (request,) = fake_ollama.requests_to("/v1/chat/completions")
    assert request.body["model"] == MODEL
