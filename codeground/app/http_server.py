"""`codeground serve`: the repository over HTTP on Hayhooks, for any OpenAI-compatible chat front end.

Two Hayhooks pipeline wrappers (``codeground/app/hayhooks_pipelines``) over one shared
``RepositoryTools``: ``search`` (``POST /search/run``) and ``ask`` (``POST /ask/run``, and the
OpenAI-compatible ``/v1/models`` + ``/v1/chat/completions`` with model ``ask``, streamed). The
wrappers are loaded once at start-up in Hayhooks' durable mode, which has no deploy or undeploy
routes: nobody can add a pipeline over HTTP. Tracing, the monitoring dashboard and cross-origin
requests are off, and only codeground's routes answer (``Gate``). The server binds to 127.0.0.1
unless told otherwise; with ``CODEGROUND_API_TOKEN`` set, every request needs
``Authorization: Bearer <token>`` (401 otherwise).

The index is checked before anything loads (one line if unusable); every question opens the live
generation (``EnginePool``), so a re-index is picked up between questions.
"""

from __future__ import annotations

import hmac
import json
import os
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.repair import marker
from codeground.app.repo_tools import RepositoryTools, answer_of

WRAPPERS_DIR = Path(__file__).resolve().parent / "hayhooks_pipelines"
TOKEN_ENV = "CODEGROUND_API_TOKEN"
_INDEX_ENV, _PIPELINE_ENV = "CODEGROUND_SERVE_INDEX_DIR", "CODEGROUND_SERVE_PIPELINE"
_tools: RepositoryTools | None = None
_tools_lock = threading.Lock()


def shared_tools() -> RepositoryTools:
    """The one ``RepositoryTools`` of this server process (both wrappers share its engines)."""
    global _tools
    with _tools_lock:
        if _tools is None:
            _tools = RepositoryTools(Path(os.environ[_INDEX_ENV]), Path(os.environ[_PIPELINE_ENV]))
        return _tools


def _turns(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """The last user message's text and the conversation before it as plain turns."""

    def text(message: dict[str, Any]) -> str:
        content = message.get("content") or ""
        if isinstance(content, list):  # OpenAI content parts
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)

    turns = [
        {"role": m["role"], "content": text(m)} for m in messages if m.get("role") in ("user", "assistant")
    ]
    if not turns or turns[-1]["role"] != "user":
        raise CodegroundError("the last message must be the user's question")
    return turns[-1]["content"], turns[:-1]


def chat_answer(tools: RepositoryTools, messages: list[dict[str, Any]]) -> Generator[str, None, None]:
    """The streamed answer for an OpenAI chat request: tokens as the model writes them (a corrected
    answer after a marked line: a stream cannot take back what it sent), then the cited
    ``path:start-end`` list and a marked notices block. An error is one line in the stream."""
    from codeground.app.engine_pool import stream_answer

    try:
        question, turns = _turns(messages)
    except CodegroundError as exc:
        yield f"error: {exc}"
        return
    streamed = False
    for kind, value in stream_answer(tools.pool, tools.pipeline, question, turns):
        if kind == "tokens":
            streamed = True
            yield value
        elif kind == "repair":
            yield marker(value)
        elif kind == "error":
            yield f"error: {value}"
        elif kind == "result":
            answer = answer_of(question, value)
            if not streamed and answer.answer:
                yield answer.answer  # a generator that does not stream
            yield "\n\nSources:\n" + "\n".join(f"- {c}" for c in answer.citations)
            notes = [*answer.notices]
            if answer.unknown_identifiers and not any("not found in this repository" in n for n in notes):
                notes.append(f"not found in this repository: {', '.join(answer.unknown_identifiers)}")
            if notes:
                yield "\n\n---\ncodeground notices:\n" + "\n".join(f"> {n}" for n in notes)


def api_call(call, *args: Any) -> dict[str, Any]:
    """A ``run_api`` body: its result as JSON, a ``CodegroundError`` as a 400 with the one line."""
    from fastapi import HTTPException

    try:
        return call(*args).model_dump()
    except CodegroundError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


# The routes codeground serves; Hayhooks' others (file uploads, pipeline drawings, which would fetch a
# renderer from the internet, the Responses API) answer 404.
ROUTES = frozenset(
    {
        "/status",
        "/search/run",
        "/ask/run",
        "/v1/models",
        "/models",
        "/v1/chat/completions",
        "/chat/completions",
    }
)
DOC_ROUTES = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect"})


class Gate:
    """ASGI middleware in front of Hayhooks: only :data:`ROUTES` (and the OpenAPI docs) answer, and
    with a token every request needs ``Authorization: Bearer <token>`` (401 otherwise)."""

    def __init__(self, app, token: str | None) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            if self.expected is not None:
                given = dict(scope.get("headers") or []).get(b"authorization", b"")
                if not hmac.compare_digest(given, self.expected):
                    headers = [(b"www-authenticate", b"Bearer")]
                    return await _reply(send, 401, "missing or wrong bearer token", headers)
            if scope.get("path") not in ROUTES | DOC_ROUTES:
                return await _reply(send, 404, "not found")
        await self.app(scope, receive, send)


async def _reply(send, status: int, detail: str, headers: list | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def build_app(index_dir: Path, pipeline: Path, *, token: str | None = None):
    """The Hayhooks app over ``index_dir`` answering with ``pipeline`` (see the module docstring);
    ``serve`` has checked both."""
    os.environ[_INDEX_ENV], os.environ[_PIPELINE_ENV] = (
        str(Path(index_dir).resolve()),
        str(Path(pipeline).resolve()),
    )
    # Hayhooks reads its settings from the environment when first imported
    os.environ.update(
        {
            "HAYHOOKS_DURABLE_MODE": "true",  # pipelines load once at start-up; no deploy/undeploy routes
            "HAYHOOKS_PIPELINES_DIR": str(WRAPPERS_DIR),
            "HAYHOOKS_TRACING_ENABLED": "false",
            "HAYHOOKS_MONITORING_ENABLED": "false",
            "HAYHOOKS_SHOW_TRACEBACKS": "false",
            "HAYHOOKS_CORS_ALLOW_ORIGINS": "[]",  # no web page elsewhere may call this server from a browser
        }
    )
    # Hayhooks' start-up lines ("INFO | Loaded pipeline 'ask' from …") stand above our own announcement;
    # its warnings and errors still show, and a level the user set (HAYHOOKS_LOG_LEVEL or LOG) is kept
    if not (os.environ.get("HAYHOOKS_LOG_LEVEL") or os.environ.get("LOG")):
        os.environ["HAYHOOKS_LOG_LEVEL"] = "WARNING"
    from hayhooks import create_app

    return Gate(create_app(), token)


def serve(index_dir: Path, pipeline: Path, *, host: str = "127.0.0.1", port: int = 1416) -> None:
    """Serve until interrupted; ``CODEGROUND_API_TOKEN`` (if set) is the bearer token. What was asked
    is checked first (``check_query``), then where to listen (``check_listen_address``), each a
    one-line ``CodegroundError`` before anything loads."""
    import sys

    import uvicorn

    from codeground.app.listen_address import (
        bind_name,
        check_listen_address,
        is_loopback,
        listen_url,
        url_host,
    )
    from codeground.app.query import check_query

    check_query(index_dir, pipeline)
    check_listen_address(host, port)
    token = os.environ.get(TOKEN_ENV) or None
    app = build_app(index_dir, pipeline, token=token)
    if not is_loopback(host) and not token:
        print(
            f"warning: serving on {url_host(host)} without {TOKEN_ENV}: anyone who can reach it can query",
            file=sys.stderr,
        )
    base = listen_url(host, port)
    print(
        f"codeground serving {index_dir} on {base}: POST /search/run, POST /ask/run, "
        f"OpenAI base URL {base}/v1 (model 'ask'){'; bearer token required' if token else ''}",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=bind_name(host), port=port, log_level="warning")
