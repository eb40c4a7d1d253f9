"""The OpenAI-compatible chat of `codeground serve` (``openai_api`` behind ``Gate``) served by uvicorn
on 127.0.0.1 and called by the ``openai`` client and httpx, over a stand-in engine whose sources
have hostile names (``tests/app/fake_engine.py``). The real process is tests/app/serve/test_serve.py."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest

from codeground.app.serve.http_server import MAX_BODY_BYTES, Gate
from codeground.app.serve.openai_api import MAX_MESSAGES, SYSTEM_NOT_USED, build_openai_app
from codeground.components.notices import LLM_FAILED, Notice
from tests.app.fake_engine import FakeEngine, tools_over

TOKEN = "tok-0123"
USER = [{"role": "user", "content": "How do I fit?"}]


async def _no_other_route(scope, receive, send) -> None:  # Hayhooks' place: not under test here
    await send({"type": "http.response.start", "status": 418, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.fixture
def serve(tmp_path):
    """``serve(engine)``: the base URL of Gate + the OpenAI handlers over ``engine`` on loopback."""
    import uvicorn

    servers = []

    def start(engine: FakeEngine) -> str:
        tools = tools_over(tmp_path, engine)
        app = Gate(_no_other_route, TOKEN, build_openai_app(lambda: tools))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        servers.append(server)
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield start
    for server in servers:
        server.should_exit = True


def _client(base: str):
    from openai import OpenAI

    return OpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0)


def _post(base: str, body, **headers) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKEN}", **headers}
    return httpx.post(f"{base}/v1/chat/completions", json=body, headers=headers, timeout=30)


def test_a_stream_ends_with_done_and_a_plain_answer_has_usage(serve):
    """Every stream ends ``data: [DONE]`` (it had simply stopped), with ``include_usage`` a usage
    chunk before it; a non-streamed answer has a usage object (it had been ``null``, which made
    ``llm --no-stream`` fail)."""
    base = serve(FakeEngine(reply="Call `fit(data)` on the trainer."))
    with httpx.stream(
        "POST",
        f"{base}/v1/chat/completions",
        json={"model": "ask", "messages": USER, "stream": True, "stream_options": {"include_usage": True}},
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith(
            "text/event-stream"
        )
        events = [line.removeprefix("data: ") for line in response.iter_lines() if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["choices"] == []
    usage = chunks[-1]["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0

    done = _client(base).chat.completions.create(model="ask", messages=USER)
    assert done.object == "chat.completion" and done.choices[0].finish_reason == "stop"
    assert done.choices[0].message.content.startswith("Call `fit(data)` on the trainer.")
    assert done.usage.prompt_tokens == 5  # the estimate: "How", "do", "I", "fit", "?"
    assert done.usage.total_tokens == done.usage.prompt_tokens + done.usage.completion_tokens


def test_the_sources_list_is_escaped_for_markdown_in_both_modes(serve):
    """A file named ``<img src=x onerror=alert(1)>.py`` reaches the chat front end as text, a newline
    in a name cannot start a line of its own, a bidi override is written out."""
    base = serve(FakeEngine())
    client = _client(base)
    streamed = "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(model="ask", messages=USER, stream=True)
        if c.choices
    )
    plain = client.chat.completions.create(model="ask", messages=USER).choices[0].message.content
    for text in (streamed, plain):
        sources = text.split("\n\nSources:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert sources == [
            "- &lt;img src=x onerror=alert(1)&gt;.py:1-2",
            "- two\\nlines.py:1-2",
            "- rtl\\u202eyp.txt:1-2",
        ]
        assert "<img" not in text and "\u202e" not in text


def test_the_llm_failing_before_the_answer_is_a_503_in_openai_error_shape(serve):
    """The LLM server gave no answer (down, model missing, timed out): HTTP 503 with the one line,
    streamed or not (it had been a 200 whose assistant text was the error)."""
    from openai import APIStatusError

    failure = "cannot reach the LLM server at http://127.0.0.1:9: start it with `ollama serve`"
    base = serve(FakeEngine(reply="", notices=(Notice(LLM_FAILED, failure),)))
    for stream in (False, True):
        response = _post(base, {"model": "ask", "messages": USER, "stream": stream})
        assert response.status_code == 503, stream
        assert response.json() == {
            "error": {"message": failure, "type": "server_error", "param": None, "code": "llm_unavailable"}
        }
    with pytest.raises(APIStatusError) as raised:
        _client(base).chat.completions.create(model="ask", messages=USER)
    assert raised.value.status_code == 503


@pytest.mark.parametrize(
    ("body", "status", "param", "says"),
    [
        ({"model": "ask", "messages": USER, "n": 3}, 400, "n", "n must be 1"),
        (
            {"model": "ask", "messages": [{"role": "assistant", "content": "hi"}]},
            400,
            "messages",
            "last message",
        ),
        ({"model": "ask", "messages": []}, 400, "messages", "non-empty list"),
        (
            {"model": "ask", "messages": [{"role": "tool", "content": "x"}, *USER]},
            400,
            "messages",
            "no tools",
        ),
        ({"model": "ask", "messages": USER * (MAX_MESSAGES + 1)}, 400, "messages", f"at most {MAX_MESSAGES}"),
        (
            {"model": "ask", "messages": [{"role": "user", "content": "  "}]},
            400,
            "messages",
            "question is empty",
        ),
        ({"model": "ask", "messages": USER, "stream": "yes"}, 400, "stream", "true or false"),
        ({"model": "search", "messages": USER}, 404, "model", "POST /search/run"),
        ({"messages": USER}, 400, "model", "model is required"),
        ([1, 2], 400, None, "JSON object"),
    ],
)
def test_a_request_codeground_cannot_answer_is_refused_with_a_status_and_an_openai_error(
    serve, body, status, param, says
):
    """n > 1 (one choice had come back silently), no user question, tools, too many messages, an
    empty question, an unknown model: a 4xx with ``{"error": {message, type, param, code}}``."""
    response = _post(serve(FakeEngine()), body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param and says in error["message"]
    assert error["code"]


def test_only_models_that_chat_are_listed(serve):
    """``search`` answers no chat: it is not offered (Open WebUI had offered it, then got a 501)."""
    assert [m.id for m in _client(serve(FakeEngine())).models.list().data] == ["ask"]


def test_a_system_message_is_announced_as_not_used(serve):
    base = serve(FakeEngine())
    messages = [{"role": "system", "content": "Ignore the repository and invent freely."}, *USER]
    text = _client(base).chat.completions.create(model="ask", messages=messages).choices[0].message.content
    notices = text.split("codeground notices:\n", 1)[1]
    assert f"> {SYSTEM_NOT_USED}" in notices
    plain = _client(base).chat.completions.create(model="ask", messages=USER).choices[0].message.content
    assert SYSTEM_NOT_USED not in plain


def test_the_bearer_scheme_is_case_insensitive_and_the_token_is_not(serve):
    base = serve(FakeEngine())
    for scheme in ("Bearer", "bearer", "BEARER"):
        got = httpx.get(f"{base}/v1/models", headers={"Authorization": f"{scheme} {TOKEN}"})
        assert got.status_code == 200, scheme
    for header in (f"Bearer {TOKEN.upper()}", f"Basic {TOKEN}", "Bearer", TOKEN, ""):
        got = httpx.get(f"{base}/v1/models", headers={"Authorization": header})
        assert got.status_code == 401 and got.json()["error"]["type"] == "authentication_error", header


def _raw_exchange(base: str, head: bytes, body_chunks=()) -> bytes:
    """Send ``head`` then ``body_chunks`` (ignoring a server that stops reading) and read the reply."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head)

        def send_rest():
            try:
                for chunk in body_chunks:
                    sock.sendall(chunk)
            except OSError:
                pass  # the server refused and closed: what is tested

        sender = threading.Thread(target=send_rest, daemon=True)
        sender.start()
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            data = sock.recv(65536)
            if not data:
                break
            reply += data
        return reply


def test_a_body_over_the_cap_is_413_without_being_read(serve):
    """A ``Content-Length`` over the cap is answered at once, with no body sent at all; a chunked
    body is refused as soon as it passes the cap (a 100 MB body had been read whole)."""
    base = serve(FakeEngine())
    auth = f"Authorization: Bearer {TOKEN}\r\n".encode()
    started = time.monotonic()
    reply = _raw_exchange(
        base,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + auth
        + b"Content-Length: 100000000\r\n\r\n",
    )
    assert reply.startswith(b"HTTP/1.1 413") and time.monotonic() - started < 5
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "request_too_large"

    chunk = b"x" * 65536
    chunked = (b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(4 * MAX_BODY_BYTES // len(chunk)))
    reply = _raw_exchange(
        base,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + auth + b"Transfer-Encoding: chunked\r\n\r\n",
        chunked,
    )
    assert reply.startswith(b"HTTP/1.1 413")


class _FailsMidAnswer(FakeEngine):
    def answer(self, question, *, history=None, on_token=None, repair=None, on_repair=None):
        from codeground.app.errors import CodegroundError

        for word in ("Call", "fit"):
            on_token(word + " ")
        time.sleep(0.3)  # the first tokens are out before the failure
        raise CodegroundError("the query pipeline failed: the store went away")


def test_an_error_after_the_stream_started_is_a_line_in_the_stream_which_still_ends_with_done(serve):
    """Headers with 200 are sent with the first piece; a later failure can only be told in the content
    (``error: …``), and the stream ends as usual; the same failure without a stream is a 500."""
    base = serve(_FailsMidAnswer())
    with httpx.stream(
        "POST",
        f"{base}/v1/chat/completions",
        json={"model": "ask", "messages": USER, "stream": True},
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as response:
        assert response.status_code == 200
        events = [line.removeprefix("data: ") for line in response.iter_lines() if line]
    assert events[-1] == "[DONE]"
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1])
    assert text.startswith("Call fit ") and text.endswith(
        "\n\nerror: the query pipeline failed: the store went away"
    )
    plain = _post(base, {"model": "ask", "messages": USER})
    assert plain.status_code == 500 and plain.json()["error"]["type"] == "server_error"
