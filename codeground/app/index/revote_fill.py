"""Keep the question-time re-vote's vectors for every record of an index, filled after indexing.

Rule: the query YAML's rankers that embed candidates at question time (``BiEncoderRanker``:
all-MiniLM-L6-v2 over the first fused candidates, behind the machine's embedding cache) embed every
record of the live generation once, in the background, so that no question waits for them: a
record's vector is then found in the cache whichever question ranks it. Nothing about the answers
changes, only when the vectors are computed: the fill embeds exactly the text a question would
(the same records from the same store, through the same cached embedder), and a record whose vector
is already kept costs a lookup.

- Order: docs, api, notebook, module and text records before implementation bodies (short records
  that many questions rank first), storage order within a type.
- It runs after ``CURRENT`` names the new generation (the index is done without it; the bench
  reports it as its own row), embedding at the lowest CPU priority (its models are made first at the
  normal one: a first question on a machine waits for the same exports and int8/fp32 timing, which
  outside load at the lowest priority would also distort), and stops at the next batch once another
  generation is live (that index's own fill takes over) or its generation is gone. It waits for an
  embedding cache another process is writing as indexers do (a minute, not a question's second);
  one that stayed busy longer leaves it ``stopped`` with the vectors it could not keep counted, so
  the next ``codeground index`` fills again.
- One fill per index folder at a time (``fill.lock``); its state is in ``fill.json``: ``running``,
  ``done``, ``stopped`` (with the reason) or ``failed`` (one line), with the counts.
- ``codeground index`` starts it as a detached process unless ``--no-fill`` (or
  ``CODEGROUND_FILL=0``) is given; ``python -m codeground.app.index.revote_fill INDEX_DIR [QUERY_YAML]``
  runs it in the foreground.

Usage:
```python
import tempfile
from pathlib import Path
from codeground.app.index.revote_fill import fill

empty = Path(tempfile.mkdtemp())  # no CURRENT: nothing to fill
assert fill(empty)["state"] == "stopped"
```
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from codeground.app.index.index_dir import IndexDir
from codeground.components.embedders.model_cache import show_announcements

STATE_FILE = "fill.json"
LOCK_FILE = "fill.lock"
LOG_FILE = "fill.log"
RECORDS = "bm25.sqlite3"  # the default pair's record store, which the query pipeline reads too
BATCH = 64
TYPE_ORDER = ("docs", "api", "notebook", "module", "text", "impl")


def enabled_by_default() -> bool:
    """Whether ``codeground index`` starts the fill when not told (``CODEGROUND_FILL=0``: no)."""
    return os.environ.get("CODEGROUND_FILL", "1").strip() not in ("0", "false", "no", "off")


def revote_embedders(query_pipeline: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """``(ranker name, its document embedder's serialized form)`` for each ranker of the query YAML
    that embeds candidates at question time (a ranker with a ``document_embedder``)."""
    from codeground.app.index.manifest import embedding_rankers
    from codeground.app.pipeline.loader import read_pipeline_dict, resolve

    found = []
    for name, spec in embedding_rankers(resolve(read_pipeline_dict(query_pipeline))):
        embedder = (spec.get("init_parameters") or {}).get("document_embedder")
        if isinstance(embedder, dict) and embedder.get("type"):
            found.append((name, embedder))
    return found


def _waiting_as_indexers_do(spec: dict[str, Any]) -> dict[str, Any]:
    """The query YAML's embedder waiting at least as long as an indexer for another process writing
    the embedding cache: the fill runs in the background, so it does not leave vectors unkept after
    the second a question allows itself (``wait_s``)."""
    from codeground.components.embedders.embedding_store import BUSY_TIMEOUT_S

    params = dict(spec.get("init_parameters") or {})
    params["wait_s"] = max(float(params.get("wait_s", BUSY_TIMEOUT_S)), BUSY_TIMEOUT_S)
    return {**spec, "init_parameters": params}


def _ordered_ids(store: Any) -> list[str]:
    rows = store.meta_rows(["source_type"])
    rank = {t: i for i, t in enumerate(TYPE_ORDER)}
    return [row[0] for row in sorted(rows, key=lambda r: rank.get(r[1], len(TYPE_ORDER)))]


def _write_state(index_dir: Path, state: dict[str, Any]) -> None:
    tmp = index_dir / f"{STATE_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
    os.replace(tmp, index_dir / STATE_FILE)


def needed(index_dir: str | Path) -> bool:
    """Whether the live generation lacks a fill that finished or is still running (none ran, or it
    stopped or failed, or it kept its vectors under an older ``IDENTITY_VERSION``: after an update
    that names them anew, the next ``codeground index`` fills them again)."""
    index_dir = Path(index_dir)
    generation = _live_generation(index_dir)
    if generation is None or not (generation / RECORDS).is_file():
        return False
    state = read_state(index_dir) or {}
    if state.get("generation") != generation.name or kept_under_older_rule(state):
        return True
    return not (
        state.get("state") == "done" or (state.get("state") == "running" and _alive(state.get("pid")))
    )


def kept_under_older_rule(state: dict[str, Any]) -> bool:
    """Whether a fill's vectors were kept under another ``IDENTITY_VERSION`` than this codeground's
    (a question does not look them up)."""
    from codeground.components.embedders.cached_document import IDENTITY_VERSION

    return bool(state) and state.get("identity_version") != IDENTITY_VERSION


def _live_generation(index_dir: Path) -> Path | None:
    return IndexDir(index_dir).current() if index_dir.is_dir() else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_state(index_dir: str | Path) -> dict[str, Any] | None:
    """The last fill's state for this index folder, or ``None`` when none ran."""
    try:
        return json.loads((Path(index_dir) / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def _locked(index_dir: Path) -> Iterator[None]:
    with open(index_dir / LOCK_FILE, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # an older fill stops within a batch once CURRENT moves
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fill(
    index_dir: str | Path,
    query_pipeline: str | Path | None = None,
    *,
    batch: int = BATCH,
    on_batch: Callable[[dict[str, Any]], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Embed every record of the live generation through the query YAML's re-vote embedders (see the
    module rule); returns the final state (also written to ``fill.json``). ``on_ready()`` is called
    once the embedders are loaded (made, on a machine's first run), before the first batch."""
    from codeground.app.pipeline.loader import PIPELINES_DIR

    index_dir = Path(index_dir)
    generation = _live_generation(index_dir)
    if generation is None:
        return {"state": "stopped", "reason": "no index generation is live"}
    if not (generation / RECORDS).is_file():  # the Qdrant pair keeps its records in Qdrant
        return {"state": "stopped", "reason": "this index keeps no SQLite record store to read"}
    embedders = revote_embedders(query_pipeline or PIPELINES_DIR / "query.yaml")
    if not embedders:
        return {"state": "stopped", "reason": "the query pipeline embeds nothing at question time"}
    with _locked(index_dir):
        return _fill_locked(index_dir, generation, embedders, batch, on_batch, on_ready)


def _fill_locked(index_dir, generation, embedders, batch, on_batch, on_ready) -> dict[str, Any]:
    from codeground.components.embedders.cached_document import IDENTITY_VERSION
    from codeground.components.inner import build_inner, one_line
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    started = time.perf_counter()
    state: dict[str, Any] = {
        "state": "running",
        "generation": generation.name,
        "rankers": [name for name, _ in embedders],
        "identity_version": IDENTITY_VERSION,
        "pid": os.getpid(),
        "done": 0,
        "embedded": 0,
        "cached": 0,
        "unkept": 0,
    }
    store = lease = None
    try:
        lease = IndexDir(index_dir).hold(generation)  # a newer index does not delete it under us
        store = SQLiteBM25DocumentStore(persist_path=str(generation / RECORDS))
        ids = _ordered_ids(store)
        state["total"] = len(ids)
        _write_state(index_dir, state)
        built = []
        for name, spec in embedders:
            embedder = build_inner(_waiting_as_indexers_do(spec), name)
            if hasattr(embedder, "warm_up"):
                embedder.warm_up()
            built.append(embedder)
        if on_ready is not None:
            on_ready()
        for start in range(0, len(ids), batch):
            if IndexDir(index_dir).current() != generation:
                state.update(state="stopped", reason="another generation is live")
                break
            part = ids[start : start + batch]
            docs = store.filter_documents({"field": "id", "operator": "in", "value": part})
            for embedder in built:
                meta = embedder.run(documents=docs).get("meta") or {}
                state["embedded"] += int(meta.get("embedded", len(docs)))
                state["cached"] += int(meta.get("cached", 0))
                state["unkept"] += int(meta.get("unkept", 0))
            state["done"] += len(part)
            state["seconds"] = round(time.perf_counter() - started, 1)
            _write_state(index_dir, state)
            if on_batch is not None:
                on_batch(dict(state))
        else:
            if state["unkept"]:  # not done: the next `codeground index` fills them again
                reason = f"the embedding cache stayed busy: {state['unkept']} vectors not kept"
                state.update(state="stopped", reason=reason)
            else:
                state["state"] = "done"
    except Exception as exc:  # noqa: BLE001 - a fill that cannot go on says why in one line
        state.update(state="failed", error=one_line(exc))
    finally:
        if store is not None:
            store.close()
        if lease is not None:
            lease.close()
    state["seconds"] = round(time.perf_counter() - started, 1)
    with contextlib.suppress(OSError):  # the index folder itself may be gone
        _write_state(index_dir, state)
    return state


def start_background(index_dir: str | Path, query_pipeline: str | Path | None = None) -> int:
    """Start the fill as a detached process (it lowers its own priority; output to ``fill.log`` in
    the index folder); returns its pid."""
    index_dir = Path(index_dir)
    args = [sys.executable, "-m", "codeground.app.index.revote_fill", str(index_dir)]
    if query_pipeline is not None:
        args.append(str(query_pipeline))
    with open(index_dir / LOG_FILE, "ab") as log:
        child = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not stopped by the terminal's Ctrl-C or its closing
        )
    return child.pid


def main(argv: list[str]) -> int:
    """``python -m codeground.app.index.revote_fill INDEX_DIR [QUERY_YAML]``: fill at the lowest CPU
    priority once its models are made, so that questions asked meanwhile come first."""
    if not 1 <= len(argv) <= 2:
        print("usage: python -m codeground.app.index.revote_fill INDEX_DIR [QUERY_YAML]", file=sys.stderr)
        return 2
    show_announcements()  # what it makes once per machine, in fill.log

    def lowest_priority() -> None:
        with contextlib.suppress(OSError):
            os.nice(19)

    state = fill(argv[0], argv[1] if len(argv) > 1 else None, on_ready=lowest_priority)
    print(json.dumps(state))
    return 0 if state["state"] in ("done", "stopped") else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
