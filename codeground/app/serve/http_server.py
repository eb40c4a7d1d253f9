"""`codeground serve`: the repository over HTTP on Hayhooks, for any OpenAI-compatible chat front end.

Two Hayhooks pipeline wrappers (``codeground/app/serve/hayhooks_pipelines``) over one shared
``RepositoryTools``: ``search`` (``POST /search/run``) and ``ask`` (``POST /ask/run``); the
OpenAI-compatible ``/v1/models`` + ``/v1/chat/completions`` (model ``ask``, streamed or not) are
codeground's own handlers (``codeground.app.serve.openai_api``), which ``Gate`` serves in front of
Hayhooks. The wrappers are loaded once at start-up in Hayhooks' durable mode, which has no deploy or
undeploy routes: nobody can add a pipeline over HTTP. Tracing, the monitoring dashboard and
cross-origin requests are off, and only codeground's routes answer (``Gate``). The server binds to
127.0.0.1 unless told otherwise.

Rules (``Gate``, before anything is parsed):
- Token: with ``CODEGROUND_API_TOKEN`` set, every request needs ``Authorization: Bearer <token>``
  (401 otherwise). The scheme is case-insensitive (RFC 7235: ``bearer`` is ``Bearer``); the token
  is compared in constant time.
- Size: a request body is at most :data:`MAX_BODY_BYTES`. A ``Content-Length`` over it is refused
  with 413 before a byte of the body is read; a body without one is counted as it arrives and
  refused with 413 as soon as it passes the cap. So no request can make the server hold more.
- Work: the event loop only reads and parses bodies (small, by the cap); questions and searches run
  in threads (Hayhooks runs a sync ``run_api`` in its thread pool, the chat handlers theirs), so one
  client's request never holds another's, ``/status`` included.
- Bad input: a body that does not fit a route's parameters (``k`` a float, a bool, infinity, out of
  ``1..MAX_K``; a missing question) is a 422 whose ``detail`` is one line naming the field; a
  question the pipeline refuses is a 400 with its one line. Neither is logged as a server error.

The index is checked before anything loads (one line if unusable); every question opens the live
generation (``EnginePool``), so a re-index is picked up between questions.
"""

from __future__ import annotations

import hmac
import json
import os
import threading
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.serve.repo_tools import RepositoryTools

WRAPPERS_DIR = Path(__file__).resolve().parent / "hayhooks_pipelines"
TOKEN_ENV = "CODEGROUND_API_TOKEN"
_INDEX_ENV, _PIPELINE_ENV = "CODEGROUND_SERVE_INDEX_DIR", "CODEGROUND_SERVE_PIPELINE"
MAX_BODY_BYTES = 1024 * 1024  # one question and its conversation fit many times over
_tools: RepositoryTools | None = None
_tools_lock = threading.Lock()


def shared_tools() -> RepositoryTools:
    """The one ``RepositoryTools`` of this server process (both wrappers share its engines)."""
    global _tools
    with _tools_lock:
        if _tools is None:
            _tools = RepositoryTools(Path(os.environ[_INDEX_ENV]), Path(os.environ[_PIPELINE_ENV]))
        return _tools


def api_call(call, *args: Any) -> dict[str, Any]:
    """A ``run_api`` body: its result as JSON, a ``CodegroundError`` as a 400 with the one line."""
    from fastapi import HTTPException

    try:
        return call(*args).model_dump()
    except CodegroundError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


def validation_error(request, exc) -> Any:
    """A body that does not fit a route's parameters: 422 with one line naming the field (FastAPI's
    own reply echoes the input, and an input such as ``1e400`` (infinity) cannot be written as JSON)."""
    from fastapi.responses import JSONResponse

    error = (exc.errors() or [{}])[0]
    if error.get("type") == "json_invalid":
        line = "the request body is not valid JSON"
    else:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        given = error.get("input")
        got = f" (got {given!r:.60})" if isinstance(given, int | float | str | bool) else ""
        line = f"{where}: {error.get('msg', 'invalid')}{got}"
    return JSONResponse({"detail": line}, status_code=422)


# The routes codeground serves; Hayhooks' others (file uploads, pipeline drawings, which would fetch a
# renderer from the internet, the Responses API) answer 404.
OPENAI_ROUTES = frozenset({"/v1/models", "/models", "/v1/chat/completions", "/chat/completions"})
ROUTES = frozenset({"/status", "/search/run", "/ask/run"}) | OPENAI_ROUTES
DOC_ROUTES = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect"})


def bearer_token(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header, the scheme in any letter case."""
    given = dict(headers).get(b"authorization", b"")
    scheme, _, token = given.strip().partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" and token.strip() else None


class Gate:
    """ASGI middleware in front of Hayhooks: only :data:`ROUTES` (and the OpenAPI docs) answer, the
    token and the body size are checked (the module docstring's rules), and the OpenAI routes go to
    codeground's handlers (``openai_api``), which answer errors in OpenAI's error shape."""

    def __init__(self, app, token: str | None, openai_app=None) -> None:
        self.app = app
        self.openai_app = openai_app
        self.expected = token.encode() if token else None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        openai = scope.get("path") in OPENAI_ROUTES and self.openai_app is not None
        if self.expected is not None:
            given = bearer_token(scope.get("headers") or [])
            if given is None or not hmac.compare_digest(given, self.expected):
                headers = [(b"www-authenticate", b"Bearer")]
                return await _reply(send, 401, "missing or wrong bearer token", openai, headers)
        if scope.get("path") not in ROUTES | DOC_ROUTES:
            return await _reply(send, 404, "not found", openai)
        body = await _body_within_cap(scope, receive)
        if body is None:
            return await _reply(send, 413, _TOO_LARGE, openai)
        await (self.openai_app if openai else self.app)(scope, _replay(body, receive), send)


_TOO_LARGE = f"the request body is over {MAX_BODY_BYTES:,} bytes: send one question and its latest turns"


async def _body_within_cap(scope, receive) -> bytes | None:
    """The whole body, or ``None`` as soon as it is known to pass :data:`MAX_BODY_BYTES`."""
    length = dict(scope.get("headers") or []).get(b"content-length")
    if length is not None and (not length.strip().isdigit() or int(length) > MAX_BODY_BYTES):
        return None  # refused before a byte is read
    parts, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            break
        parts.append(message.get("body", b""))
        size += len(parts[-1])
        if size > MAX_BODY_BYTES:
            return None
        more = message.get("more_body", False)
    return b"".join(parts)


def _replay(body: bytes, receive):
    """A ``receive`` that gives the read body once, then whatever the client does next (a disconnect)."""
    given = False

    async def replay():
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _reply(send, status: int, detail: str, openai: bool = False, headers: list | None = None) -> None:
    if openai:
        from codeground.app.serve.openai_api import error_body

        kind = {401: "authentication_error", 404: "invalid_request_error"}.get(
            status, "invalid_request_error"
        )
        code = {401: "invalid_api_key", 413: "request_too_large"}.get(status)
        body = error_body(status, detail, kind, code)
    else:
        body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), *(headers or [])]
    headers.append((b"content-length", str(len(body)).encode()))
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
    from fastapi.exceptions import RequestValidationError
    from hayhooks import create_app

    from codeground.app.serve.openai_api import build_openai_app

    app = create_app()
    app.add_exception_handler(RequestValidationError, validation_error)
    return Gate(app, token, build_openai_app(shared_tools))


def serve(index_dir: Path, pipeline: Path, *, host: str = "127.0.0.1", port: int = 1416) -> None:
    """Serve until interrupted; ``CODEGROUND_API_TOKEN`` (if set) is the bearer token. What was asked
    is checked first (``check_query``), then where to listen (``check_listen_address``), each a
    one-line ``CodegroundError`` before anything loads."""
    import sys

    import uvicorn

    from codeground.app.query.engine import check_query
    from codeground.app.serve.listen_address import (
        bind_name,
        check_listen_address,
        is_loopback,
        listen_url,
        url_host,
    )

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
