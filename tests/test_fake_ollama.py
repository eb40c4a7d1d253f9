"""The fake Ollama server speaks Ollama's protocol well enough for the real ollama-haystack components.

Everything here goes through the real ``ollama`` client (httpx) over 127.0.0.1; no model is loaded.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time

import httpx
import pytest
from haystack import Document
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack_integrations.components.embedders.ollama import OllamaDocumentEmbedder, OllamaTextEmbedder
from haystack_integrations.components.generators.ollama import OllamaChatGenerator
from ollama import Client, ResponseError

from tests.fake_ollama import DEFAULT_REPLY, FakeOllama, fake_ollama, last_user_text, tokenize  # noqa: F401

MODEL = "qwen3:0.6b"
USER = [ChatMessage.from_user("hi")]


@pytest.fixture
def fake():
    with FakeOllama(models={MODEL, "nomic-embed-text"}) as server:
        yield server


def streaming_generator(fake: FakeOllama, received: list, **kwargs) -> OllamaChatGenerator:
    def callback(chunk: StreamingChunk) -> None:
        received.append((time.monotonic(), chunk))

    return OllamaChatGenerator(model=MODEL, url=fake.url, streaming_callback=callback, **kwargs)


def test_streamed_answer_arrives_token_by_token_through_real_ollama_chat_generator(fake):
    fake.token_delay = 0.03
    received: list[tuple[float, StreamingChunk]] = []

    reply = streaming_generator(fake, received).run(messages=USER)["replies"][0]

    tokens = tokenize(DEFAULT_REPLY)
    contents = [chunk.content for _, chunk in received if chunk.content]
    assert len(contents) > 3
    assert contents == tokens  # one StreamingChunk per token, in order
    assert "".join(contents) == DEFAULT_REPLY
    assert reply.text == DEFAULT_REPLY
    # The last chunk is Ollama's final object: done, finish reason and usage, no content.
    last = received[-1][1]
    assert last.content == "" and last.finish_reason == "stop" and last.meta["done"] is True
    assert reply.meta["finish_reason"] == "stop"
    assert reply.meta["usage"]["completion_tokens"] == len(tokens)
    # Tokens arrive over time, one by one, not in one burst at the end.
    stamps = [t for t, chunk in received if chunk.content]
    assert all(b > a for a, b in zip(stamps, stamps[1:], strict=False))
    assert stamps[-1] - stamps[0] >= (len(stamps) - 1) * fake.token_delay * 0.5
    assert fake.requests_to("/api/chat")[-1].body["stream"] is True


def test_non_streaming_chat_returns_the_full_reply_with_usage_meta(fake):
    reply = OllamaChatGenerator(model=MODEL, url=fake.url).run(messages=USER)["replies"][0]

    assert reply.text == DEFAULT_REPLY
    assert reply.meta["finish_reason"] == "stop"
    assert reply.meta["usage"]["completion_tokens"] == len(tokenize(DEFAULT_REPLY))
    assert reply.meta["usage"]["prompt_tokens"] == 1
    assert fake.requests_to("/api/chat")[-1].body["stream"] is False


def test_async_streaming_through_run_async_delivers_every_token(fake):
    received: list[tuple[float, StreamingChunk]] = []
    generator = streaming_generator(fake, received)

    reply = asyncio.run(generator.run_async(messages=USER))["replies"][0]

    assert reply.text == DEFAULT_REPLY
    assert [c.content for _, c in received if c.content] == tokenize(DEFAULT_REPLY)


def test_reply_callable_lets_one_server_act_as_rewriter_and_answerer(fake):
    def reply(request: dict) -> str:
        if last_user_text(request).startswith("Rewrite:"):
            return "where is parse_config defined"
        return f"Answer to: {last_user_text(request)}"

    fake.reply = reply
    generator = OllamaChatGenerator(model=MODEL, url=fake.url)

    rewritten = generator.run(messages=[ChatMessage.from_user("Rewrite: parse config?")])["replies"][0]
    answer = generator.run(messages=[ChatMessage.from_user(rewritten.text)])["replies"][0]
    assert rewritten.text == "where is parse_config defined"
    assert answer.text == "Answer to: where is parse_config defined"

    fake.reply = "changed between requests"  # knobs apply from the next request on
    assert generator.run(messages=USER)["replies"][0].text == "changed between requests"


def test_text_embedder_gets_deterministic_unit_vectors_of_the_configured_dimension(fake):
    embedder = OllamaTextEmbedder(model="nomic-embed-text", url=fake.url)

    first = embedder.run(text="def parse_config(path): ...")["embedding"]
    again = embedder.run(text="def parse_config(path): ...")["embedding"]
    other = embedder.run(text="class Walker: ...")["embedding"]

    assert len(first) == 8
    assert first == again == fake.embedding_for("def parse_config(path): ...")
    assert other != first
    assert math.isclose(sum(v * v for v in first), 1.0, rel_tol=1e-9)
    fake.embedding_dim = 16
    assert len(embedder.run(text="x")["embedding"]) == 16
    small = OllamaTextEmbedder(model="nomic-embed-text", url=fake.url, dimensions=4)
    assert len(small.run(text="x")["embedding"]) == 4
    assert fake.requests_to("/api/embed")[0].body["input"] == "def parse_config(path): ..."


def test_document_embedder_batches_inputs_and_gets_the_same_vector_per_text(fake):
    docs = [Document(content=f"chunk {i}") for i in range(3)]
    embedder = OllamaDocumentEmbedder(model="nomic-embed-text", url=fake.url, batch_size=2)
    embedder.progress_bar = False

    out = embedder.run(documents=docs)["documents"]

    assert [d.embedding for d in out] == [fake.embedding_for(d.content) for d in docs]
    assert [r.body["input"] for r in fake.requests_to("/api/embed")] == [["chunk 0", "chunk 1"], ["chunk 2"]]


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_unknown_model_raises_response_error_404_not_found(fake, streaming):
    kwargs = {"streaming_callback": lambda chunk: None} if streaming else {}
    generator = OllamaChatGenerator(model="missing:7b", url=fake.url, **kwargs)

    with pytest.raises(ResponseError, match='model "missing:7b" not found, try pulling it first') as err:
        generator.run(messages=USER)
    assert err.value.status_code == 404


def test_model_names_without_a_tag_match_latest_like_ollama(fake):
    fake.models = {"llama3"}
    assert OllamaChatGenerator(model="llama3:latest", url=fake.url).run(messages=USER)["replies"][0].text
    fake.models = {"llama3:latest"}
    assert OllamaChatGenerator(model="llama3", url=fake.url).run(messages=USER)["replies"][0].text


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_server_hanging_past_client_timeout_raises_httpx_read_timeout_within_two_seconds(fake, streaming):
    fake.hang_seconds = 30
    kwargs = {"streaming_callback": lambda chunk: None} if streaming else {}
    generator = OllamaChatGenerator(model=MODEL, url=fake.url, timeout=1, **kwargs)

    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        generator.run(messages=USER)
    assert time.monotonic() - started < 2.0


def test_connection_cut_mid_stream_raises_remote_protocol_error_after_the_partial_tokens(fake):
    """Cut mid-stream: the callback has already received the first tokens, then ``run`` raises
    ``httpx.RemoteProtocolError`` ("incomplete chunked read"); no partial reply is returned.
    The ollama client does not wrap it, and ollama-haystack does not treat it as retryable."""
    fake.cut_after_tokens = 3
    received: list[tuple[float, StreamingChunk]] = []

    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        streaming_generator(fake, received).run(messages=USER)
    assert [c.content for _, c in received] == tokenize(DEFAULT_REPLY)[:3]


def test_connection_cut_before_a_non_streamed_answer_raises_remote_protocol_error(fake):
    fake.cut_after_tokens = 0
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        OllamaChatGenerator(model=MODEL, url=fake.url).run(messages=USER)


def test_error_line_mid_stream_raises_response_error_with_ollamas_message(fake):
    fake.configure(cut_after_tokens=2, stream_error="model runner has unexpectedly stopped")
    received: list[tuple[float, StreamingChunk]] = []

    with pytest.raises(ResponseError, match="model runner has unexpectedly stopped"):
        streaming_generator(fake, received).run(messages=USER)
    assert len(received) == 2


def test_http_500_raises_response_error_with_the_servers_message(fake):
    fake.configure(status_code=500, error_message="boom", status_code_times=1)
    generator = OllamaChatGenerator(model=MODEL, url=fake.url)

    with pytest.raises(ResponseError, match="boom") as err:
        generator.run(messages=USER)
    assert err.value.status_code == 500
    assert generator.run(messages=USER)["replies"][0].text == DEFAULT_REPLY  # only the next 1 request failed
    assert fake.status_code is None


def test_generator_retries_a_non_streamed_5xx_when_max_retries_is_set(fake):
    fake.configure(status_code=503, status_code_times=1)

    reply = OllamaChatGenerator(model=MODEL, url=fake.url, max_retries=1).run(messages=USER)["replies"][0]

    assert reply.text == DEFAULT_REPLY
    assert len(fake.requests_to("/api/chat")) == 2


def test_generator_does_not_retry_streamed_requests_even_with_max_retries(fake):
    """The streamed request is only sent while iterating, outside the retried ``_chat`` call."""
    fake.status_code = 503
    generator = streaming_generator(fake, [], max_retries=2)

    with pytest.raises(ResponseError) as err:
        generator.run(messages=USER)
    assert err.value.status_code == 503
    assert len(fake.requests_to("/api/chat")) == 1


def test_requests_are_recorded_with_messages_and_generation_kwargs_as_options(fake):
    generator = OllamaChatGenerator(
        model=MODEL, url=fake.url, generation_kwargs={"num_ctx": 4096, "temperature": 0.7}, keep_alive="5m"
    )
    messages = [ChatMessage.from_system("You answer from code."), ChatMessage.from_user("Where is main?")]

    generator.run(messages=messages, generation_kwargs={"temperature": 0.0})

    (request,) = fake.requests_to("/api/chat")
    assert request.method == "POST"
    assert request.body["model"] == MODEL
    assert request.body["messages"] == [
        {"role": "system", "content": "You answer from code."},
        {"role": "user", "content": "Where is main?"},
    ]
    assert request.body["options"] == {"num_ctx": 4096, "temperature": 0.0}
    assert request.body["keep_alive"] == "5m"
    assert request.body["think"] is False
    assert request.headers["content-type"] == "application/json"


def test_ollama_client_lists_shows_generates_and_reports_version(fake):
    client = Client(host=fake.url, timeout=5)

    assert sorted(m.model for m in client.list().models) == ["nomic-embed-text:latest", MODEL]
    assert client.show(MODEL).capabilities == ["completion"]
    with pytest.raises(ResponseError) as err:
        client.show("missing")
    assert err.value.status_code == 404
    parts = list(client.generate(model=MODEL, prompt="hi", stream=True))
    assert "".join(p.response for p in parts) == DEFAULT_REPLY
    assert parts[-1].done is True and parts[-1].done_reason == "stop" and parts[-1].context
    assert client.generate(model=MODEL, prompt="hi").response == DEFAULT_REPLY
    assert httpx.get(fake.url + "/").text == "Ollama is running"
    assert httpx.get(fake.url + "/api/version").json()["version"]


def test_stop_returns_promptly_while_a_handler_hangs(fake):
    fake.hang_seconds = 60
    outcome: list[BaseException | httpx.Response] = []

    def call() -> None:
        try:
            body = {"model": MODEL, "messages": []}
            outcome.append(httpx.post(fake.url + "/api/chat", json=body, timeout=30))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not fake.requests_to("/api/chat"):
        time.sleep(0.01)

    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < 3
    caller.join(timeout=5)
    assert isinstance(outcome[0], httpx.RemoteProtocolError)  # connection dropped, no response
    assert not fake.running


def test_fake_ollama_fixture_yields_a_running_server_that_accepts_any_model(fake_ollama):  # noqa: F811
    reply = OllamaChatGenerator(model="any-model", url=fake_ollama.url).run(messages=USER)["replies"][0]
    assert reply.text == DEFAULT_REPLY
    assert fake_ollama.errors == []
