"""The fake Ollama's `/api/embed` input rules and `/api/pull` stream, through the real `ollama` client."""

from __future__ import annotations

import pytest
from ollama import Client, ResponseError

from tests.fake_ollama import FakeOllama, hash_embedding


@pytest.fixture
def fake():
    with FakeOllama(models={"nomic-embed-text"}, pullable={"qwen2.5-coder:7b", "nomic-embed-text"}) as server:
        yield server


def test_embed_takes_a_string_or_a_list_and_an_empty_string_embeds_nothing(fake):
    client = Client(host=fake.url)
    assert len(client.embed(model="nomic-embed-text", input="one").embeddings) == 1
    assert len(client.embed(model="nomic-embed-text", input=["a", "b", ""]).embeddings) == 3
    assert client.embed(model="nomic-embed-text", input="").embeddings == []


def test_embed_refuses_non_string_inputs_with_ollamas_400(fake):
    import httpx

    reply = httpx.post(f"{fake.url}/api/embed", json={"model": "nomic-embed-text", "input": ["a", 3]})
    assert reply.status_code == 400 and reply.json() == {"error": "invalid input type"}


def test_embed_cuts_long_inputs_to_the_context_unless_truncate_is_false(fake):
    fake.configure(embed_context_tokens=2)
    client = Client(host=fake.url)
    cut = client.embed(model="nomic-embed-text", input="alpha beta gamma delta")
    assert cut.embeddings[0] == pytest.approx(hash_embedding("alpha beta ", fake.embedding_dim))
    assert cut.prompt_eval_count == 2
    with pytest.raises(ResponseError, match="exceeds maximum context length") as err:
        client.embed(model="nomic-embed-text", input="alpha beta gamma", truncate=False)
    assert err.value.status_code == 400


def test_pull_streams_progress_then_success_and_the_model_is_listed(fake):
    client = Client(host=fake.url)
    assert "qwen2.5-coder:7b" not in {m.model for m in client.list().models}
    statuses = [p.status for p in client.pull("qwen2.5-coder:7b", stream=True)]
    assert statuses[0] == "pulling manifest" and statuses[-1] == "success"
    assert any(s.startswith("pulling ") and s != "pulling manifest" for s in statuses)
    assert "qwen2.5-coder:7b" in {m.model for m in client.list().models}
    assert fake.requests_to("/api/pull")[-1].body["model"] == "qwen2.5-coder:7b"


def test_pull_of_a_name_the_registry_lacks_ends_with_an_error_line(fake):
    client = Client(host=fake.url)
    with pytest.raises(ResponseError, match="file does not exist"):
        list(client.pull("no-such-model", stream=True))
    with pytest.raises(ResponseError, match="file does not exist"):
        client.pull("no-such-model", stream=False)
    assert "no-such-model:latest" not in {m.model for m in client.list().models}
