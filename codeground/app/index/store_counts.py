"""The store-count check: every store a pipeline reads or writes must hold the records the manifest
says it holds.

Rule: a store that cannot be counted is unreadable (``StoreUnreadable`` names the component); a
store whose count differs from the manifest's is stale. A store holds every record of the manifest
unless the manifest names it in ``store_counts`` (a store that gets only some records, such as the
dense store fed through a router), keyed by its ``persist_path`` inside the generation
(``store_key``). ``index``, ``search``/``query`` and ``doctor`` all count with ``record_counts``
and compare with ``disagreeing`` against ``expected_counts``; each words the finding for its own
user (rebuild, refuse, report).

Usage:
```python
from haystack import Document, Pipeline
from haystack.components.writers import DocumentWriter
from codeground.app.index.store_counts import disagreeing, record_counts
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

store = SQLiteBM25DocumentStore()
store.write_documents([Document(content="def f(): ...")])
pipeline = Pipeline()
pipeline.add_component("writer", DocumentWriter(document_store=store))
counts = record_counts(pipeline)                 # {"writer": 1}
assert disagreeing(counts, 1) == {} and disagreeing(counts, 2) == {"writer": 1}
```
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

SERVER_DOWN_FIX = "check that server: is it running there, and is its key right if it needs one?"


class StoreUnreadable(Exception):
    """The store behind ``component`` could not be counted (``__cause__`` says why); ``server`` is the
    address of a store kept on a server (``server_of``), which a rebuild cannot help while it is down."""

    def __init__(self, component: str, cause: BaseException, server: str | None = None) -> None:
        why = " ".join(str(cause).split())[:200]
        kind = type(cause).__name__
        on = f" on the server at {server}" if server else ""
        super().__init__(
            f"the index store behind '{component}'{on} cannot be read ({kind}{': ' + why if why else ''})"
        )
        self.component = component
        self.server = server

    def remedy(self, rebuild: str) -> str:
        """The line with what to do: see whether the server runs, or run ``rebuild``."""
        if self.server:
            return f"{self}; {SERVER_DOWN_FIX}"
        return f"{self}; rebuild with `{rebuild}`"


def server_of(store: Any) -> str | None:
    """The address of a store kept on a server (a Qdrant ``url``, a Chroma server's host and port,
    read from its public ``to_dict``); ``None`` for one in the index folder."""
    try:
        params = store.to_dict().get("init_parameters", {})
    except Exception:  # noqa: BLE001 - a store that cannot describe itself is taken as local
        return None
    url, host, port = params.get("url"), params.get("host"), params.get("port")
    if isinstance(url, str) and url:
        return url
    return f"http://{host}:{port}" if host and port else None


def record_counts(pipeline: Any, components: Iterable[str] | None = None) -> dict[str, int]:
    """``{component: records in its document store}`` for ``components`` (default: every component
    of ``pipeline`` that has a ``document_store``), in pipeline order."""
    wanted = None if components is None else list(components)
    pairs = (
        [(name, pipeline.get_component(name)) for name in wanted]
        if wanted is not None
        else list(pipeline.walk())
    )
    counts: dict[str, int] = {}
    for name, instance in pairs:
        store = getattr(instance, "document_store", None)
        if store is None:
            continue
        try:
            counts[name] = store.count_documents()
        except Exception as exc:  # noqa: BLE001 - any failure to count means an unreadable store
            raise StoreUnreadable(name, exc, server_of(store)) from exc
    return counts


def disagreeing(counts: dict[str, int], expected: int | dict[str, int]) -> dict[str, int]:
    """The stores whose count is not ``expected`` (one number for all, or one per component)."""
    want = expected if isinstance(expected, dict) else dict.fromkeys(counts, expected)
    return {name: n for name, n in counts.items() if n != want.get(name)}


def store_key(store: Any, gen: str | Path) -> str | None:
    """Where ``store`` keeps its records, relative to the generation ``gen`` (``chroma``,
    ``bm25.sqlite3``), ``server/<collection>`` for a Chroma server's collection (its generation
    written ``${generation}``); ``None`` for a store outside it or without a ``persist_path``."""
    path = getattr(store, "persist_path", None)
    params: dict[str, Any] = {}
    if path is None and callable(getattr(store, "to_dict", None)):  # e.g. ChromaDocumentStore
        params = store.to_dict().get("init_parameters") or {}
        path = params.get("persist_path")
    if not path and params.get("host") and params.get("collection_name"):  # a collection on a server
        # named per generation; the key is the same in every generation (the manifest is copied)
        return "server/" + str(params["collection_name"]).replace(Path(gen).name, "${generation}")
    if not path:
        return None
    try:
        return Path(path).resolve().relative_to(Path(gen).resolve()).as_posix()
    except ValueError:
        return None


def expected_counts(
    pipeline: Any, names: Iterable[str], gen: str | Path, total: int, partial: dict[str, int] | None
) -> dict[str, int]:
    """``{component: records its store must hold}``: ``partial[store_key]`` for a store the manifest
    lists there, ``total`` (every record) for any other."""
    partial = partial or {}
    expected = {}
    for name in names:
        key = store_key(pipeline.get_component(name).document_store, gen)
        expected[name] = partial.get(key, total) if key is not None else total
    return expected
