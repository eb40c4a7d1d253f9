"""Run an index pipeline as two stages so that both cores work: chunking ahead, embedding and writing.

Rule: the index pipeline is cut after the component of its ``chunked`` role
(``codeground.app.pipeline.roles``; the splitter in the shipped YAMLs): the *chunk stage* is that
component and every component upstream of it (router, chunkers, joiner: pure Python, no model, no
store), the *write stage* is everything else (embedder, writers). Each connection from the chunk
stage into the write stage becomes an input of the write stage, fed with the chunk stage's records.
When there are enough files, the chunk stage runs in a worker process (``spawn``: nothing is forked
from a process holding model threads) one or two batches ahead of the write stage, so parsing the
next files overlaps with embedding and writing the last ones; the records, their order and the
failures are the same as in one process (tested). A worker that cannot start means chunking in this
process.

Usage:
```python
from codeground.app.index.index_stages import IndexStages

import tempfile
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, read_pipeline_dict, resolve
from codeground.components.walker import RepositoryWalker

index_dir = tempfile.mkdtemp()
stages = IndexStages(resolve(read_pipeline_dict(DEFAULT_INDEX_PIPELINE), index_dir=index_dir))
write = stages.write_pipeline()            # embedder + writers, built here
files = RepositoryWalker().run(root="codeground/app")["files"]
for batch, chunked in stages.chunked([files[:8], files[8:16]], in_worker=False):
    write.run(stages.write_inputs(chunked["records"]))
```
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

logger = logging.getLogger(__name__)

AHEAD = 2  # batches chunked ahead of the write stage (bounds the memory held by finished batches)


class ChunkStageError(RuntimeError):
    """A chunk-stage failure in the worker, already turned into the one line the user sees."""


def failure_line(exc: BaseException) -> str:
    """`` in 'name' (Type): message[; hint]`` for a pipeline error, ``: message`` for any other."""
    from haystack.core.errors import PipelineRuntimeError

    from codeground.components.llm_errors import ollama_fix

    if isinstance(exc, ChunkStageError):  # already this line, made in the chunking worker
        return str(exc)

    where = ""
    cause: BaseException = exc
    if isinstance(exc, PipelineRuntimeError) and exc.component_name:
        kind = exc.component_type.__name__ if exc.component_type else "component"
        where = f" in '{exc.component_name}' ({kind})"
        cause = exc.__cause__ or exc
    message = " ".join(str(cause).split())
    if isinstance(exc, PipelineRuntimeError) and "Error:" in message and cause is exc:
        message = message.split("Error:", 1)[1].strip()
    detail = message[:240] or cause.__class__.__name__
    return f"{where}: {detail}{ollama_fix(f'{where} {message}')}"


def _name(endpoint: str) -> str:
    return endpoint.split(".", 1)[0]


class IndexStages:
    """The chunk stage and the write stage of one resolved index pipeline definition."""

    def __init__(self, data: dict[str, Any]) -> None:
        from codeground.app.pipeline.roles import IndexRoles

        self.roles = roles = IndexRoles.of(data)
        last = roles.chunked
        components = data["components"]
        connections = data.get("connections", [])
        parents: dict[str, set[str]] = defaultdict(set)
        for c in connections:
            parents[_name(c["receiver"])].add(_name(c["sender"]))
        chunk = {last}
        todo = [last]
        while todo:
            for parent in parents[todo.pop()]:
                if parent not in chunk:
                    chunk.add(parent)
                    todo.append(parent)

        def part(names: set[str]) -> dict[str, Any]:
            return {
                **{k: v for k, v in data.items() if k not in ("components", "connections")},
                "components": {k: v for k, v in components.items() if k in names},
                "connections": [
                    c for c in connections if _name(c["sender"]) in names and _name(c["receiver"]) in names
                ],
            }

        rest = set(components) - chunk
        self.chunk_dict = part(chunk)
        self.write_dict = part(rest)
        crossing = [c for c in connections if _name(c["sender"]) in chunk and _name(c["receiver"]) in rest]
        if any(c["sender"] != f"{last}.documents" for c in crossing):
            raise ValueError(f"only '{last}.documents' may feed the embedder and writers")
        if roles.entry.split(".", 1)[0] not in chunk:
            raise ValueError(f"the entry '{roles.entry}' is not upstream of '{last}'")
        self._stage_args = (self.chunk_dict, roles.entry, last)
        self.feeds = [(_name(c["receiver"]), c["receiver"].split(".", 1)[1]) for c in crossing]

    def write_pipeline(self):
        """The write stage (embedder, writers) as a pipeline of this process."""
        from codeground.app.pipeline.loader import build_pipeline

        return build_pipeline(self.write_dict)

    def write_inputs(self, records: list[Any]) -> dict[str, dict[str, Any]]:
        """The write stage's inputs for one batch of records."""
        inputs: dict[str, dict[str, Any]] = {}
        for receiver, socket in self.feeds:
            inputs.setdefault(receiver, {})[socket] = records
        return inputs

    def chunked(self, batches: Iterable[list[Any]], *, in_worker: bool) -> Iterator[tuple[list[Any], dict]]:
        """``(files, {"records": [...], "failed": [[path, why], ...]})`` for each batch, in order.
        ``batches`` is read as the worker needs them (an iterator lets the caller free what was done)."""
        pool = _start_worker(self._stage_args) if in_worker else None
        if pool is None:
            stage = _ChunkStage(*self._stage_args)
            for files in batches:
                yield files, stage.run(files)
            return
        queued = iter(batches)
        pending: deque[tuple[list[Any], Future]] = deque()
        try:
            with _interrupts_left_to_this_process():  # the first submit starts the worker's interpreter
                for files in queued:
                    pending.append((files, pool.submit(_chunk_in_worker, files)))
                    if len(pending) >= AHEAD:
                        break
            while pending:
                files, future = pending.popleft()
                try:
                    result = future.result()
                except BrokenProcessPool as exc:  # the worker died or could not start its interpreter
                    logger.warning("chunking worker lost (%s); chunking in this process", exc)
                    break
                nxt = next(queued, None)
                if nxt is not None:
                    pending.append((nxt, pool.submit(_chunk_in_worker, nxt)))
                yield files, result
            else:
                return
        finally:
            _stop(pool)
        # what the lost worker had not delivered, then the rest, in order, in this process
        stage = _ChunkStage(*self._stage_args)
        for rest in itertools.chain([files], [f for f, _ in pending], queued):
            yield rest, stage.run(rest)


class _ChunkStage:
    """The chunk stage as a pipeline; ``run`` returns only what the index run needs."""

    def __init__(self, data: dict[str, Any], entry: str, last: str) -> None:
        from codeground.app.pipeline.loader import build_pipeline

        self.entry = tuple(entry.split(".", 1))
        self.last = last
        self.pipeline = build_pipeline(data)
        self.pipeline.warm_up()

    def run(self, files: list[Any]) -> dict[str, Any]:
        component, socket = self.entry
        out = self.pipeline.run(
            {component: {socket: files}}, include_outputs_from=set(self.pipeline.graph.nodes)
        )
        failed = [pair for outputs in out.values() for pair in outputs.get("failed", [])]
        return {"records": out.get(self.last, {}).get("documents", []), "failed": failed}


_WORKER_STAGE: _ChunkStage | None = None


@contextlib.contextmanager
def _interrupts_left_to_this_process() -> Iterator[None]:
    """While the worker starts, SIGINT is ignored here, so its interpreter starts with SIGINT ignored
    (an ignored signal stays ignored across ``exec``, and Python then installs no handler of its own).
    A Ctrl-C, which a terminal sends to the whole process group, then stops the index run here, which
    stops the worker, instead of also ending the worker with a KeyboardInterrupt traceback of its own
    on the user's screen. Only the main thread may change a signal's handler; elsewhere it is left."""
    import signal
    import threading

    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:  # None: set in C
        yield
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _init_worker(args: tuple[dict[str, Any], str, str]) -> None:
    global _WORKER_STAGE
    import codeground  # noqa: F401 - the same environment defaults (telemetry off) as the parent

    _exit_with_parent()
    _WORKER_STAGE = _ChunkStage(*args)


def _exit_with_parent() -> None:
    """End this worker as soon as the index process is gone, however it ended (even SIGKILL): the
    worker holds both ends of its task queue, so it would otherwise wait for work forever."""
    import multiprocessing
    import multiprocessing.connection
    import os
    import threading

    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="codeground-parent-watch", daemon=True).start()


def _chunk_in_worker(files: list[Any]) -> dict[str, Any]:
    assert _WORKER_STAGE is not None
    try:
        return _WORKER_STAGE.run(files)
    except Exception as exc:  # noqa: BLE001 - sent back as one picklable line naming the component
        raise ChunkStageError(failure_line(exc)) from None


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop the worker now: cancel what it has not started and wait for it to exit (never leave an
    orphan process behind, whatever way the index run ends)."""
    pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(args: tuple[dict[str, Any], str, str]) -> ProcessPoolExecutor | None:
    import multiprocessing
    import sys
    from pathlib import Path

    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and not Path(main_file).is_file():  # `python -` or `-c`: a spawned child cannot start
        return None

    try:
        return ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(args,),
        )
    except (OSError, ValueError) as exc:  # e.g. no /dev/shm semaphores in a sandbox
        logger.info("chunking in this process: no worker process (%s)", exc)
        return None
