"""A protocol-faithful fake Ollama server for tests: stdlib HTTP on 127.0.0.1, no model, no GPU.

It speaks the parts of Ollama's REST API that ``ollama-haystack`` (``OllamaChatGenerator``,
``OllamaTextEmbedder``, ``OllamaDocumentEmbedder``) and the ``ollama`` Python client use:

- ``POST /api/chat`` and ``POST /api/generate``: streamed as ``application/x-ndjson`` with chunked
  transfer encoding (one JSON object per line, flushed one by one, then a final ``done: true`` object
  carrying ``done_reason``, token counts and durations), or one JSON object when ``stream`` is false.
  ``stream`` defaults to true, as in Ollama.
- ``POST /api/embed``: deterministic, L2-normalised vectors from a hash of each text. ``input`` is a
  string (empty: no embedding) or a list of strings (anything else: 400 ``invalid input type``); an input
  longer than ``embed_context_tokens`` is cut to it, or refused with 400 when ``truncate`` is false.
- ``POST /api/pull``: NDJSON progress (``pulling manifest``, ``pulling <digest>`` with ``total`` /
  ``completed``, ``verifying sha256 digest``, ``writing manifest``, ``success``), after which the model is
  listed by ``/api/tags``; a name the registry lacks streams ``pulling manifest`` then an ``{"error": ...}``
  line. ``stream: false`` answers one ``{"status": "success"}`` object (or HTTP 500 with the error).
- ``GET /api/tags``, ``POST /api/show``, ``GET /api/ps``, ``GET /api/version``, ``GET``/``HEAD /``.
- Unknown model: HTTP 404 ``{"error": "model \\"NAME\\" not found, try pulling it first"}``.
- Ollama's OpenAI-compatible endpoint, as the ``openai`` client (and Haystack's ``OpenAIChatGenerator``
  with ``api_base_url=f"{fake.url}/v1"``) uses it: ``POST /v1/chat/completions`` answers one
  ``chat.completion`` object, or, with ``"stream": true`` (the default here is false, as in the OpenAI
  API), ``text/event-stream`` events ``data: {chat.completion.chunk}`` per token (every delta carries
  ``role: "assistant"``, as Ollama's do), a final chunk with ``finish_reason: "stop"``, a usage chunk with
  empty ``choices`` when ``stream_options.include_usage`` is set, then ``data: [DONE]``.
  ``GET /v1/models`` lists ``models`` and ``GET /v1/models/NAME`` shows one. Errors there take the
  OpenAI shape Ollama uses: ``{"error": {"message", "type", "param", "code"}}`` with ``type``
  ``invalid_request_error`` (400), ``not_found_error`` (404) or ``api_error`` (anything else). The
  client's ``Authorization: Bearer KEY`` header is recorded (``RecordedRequest.bearer_token``).

Behaviour knobs are plain attributes (or ``configure(**knobs)`` to change several at once); each request
takes a consistent snapshot of them when it arrives, so they may be changed between requests from the
test thread. Every request is recorded in ``requests``.

Usage::

    with FakeOllama(reply="Hello there, world!", token_delay=0.01) as fake:
        gen = OllamaChatGenerator(model="qwen3:0.6b", url=fake.url)
        ...
        assert fake.requests_to("/api/chat")[-1].body["options"]["num_ctx"] == 4096

or the ``fake_ollama`` pytest fixture defined here (import it into a test module or a conftest).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "DEFAULT_REPLY",
    "FakeOllama",
    "RecordedRequest",
    "content_text",
    "fake_ollama",
    "last_user_text",
    "tokenize",
]

DEFAULT_REPLY = "The answer comes from the repository: see `main.py` lines 1-3."
OLLAMA_VERSION = "0.12.6"
_TOKEN_RE = re.compile(r"\S+\s*|\s+")
_KNOBS = (
    "models",
    "reply",
    "token_delay",
    "hang_seconds",
    "cut_after_tokens",
    "stream_error",
    "status_code",
    "status_code_times",
    "error_message",
    "embedding_dim",
    "embedding",
    "embed_context_tokens",
    "pullable",
)

ReplyT = str | Callable[[dict[str, Any]], str]


def tokenize(text: str) -> list[str]:
    """Split ``text`` into stream tokens, keeping whitespace: ``"".join(tokenize(t)) == t``."""
    return _TOKEN_RE.findall(text)


def content_text(content: Any) -> str:
    """A message's ``content`` as text: a string as is, OpenAI content parts (``[{"type": "text",
    "text": ...}, ...]``) joined, anything else empty."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text") or "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def last_user_text(request: dict[str, Any]) -> str:
    """The last user message of a ``/api/chat`` or ``/v1/chat/completions`` body, or the ``prompt`` of a
    ``/api/generate`` body."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return request.get("prompt") or ""


def _normalize_model(name: str) -> str:
    """Ollama resolves a name without a tag to ``:latest``."""
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


def _now() -> str:
    """RFC 3339 with nanoseconds, like Ollama's ``created_at``."""
    ns = time.time_ns()
    stamp = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{ns % 1_000_000_000:09d}Z"


def _count_tokens(body: dict[str, Any]) -> int:
    texts = [content_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]
    texts += [body.get("prompt") or "", body.get("system") or ""]
    return sum(len(tokenize(t)) for t in texts)


def hash_embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector of length ``dim`` derived from ``sha256(text)``."""
    raw: list[float] = []
    counter = 0
    while len(raw) < dim:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        raw.extend((b - 127.5) / 127.5 for b in digest)
        counter += 1
    raw = raw[:dim]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake received: ``body`` is the parsed JSON (``None`` for no or invalid body),
    ``headers`` have lower-cased names."""

    method: str
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    time: float = 0.0  # time.monotonic() on arrival

    @property
    def bearer_token(self) -> str | None:
        """The key of an ``Authorization: Bearer KEY`` header (as the ``openai`` client sends it), or None."""
        scheme, _, token = (self.headers.get("authorization") or "").partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None


class _Aborted(Exception):
    """The server is stopping (or the knob said so): drop the connection without a response."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, fake: FakeOllama) -> None:
        self.fake = fake
        self._conns: set[socket.socket] = set()
        self._conns_cv = threading.Condition()
        super().__init__(("127.0.0.1", fake.bind_port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup; skip it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def process_request(self, request, client_address) -> None:
        with self._conns_cv:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        try:
            super().shutdown_request(request)
        finally:
            with self._conns_cv:
                self._conns.discard(request)
                self._conns_cv.notify_all()

    def close_all_connections(self, wait: float = 2.0) -> None:
        with self._conns_cv:
            for conn in list(self._conns):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._conns_cv.wait_for(lambda: not self._conns, timeout=wait)

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, _Aborted, TimeoutError)):
            return
        self.fake.errors.append(exc)
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like Ollama's Go server
    server: _Server

    # ---------------------------------------------------------------- plumbing
    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeOllama:
        return self.server.fake

    def _read_body(self) -> tuple[bytes, Any, bool]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return raw, None, True
        try:
            return raw, json.loads(raw), True
        except ValueError:
            return raw, None, False

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_text(self, status: int, text: str, head: bool = False) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        if getattr(self, "_openai", False):
            return self._send_json(status, _openai_error(status, message))
        self._send_json(status, {"error": message})

    def _start_stream(self, content_type: str = "application/x-ndjson") -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream_line(self, obj: dict[str, Any]) -> None:
        self._write_chunk(json.dumps(obj).encode() + b"\n")

    def _stream_event(self, obj: dict[str, Any] | str) -> None:
        """One server-sent event, ``data: JSON\\n\\n`` (or ``data: [DONE]\\n\\n`` for a string)."""
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self._write_chunk(f"data: {payload}\n\n".encode())

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop_connection(self) -> None:
        """Close the socket abruptly: no terminating chunk, no final ``done`` object."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _wait(self, seconds: float) -> None:
        if seconds and seconds > 0 and self.fake._stopping.wait(seconds):
            raise _Aborted

    # ---------------------------------------------------------------- dispatch
    def do_HEAD(self) -> None:
        self.fake._record(self.command, self.path, None, self.headers)
        if self.path == "/":
            self._send_text(200, "Ollama is running", head=True)
        else:
            self._send_text(404, "404 page not found", head=True)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        _, body, valid = self._read_body()
        path = self.path.split("?", 1)[0]
        self.fake._record(self.command, path, body, self.headers)
        self._openai = path.startswith("/v1/")
        try:
            if path == "/" and self.command == "GET":
                return self._send_text(200, "Ollama is running")
            api = path.startswith(("/api/", "/v1/"))
            knobs = self.fake._snapshot(api=api)
            if api:
                self._wait(knobs["hang_seconds"])
                if knobs["status_code"] is not None:
                    return self._error(knobs["status_code"], knobs["error_message"])
            if not valid or (body is not None and not isinstance(body, dict)):
                return self._error(400, "invalid character in request body")
            route = _ROUTES.get((self.command, path))
            if route is None and self.command == "GET" and path.startswith("/v1/models/"):
                route = _Handler._openai_model
            if route is None:
                return self._send_text(404, "404 page not found")
            route(self, body or {}, knobs)
        except _Aborted:
            self._drop_connection()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # ---------------------------------------------------------------- helpers
    def _check_model(self, body: dict[str, Any], knobs: dict[str, Any]) -> str | None:
        """Return the model name, or answer 400/404 like Ollama and return None."""
        name = body.get("model") or body.get("name") or ""
        if not name:
            self._error(400, "model is required")
            return None
        models = knobs["models"]
        if models is not None and _normalize_model(name) not in {_normalize_model(m) for m in models}:
            self._error(404, f'model "{name}" not found, try pulling it first')
            return None
        return name

    def _installed(self, name: str, knobs: dict[str, Any]) -> bool:
        models = knobs["models"]
        return models is None or _normalize_model(name) in {_normalize_model(m) for m in models}

    def _reply_text(self, body: dict[str, Any], knobs: dict[str, Any]) -> str | None:
        reply = knobs["reply"]
        if not callable(reply):
            return str(reply)
        try:
            return str(reply(body))
        except Exception as exc:  # surface as an Ollama-style 500, not a hung test
            self.fake.errors.append(exc)
            self._error(500, f"fake ollama: reply callable raised {exc!r}")
            return None

    @staticmethod
    def _final_fields(body: dict[str, Any], tokens: list[str], started: float) -> dict[str, Any]:
        load, prompt_eval = 1_000_000, 2_000_000
        eval_ns = max(int((time.monotonic() - started) * 1e9), 1)
        return {
            "done": True,
            "done_reason": "stop",
            "total_duration": load + prompt_eval + eval_ns,
            "load_duration": load,
            "prompt_eval_count": _count_tokens(body),
            "prompt_eval_duration": prompt_eval,
            "eval_count": len(tokens),
            "eval_duration": eval_ns,
        }

    def _generate_like(self, body: dict[str, Any], knobs: dict[str, Any], chat: bool) -> None:
        started = time.monotonic()
        model = self._check_model(body, knobs)
        if model is None:
            return

        def piece(text: str) -> dict[str, Any]:
            return {"message": {"role": "assistant", "content": text}} if chat else {"response": text}

        if chat and not body.get("messages"):
            # Ollama answers an empty chat by loading the model: done_reason "load", empty message.
            return self._send_json(
                200, {"model": model, "created_at": _now(), **piece(""), "done_reason": "load", "done": True}
            )

        text = self._reply_text(body, knobs)
        if text is None:
            return
        tokens = tokenize(text)
        cut = knobs["cut_after_tokens"]
        final = {"model": model, "created_at": _now(), **piece("")}
        final.update(self._final_fields(body, tokens, started))
        if not chat:
            final["context"] = list(range(1, final["prompt_eval_count"] + len(tokens) + 1))

        if body.get("stream", True) is False:
            if cut is not None:
                raise _Aborted  # server died before answering: no response at all
            for _ in tokens:
                self._wait(knobs["token_delay"])
            if knobs["stream_error"] is not None:
                return self._error(500, knobs["stream_error"])
            final.update(self._final_fields(body, tokens, started), created_at=_now(), **piece(text))
            return self._send_json(200, final)

        self._start_stream()
        for token in tokens if cut is None else tokens[:cut]:
            self._wait(knobs["token_delay"])
            self._stream_line({"model": model, "created_at": _now(), **piece(token), "done": False})
        if knobs["stream_error"] is not None:
            # Ollama reports a failure after streaming started as an {"error": ...} line.
            self._stream_line({"error": knobs["stream_error"]})
        elif cut is not None:
            raise _Aborted
        else:
            final.update(self._final_fields(body, tokens, started), created_at=_now())
            self._stream_line(final)
        self._end_stream()

    # ---------------------------------------------------------------- endpoints
    def _chat(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        self._generate_like(body, knobs, chat=True)

    def _generate(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        self._generate_like(body, knobs, chat=False)

    def _embed(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        started = time.monotonic()
        inputs = body.get("input")
        # Ollama: a string is one input (an empty string none); a list must hold only strings.
        if isinstance(inputs, str):
            texts = [inputs] if inputs else []
        elif isinstance(inputs, list) and all(isinstance(t, str) for t in inputs):
            texts = list(inputs)
        elif inputs is None:
            texts = []
        else:
            return self._error(400, "invalid input type")
        model = self._check_model(body, knobs)
        if model is None:
            return
        limit = knobs["embed_context_tokens"]
        count = 0
        for i, text in enumerate(texts):
            tokens = tokenize(text)
            if limit is not None and len(tokens) > limit:
                if body.get("truncate") is False:
                    return self._error(400, "input length exceeds maximum context length")
                tokens = tokens[:limit]
                texts[i] = "".join(tokens)  # the model only sees the first `limit` tokens
            count += len(tokens)
        dim = int(body.get("dimensions") or knobs["embedding_dim"])
        make = knobs["embedding"] or (lambda t: hash_embedding(t, dim))
        embeddings = [list(make(t)) for t in texts]
        self._send_json(
            200,
            {
                "model": model,
                "embeddings": embeddings,
                "total_duration": max(int((time.monotonic() - started) * 1e9), 1),
                "load_duration": 1_000_000,
                "prompt_eval_count": count,
            },
        )

    def _pull(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        """``POST /api/pull``: progress lines as Ollama streams them; the model is then installed."""
        name = body.get("model") or body.get("name") or ""
        if not name:
            return self._error(400, "invalid model name")
        stream = body.get("stream", True) is not False
        known = knobs["pullable"] is None or _normalize_model(name) in {
            _normalize_model(m) for m in knobs["pullable"]
        }
        digest = "sha256:" + hashlib.sha256(_normalize_model(name).encode()).hexdigest()
        total = 4_000_000
        steps: list[dict[str, Any]] = [{"status": "pulling manifest"}]
        if known:
            short = f"pulling {digest[7:19]}"
            steps += [
                {"status": short, "digest": digest, "total": total, "completed": done}
                for done in (0, total // 2, total)
            ]
            steps += [{"status": "verifying sha256 digest"}, {"status": "writing manifest"}]
            steps += [{"status": "success"}]
        error = None if known else "pull model manifest: file does not exist"
        if not stream:
            for _ in steps:
                self._wait(knobs["token_delay"])
            if error is not None:
                return self._error(500, error)
            self.fake._installed_by_pull(name)
            return self._send_json(200, {"status": "success"})
        self._start_stream()
        for step in steps:
            self._wait(knobs["token_delay"])
            if step["status"] == "success":
                self.fake._installed_by_pull(name)
            self._stream_line(step)
        if error is not None:
            self._stream_line({"error": error})
        self._end_stream()

    def _model_entry(self, name: str) -> dict[str, Any]:
        name = _normalize_model(name)
        return {
            "name": name,
            "model": name,
            "modified_at": "2025-01-01T00:00:00Z",
            "size": 1_000_000,
            "digest": hashlib.sha256(name.encode()).hexdigest(),
            "details": _DETAILS,
        }

    def _tags(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        models = sorted(knobs["models"] or ())
        self._send_json(200, {"models": [self._model_entry(m) for m in models]})

    def _ps(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        self._send_json(200, {"models": []})

    def _version(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        self._send_json(200, {"version": OLLAMA_VERSION})

    def _show(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        name = body.get("model") or body.get("name") or ""
        if not name:
            return self._error(400, "model is required")
        models = knobs["models"]
        if models is not None and _normalize_model(name) not in {_normalize_model(m) for m in models}:
            return self._error(404, f"model '{name}' not found")
        self._send_json(
            200,
            {
                "modelfile": f"FROM {name}\n",
                "parameters": 'stop "<|im_end|>"',
                "template": "{{ .Prompt }}",
                "details": _DETAILS,
                "model_info": {"general.architecture": "llama", "llama.context_length": 32768},
                "capabilities": ["completion"],
                "modified_at": "2025-01-01T00:00:00Z",
            },
        )

    # ------------------------------------------------------ OpenAI-compatible endpoints (/v1)
    def _openai_chat(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        if not body.get("model"):
            return self._error(400, "model is required")
        if not isinstance(body.get("messages"), list):
            return self._error(400, "invalid message format")
        model = self._check_model(body, knobs)
        if model is None:
            return
        text = self._reply_text(body, knobs)
        if text is None:
            return
        tokens = tokenize(text)
        cut = knobs["cut_after_tokens"]
        ident = f"chatcmpl-{next(_COMPLETION_IDS)}"
        created = int(time.time())

        def usage() -> dict[str, int]:
            prompt = _count_tokens(body)
            done = len(tokens)
            return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}

        def envelope(obj: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
            return {
                "id": ident,
                "object": obj,
                "created": created,
                "model": model,
                "system_fingerprint": "fp_ollama",
                "choices": choices,
            }

        if not body.get("stream", False):
            if cut is not None:
                raise _Aborted  # server died before answering: no response at all
            for _ in tokens:
                self._wait(knobs["token_delay"])
            if knobs["stream_error"] is not None:
                return self._error(500, knobs["stream_error"])
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            return self._send_json(200, {**envelope("chat.completion", [choice]), "usage": usage()})

        def chunk(content: str, finish_reason: str | None) -> dict[str, Any]:
            delta = {"role": "assistant", "content": content}
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return envelope("chat.completion.chunk", [choice])

        self._start_stream("text/event-stream")
        for token in tokens if cut is None else tokens[:cut]:
            self._wait(knobs["token_delay"])
            self._stream_event(chunk(token, None))
        if knobs["stream_error"] is not None:
            # An error after the stream started: an error event, which the openai client raises as APIError.
            self._stream_event(_openai_error(500, knobs["stream_error"]))
            return self._end_stream()
        if cut is not None:
            raise _Aborted
        self._stream_event(chunk("", "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            self._stream_event({**envelope("chat.completion.chunk", []), "usage": usage()})
        self._stream_event("[DONE]")
        self._end_stream()

    def _openai_model_entry(self, name: str) -> dict[str, Any]:
        namespace = name.rsplit("/", 1)[0] if "/" in name else "library"
        return {"id": name, "object": "model", "created": 1735689600, "owned_by": namespace}

    def _openai_models(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        models = sorted(_normalize_model(m) for m in knobs["models"] or ())
        self._send_json(200, {"object": "list", "data": [self._openai_model_entry(m) for m in models]})

    def _openai_model(self, body: dict[str, Any], knobs: dict[str, Any]) -> None:
        name = self.path.split("?", 1)[0][len("/v1/models/") :]
        if not self._installed(name, knobs):
            return self._error(404, f'model "{name}" not found')
        self._send_json(200, self._openai_model_entry(name))


def _openai_error(status: int, message: str) -> dict[str, Any]:
    """Ollama's OpenAI-compatible error body."""
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


_COMPLETION_IDS = itertools.count(1)

_DETAILS = {
    "parent_model": "",
    "format": "gguf",
    "family": "llama",
    "families": ["llama"],
    "parameter_size": "0.6B",
    "quantization_level": "Q4_K_M",
}

_ROUTES: dict[tuple[str, str], Callable[[_Handler, dict[str, Any], dict[str, Any]], None]] = {
    ("POST", "/api/chat"): _Handler._chat,
    ("POST", "/api/generate"): _Handler._generate,
    ("POST", "/api/embed"): _Handler._embed,
    ("POST", "/api/pull"): _Handler._pull,
    ("POST", "/api/show"): _Handler._show,
    ("GET", "/api/tags"): _Handler._tags,
    ("GET", "/api/ps"): _Handler._ps,
    ("GET", "/api/version"): _Handler._version,
    ("POST", "/v1/chat/completions"): _Handler._openai_chat,
    ("GET", "/v1/models"): _Handler._openai_models,
}


class FakeOllama:
    """A fake Ollama server on ``127.0.0.1:<free port>``; use as a context manager or ``start()``/``stop()``.

    ``port=N`` binds a fixed port instead (a stand-in ``ollama serve`` listening where ``$OLLAMA_HOST`` says).

    Knobs (attributes, changeable between requests; ``configure()`` sets several atomically):

    - ``models``: installed model names (``None``: accept any name; ``/api/tags`` then lists none).
      Names without a tag match ``:latest``, as in Ollama. Anything else gets a 404.
    - ``reply``: the answer text, or a callable ``(request_json) -> str`` (see ``last_user_text``).
    - ``token_delay``: seconds to wait before each streamed token (and per token when not streaming).
    - ``hang_seconds``: seconds to wait before answering any ``/api/`` or ``/v1/`` request (for client
      timeouts).
    - ``cut_after_tokens``: drop the connection after this many streamed tokens, with no final ``done``
      object and no terminating chunk (non-streaming: drop it without any response).
    - ``stream_error``: after the tokens (all, or ``cut_after_tokens`` of them), send an
      ``{"error": ...}`` line instead of the final object, as Ollama does when a runner fails mid-stream
      (``/v1``: a ``data: {"error": {...}}`` event and no ``[DONE]``; non-streaming: HTTP 500 with that
      error).
    - ``status_code`` / ``error_message``: answer every ``/api/`` and ``/v1/`` request with this status and
      ``{"error": error_message}`` (``/v1``: the OpenAI error shape); ``status_code_times``: only for the
      next N such requests, after which ``status_code`` resets to ``None`` (``None``: every request).
    - ``embedding_dim``: vector length for ``/api/embed`` (a request's ``dimensions`` overrides it);
      ``embedding``: optional callable ``(text) -> list[float]`` replacing the hash vectors;
      ``embed_context_tokens``: the embedding model's context in fake tokens (``None``: unlimited).
    - ``pullable``: model names ``/api/pull`` can fetch (``None``: any name); a pulled model joins
      ``models`` (when ``models`` is not ``None``).

    Records: ``requests`` (list of ``RecordedRequest``), ``errors`` (unexpected server-side exceptions).
    """

    def __init__(
        self,
        *,
        models: Iterable[str] | None = None,
        reply: ReplyT = DEFAULT_REPLY,
        token_delay: float = 0.0,
        hang_seconds: float = 0.0,
        cut_after_tokens: int | None = None,
        stream_error: str | None = None,
        status_code: int | None = None,
        status_code_times: int | None = None,
        error_message: str = "fake ollama: injected server error",
        embedding_dim: int = 8,
        embedding: Callable[[str], list[float]] | None = None,
        embed_context_tokens: int | None = None,
        pullable: Iterable[str] | None = None,
        port: int = 0,
    ) -> None:
        self.bind_port = port  # 0: a free port (tests); a fixed one stands in for `ollama serve`
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self.models: set[str] | None = set(models) if models is not None else None
        self.reply = reply
        self.token_delay = token_delay
        self.hang_seconds = hang_seconds
        self.cut_after_tokens = cut_after_tokens
        self.stream_error = stream_error
        self.status_code = status_code
        self.status_code_times = status_code_times
        self.error_message = error_message
        self.embedding_dim = embedding_dim
        self.embedding = embedding
        self.embed_context_tokens = embed_context_tokens
        self.pullable: set[str] | None = set(pullable) if pullable is not None else None

    # ------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOllama is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for ``OllamaChatGenerator(url=...)`` / ``ollama.Client(host=...)``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> FakeOllama:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="fake-ollama", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; wakes hanging/delayed handlers and closes open connections (bounded wait)."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.close_all_connections(wait=2.0)
        server.server_close()
        if thread is not None:
            thread.join(timeout=2.0)
        self._server = self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ knobs and records
    def configure(self, **knobs: Any) -> FakeOllama:
        unknown = set(knobs) - set(_KNOBS)
        if unknown:
            raise TypeError(f"unknown FakeOllama knob(s): {sorted(unknown)}")
        for name in ("models", "pullable"):
            if knobs.get(name) is not None:
                knobs[name] = set(knobs[name])
        with self._lock:
            for name, value in knobs.items():
                setattr(self, name, value)
        return self

    def reset(self) -> None:
        """Forget recorded requests and errors (knobs stay)."""
        with self._lock:
            self.requests.clear()
            self.errors.clear()

    def _installed_by_pull(self, name: str) -> None:
        with self._lock:
            if self.models is not None:
                self.models = {*self.models, _normalize_model(name)}

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def embedding_for(self, text: str, dim: int | None = None) -> list[float]:
        """The vector ``/api/embed`` returns for ``text`` (with the current knobs)."""
        if self.embedding is not None:
            return list(self.embedding(text))
        return hash_embedding(text, dim or self.embedding_dim)

    def _record(self, method: str, path: str, body: Any, headers: Any) -> None:
        lowered = {k.lower(): v for k, v in headers.items()}
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body, lowered, time.monotonic()))

    def _snapshot(self, api: bool) -> dict[str, Any]:
        with self._lock:
            knobs = {name: getattr(self, name) for name in _KNOBS}
            if api and self.status_code is not None and self.status_code_times is not None:
                self.status_code_times -= 1
                if self.status_code_times <= 0:
                    self.status_code = self.status_code_times = None
            for name in ("models", "pullable"):
                if knobs[name] is not None:
                    knobs[name] = set(knobs[name])
            return knobs


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A running ``FakeOllama`` (default knobs, any model accepted), stopped after the test."""
    with FakeOllama() as fake:
        yield fake
