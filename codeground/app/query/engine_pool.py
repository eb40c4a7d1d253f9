"""Query engines shared by every client of one server process, and an answer streamed from a worker.

Rules:
- ``EnginePool``: one ``QueryEngine`` per pipeline YAML, built and warmed once and shared by every
  session (the chat's tabs, the MCP tools, the HTTP routes); a lock per pipeline guards only the
  building. An index re-built while it runs is picked up at the next question: the engine follows
  the index's ``CURRENT`` generation (the old one stays on disk while an answer still reads it).
- ``stream_answer``: the engine is blocking, so a question runs in a worker thread whose tokens,
  repair event and result reach the caller through a queue, in the order they happened.
No UI library is imported here: ``codeground mcp`` and ``codeground serve`` start without Gradio.

Usage:
```python
from codeground.app.query.engine_pool import EnginePool

pool = EnginePool(".codeground")
# for kind, value in stream_answer(pool, Path("pipelines/query.yaml"), "What does X do?", []): ...
```
"""

from __future__ import annotations

import contextlib
import queue
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError

TOKEN_POLL_S = 0.1


def _new_engine(index_dir: Path, pipeline: Path):
    from codeground.app.query.engine import QueryEngine

    return QueryEngine(index_dir, pipeline)


def _current_generation(index_dir: Path) -> Path | None:
    from codeground.app.index.index_dir import IndexDir

    return IndexDir(index_dir).current()


class EnginePool:
    """Query engines by pipeline YAML, built lazily, warmed once, shared by all sessions (thread-safe)."""

    def __init__(self, index_dir: str | Path, factory: Callable[[Path, Path], Any] | None = None) -> None:
        self.index_dir = Path(index_dir)
        self._factory = factory or _new_engine
        self._engines: dict[Path, Any] = {}
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock_for(self, key: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def get(self, pipeline: str | Path):
        """The warmed engine for ``pipeline``; ``CodegroundError`` if the index or pipeline is unusable.

        A failure is not remembered: the next call tries again (e.g. after the index was rebuilt).
        """
        key = Path(pipeline).resolve()
        with self._lock_for(key):
            engine = self._engines.get(key)
            if engine is not None and getattr(engine, "gen", None) != _current_generation(self.index_dir):
                engine = None  # re-indexed since this engine was built: open the new generation
            if engine is None:
                self._engines.pop(key, None)
                engine = self._factory(self.index_dir, key)
                engine.warm_up(with_answer=True)
                self._engines[key] = engine
            return engine

    def ready(self, pipeline: str | Path) -> bool:
        return Path(pipeline).resolve() in self._engines


def _to_chat_messages(turns: list[dict[str, str]]) -> list[Any]:
    from haystack.dataclasses import ChatMessage

    make = {"user": ChatMessage.from_user, "assistant": ChatMessage.from_assistant}
    return [make[t["role"]](t["content"]) for t in turns if t.get("content") and t.get("role") in make]


def stream_answer(
    pool: EnginePool, pipeline: Path, question: str, turns: list[dict[str, str]]
) -> Iterator[tuple[str, Any]]:
    """Run one question in a worker thread; yield ``("engine", engine)``, ``("tokens", text)`` batches
    and ``("repair", names)`` (the answer so far is being replaced) as they come, then one of
    ``("result", QueryResult)`` or ``("error", message)``."""
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        try:
            engine = pool.get(pipeline)
            inbox.put(("engine", engine))
            history = _to_chat_messages(turns)
            result = engine.answer(
                question,
                history=history,
                on_token=lambda t: inbox.put(("token", t)),
                on_repair=lambda names: inbox.put(("repair", names)),  # the page replaces the answer
            )
            inbox.put(("result", result))
        except CodegroundError as exc:
            inbox.put(("error", str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bug must reach the user as a message, not a hang
            traceback.print_exc()
            inbox.put(("error", f"unexpected error: {exc.__class__.__name__}: {exc}"))

    worker = threading.Thread(target=work, name="codeground-answer", daemon=True)
    worker.start()
    while True:
        try:
            batch = [inbox.get(timeout=TOKEN_POLL_S)]
        except queue.Empty:
            if not worker.is_alive() and inbox.empty():
                yield "error", "the answer stopped unexpectedly (see the server log)"
                return
            continue
        with contextlib.suppress(queue.Empty):  # take everything already waiting: the UI updates in batches
            while True:
                batch.append(inbox.get_nowait())
        # in the order they came, consecutive tokens joined: the page updates in batches
        tokens = ""
        for kind, value in batch:
            if kind == "token":
                tokens += value
                continue
            if tokens:
                yield "tokens", tokens
                tokens = ""
            yield kind, value
            if kind in ("result", "error"):
                return
        if tokens:
            yield "tokens", tokens
