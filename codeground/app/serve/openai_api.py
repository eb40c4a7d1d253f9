"""The OpenAI-compatible chat of `codeground serve`: ``/v1/models`` and ``/v1/chat/completions`` (also
without ``/v1``), codeground's own handlers in front of Hayhooks, following the OpenAI API reference.

Rules:
- Models: only what can chat is listed: ``ask`` (``search`` is ``POST /search/run``; a chat with
  any other model is a 404 ``model_not_found``).
- Request: ``messages`` is a list of at most :data:`MAX_MESSAGES` objects whose last one is the
  user's question (checked like every question: not empty, UTF-8, at most ``MAX_QUESTION_CHARS``);
  earlier ``user``/``assistant`` turns are the conversation a follow-up is resolved against. ``n``
  other than 1 is refused (one grounded answer per question), so is a ``tool`` message (codeground
  offers no tools). Anything refused is an HTTP 400 (404 for the model) before any work starts.
- System messages (``system``, ``developer``): not used, and the answer says so in its notices
  block. The answer's instructions are codeground's grounding contract, which a client's
  instructions must not loosen (folding them into the question would also change what is searched).
- Errors: the OpenAI error object ``{"error": {"message", "type", "param", "code"}}`` with the
  HTTP status: 400 ``invalid_request_error``, 404 ``model_not_found``, 503 ``llm_unavailable``
  when the LLM server gave no answer (down, model missing, timed out), 500 ``server_error`` for
  anything else that failed. A stream sends its headers only once the first piece of the answer
  (or the answer's failure) is known, so these statuses hold for streams too; once a stream has
  started, an error can only be in the stream: a line ``error: …`` in the content, after which the
  stream ends as usual.
- Answer: the tokens as the model writes them (a corrected answer after a marked line: a stream
  cannot take back what it sent), then ``Sources:`` with the cited ``path:start-end``, then a
  marked notices block. Paths and notices come from the repository, and chat front ends render
  Markdown: each is ``escaping.for_markup`` (one line, HTML entities), so no file name can inject
  markup or split a line. A non-streamed answer is the final (corrected) one.
- Streams: ``data: {chat.completion.chunk}`` events (the first carries the role, the last
  ``finish_reason: "stop"``; with ``stream_options.include_usage`` one more with empty ``choices``
  and the usage), then ``data: [DONE]``.
- Usage: ``prompt_tokens``, ``completion_tokens``, ``total_tokens`` are estimates (the pipeline
  does not hand the LLM's own counts out): words and punctuation marks (``\\w+|[^\\w\\s]``) of the
  messages' text for the prompt, of the returned content for the completion.
- Work: a question runs in a worker thread and is read from a thread pool; the event loop only
  parses the (size-capped, ``http_server.MAX_BODY_BYTES``) body, so one client never holds another.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.components.escaping import for_markup

CHAT_MODELS = ("ask",)
MAX_MESSAGES = 200  # more is refused with a 400 (the rewriter reads only the latest 6 turns anyway)
SYSTEM_NOT_USED = (
    "your system message was not used: codeground answers under its own grounding instructions "
    "(from the repository only, citing its files)"
)
_CREATED = int(time.time())
_WORDS = re.compile(r"\w+|[^\w\s]")


class ApiError(Exception):
    """An OpenAI error response: HTTP ``status`` and the error object's fields."""

    def __init__(
        self, status: int, message: str, type_: str, code: str | None = None, param: str | None = None
    ):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def bad_request(message: str, param: str | None = None, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, "invalid_request_error", code, param)


def error_body(status: int, message: str, type_: str, code: str | None = None) -> bytes:
    """The OpenAI error object as a response body (for replies made outside these handlers)."""
    return json.dumps(ApiError(status, message, type_, code).body()).encode()


@dataclass
class ChatRequest:
    """A checked chat request."""

    model: str
    question: str
    turns: list[dict[str, str]]
    stream: bool
    include_usage: bool
    notes: list[str] = field(default_factory=list)  # what the answer says about the request itself

    def prompt_tokens(self) -> int:
        return count_tokens(self.question) + sum(count_tokens(t["content"]) for t in self.turns)


def count_tokens(text: str) -> int:
    """The documented estimate (see the module docstring)."""
    return len(_WORDS.findall(text))


def _text(message: dict[str, Any], at: int) -> str:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):  # OpenAI content parts: the text ones
        return " ".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    raise bad_request(f"messages[{at}].content must be a string or a list of content parts", "messages")


def parse_chat(body: Any) -> ChatRequest:
    """The request checked against the rules, or the ``ApiError`` that refuses it."""
    from codeground.app.query.engine import check_question

    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("model is required: use 'ask'", "model", "missing_required_parameter")
    if model not in CHAT_MODELS:
        hint = " (search is POST /search/run)" if model == "search" else ""
        raise ApiError(
            404,
            f"the model '{model}' does not exist: use 'ask'{hint}",
            "invalid_request_error",
            "model_not_found",
            "model",
        )
    if body.get("n") not in (None, 1):
        raise bad_request(f"n must be 1, got {body['n']!r}: codeground gives one grounded answer", "n")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise bad_request("stream must be true or false", "stream")
    options = body.get("stream_options") or {}
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages must be a non-empty list", "messages", "missing_required_parameter")
    if len(messages) > MAX_MESSAGES:
        raise bad_request(
            f"at most {MAX_MESSAGES} messages per request, got {len(messages):,}: send the latest turns",
            "messages",
        )
    turns, notes = [], []
    for at, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role in ("system", "developer"):
            _text(message, at)
            if SYSTEM_NOT_USED not in notes:
                notes.append(SYSTEM_NOT_USED)
        elif role in ("user", "assistant"):
            turns.append({"role": role, "content": _text(message, at)})
        elif role in ("tool", "function"):
            raise bad_request(f"messages[{at}] has role '{role}': codeground offers no tools", "messages")
        else:
            raise bad_request(f"messages[{at}].role must be user, assistant or system", "messages")
    if not turns or turns[-1]["role"] != "user":
        raise bad_request("the last message must be the user's question", "messages")
    try:
        check_question(turns[-1]["content"])
    except CodegroundError as exc:
        raise bad_request(str(exc), "messages") from None
    include_usage = bool(stream and isinstance(options, dict) and options.get("include_usage"))
    return ChatRequest(model, turns[-1]["content"], turns[:-1], bool(stream), include_usage, notes)


def _tail(answer: Any, notes: list[str]) -> str:
    """``Sources:`` and the notices block under an answer, every repository string for Markdown."""
    tail = "\n\nSources:\n" + "\n".join(f"- {for_markup(c)}" for c in answer.citations)
    found = [*answer.notices, *notes]
    if answer.unknown_identifiers and not any("not found in this repository" in n for n in found):
        found.append(f"not found in this repository: {', '.join(answer.unknown_identifiers)}")
    if found:
        tail += "\n\n---\ncodeground notices:\n" + "\n".join(f"> {for_markup(n)}" for n in found)
    return tail


def _llm_failed(result: Any) -> str | None:
    """The LLM's failure notice when it gave no answer, else ``None``."""
    from codeground.components.notices import LLM_FAILED, kind_of

    if result.answer:
        return None
    return next((str(n) for n in result.notices if kind_of(n) == LLM_FAILED), None)


class ChatRun:
    """One question's events (``engine_pool.stream_answer``), read from a thread pool: ``start``
    waits for the first piece (or the failure, as an ``ApiError``), ``pieces`` streams the content,
    ``final`` gives the whole non-streamed content."""

    def __init__(self, tools: Any, chat: ChatRequest) -> None:
        from codeground.app.query.engine_pool import stream_answer

        self.chat = chat
        self.events = stream_answer(tools.pool, tools.pipeline, chat.question, chat.turns)
        self.first: tuple[str, Any] | None = None
        self.sent = ""  # the content returned, for the usage

    def start(self) -> None:
        for kind, value in self.events:
            if kind == "engine":
                continue
            if kind == "error":
                raise ApiError(500, value, "server_error", "answer_failed")
            if kind == "result" and (failure := _llm_failed(value)):
                raise ApiError(503, failure, "server_error", "llm_unavailable")
            self.first = (kind, value)
            return
        raise ApiError(500, "the answer stopped unexpectedly (see the server log)", "server_error")

    def _events(self) -> Iterator[tuple[str, Any]]:
        if self.first is not None:
            yield self.first
        yield from self.events

    def pieces(self) -> Iterator[str]:
        from codeground.app.query.repair import marker
        from codeground.app.serve.repo_tools import answer_of

        streamed = False
        for kind, value in self._events():
            piece = ""
            if kind == "tokens":
                streamed, piece = True, value
            elif kind == "repair":
                piece = marker(value)
            elif kind == "error":
                piece = f"\n\nerror: {value}"
            elif kind == "result":
                answer = answer_of(self.chat.question, value)
                piece = ("" if streamed else answer.answer or "") + _tail(answer, self.chat.notes)
            if piece:
                self.sent += piece
                yield piece

    def final(self) -> str:
        from codeground.app.serve.repo_tools import answer_of

        for kind, value in self._events():
            if kind == "error":
                raise ApiError(500, value, "server_error", "answer_failed")
            if kind == "result":
                if failure := _llm_failed(value):
                    raise ApiError(503, failure, "server_error", "llm_unavailable")
                answer = answer_of(self.chat.question, value)
                self.sent = (answer.answer or "") + _tail(answer, self.chat.notes)
                return self.sent
        raise ApiError(500, "the answer stopped unexpectedly (see the server log)", "server_error")

    def usage(self) -> dict[str, int]:
        prompt, completion = self.chat.prompt_tokens(), count_tokens(self.sent)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _sse(payload: Any) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def _events_of(run: ChatRun, head: dict[str, Any]) -> Iterator[str]:
    """The SSE stream of one run (see the module docstring)."""
    extra = {"usage": None} if run.chat.include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**head, "choices": [choice], **extra})

    yield chunk({"role": "assistant", "content": ""}, None)
    for piece in run.pieces():
        yield chunk({"content": piece}, None)
    yield chunk({}, "stop")
    if run.chat.include_usage:
        yield _sse({**head, "choices": [], "usage": run.usage()})
    yield "data: [DONE]\n\n"


def build_openai_app(tools: Callable[[], Any]):
    """The ASGI app of these routes; ``tools()`` gives the server's ``RepositoryTools``."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    async def models(request: Request) -> JSONResponse:
        data = [
            {"id": m, "object": "model", "created": _CREATED, "owned_by": "codeground"} for m in CHAT_MODELS
        ]
        return JSONResponse({"object": "list", "data": data})

    async def completions(request: Request):
        try:
            try:
                body = json.loads(await request.body())
            except ValueError:
                raise bad_request("the request body is not JSON") from None
            chat = parse_chat(body)
            run = ChatRun(tools(), chat)
            head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": chat.model}
            if chat.stream:
                await run_in_threadpool(run.start)  # the status is known before the headers go out
                chunk_head = {**head, "object": "chat.completion.chunk"}
                return StreamingResponse(
                    _events_of(run, chunk_head),  # a sync iterator: Starlette reads it in its thread pool
                    media_type="text/event-stream",
                    headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
                )
            content = await run_in_threadpool(run.final)
        except ApiError as exc:
            return JSONResponse(exc.body(), status_code=exc.status)
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
        return JSONResponse({**head, "object": "chat.completion", "choices": [choice], "usage": run.usage()})

    routes = [Route(p, models, methods=["GET"]) for p in ("/v1/models", "/models")]
    routes += [Route(p, completions, methods=["POST"]) for p in ("/v1/chat/completions", "/chat/completions")]
    return Starlette(routes=routes)
