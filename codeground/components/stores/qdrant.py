"""One Qdrant collection per index generation holding every record: payload, dense and sparse vectors.

Rules (``pipelines/index_qdrant.yaml`` and ``pipelines/query_qdrant.yaml``):

- **Where**: with ``url`` set (``${qdrant_url}``, from ``$QDRANT_URL``; the key from
  ``$QDRANT_API_KEY``) the collection lives on that Qdrant server or cluster; with it empty, in
  Qdrant's local mode in ``path`` (inside the index generation's folder), which needs no server.
- **Local mode opens its folder once per process**: Qdrant's local client locks the folder, so the
  several components of one pipeline that name the same ``path`` (dense and sparse retrievers,
  symbol lookup, grounding) share one client here, kept until the last of them closes. A second
  *process* on the same folder is refused by Qdrant with its own message (use a server for that).
- **A collection per repository and generation on a server**: named
  ``<index>-<repository>-<generation>`` (``codeground-vllm-gen-…``), so one deployment holds many
  repositories side by side, and a new generation
  never touches the one the live index answers from and the switch is the same atomic ``CURRENT``
  swap as for a local index. An incremental run's folder is a copy of the previous generation, which
  holds a local collection but not a server one: with ``seed_from_generation`` set and its own
  collection empty, the store first copies the previous generation's points (payload and vectors)
  in batches. The collections a generation created are listed in ``register_in`` and dropped with it
  (``drop_registered``).
- **Symbol lookup without reading the collection**: ``records_by_symbol`` asks Qdrant for the points
  whose ``meta.symbol`` is one of the names or contains all of a name's words (a payload filter), then
  keeps those whose symbol is the name or ends in ``.name``, as the BM25 store's index does.

Usage (local mode, in memory):
```python
from haystack import Document
from codeground.components.stores.qdrant import CodegroundQdrantDocumentStore

store = CodegroundQdrantDocumentStore(location=":memory:", embedding_dim=4, use_sparse_embeddings=True)
meta = {"symbol": "Trainer.fit", "source_type": "impl", "file_path": "t.py", "start_line": 3}
store.write_documents([Document(id="t.py:Trainer.fit:3", content="def fit(self): ...", meta=meta)])
rows = store.records_by_symbol(["fit"], ["source_type"])
assert rows == [("t.py:Trainer.fit:3", "Trainer.fit", "impl")]
```
"""

from __future__ import annotations

import atexit
import inspect
import logging
import threading
import warnings
import weakref
from pathlib import Path
from typing import Any

from haystack import Document, default_from_dict, default_to_dict
from haystack.utils import Secret
from haystack_integrations.document_stores.qdrant import QdrantDocumentStore
from haystack_integrations.document_stores.qdrant.converters import (
    convert_id,
    convert_qdrant_point_to_haystack_document,
)
from qdrant_client.http import models as rest

from codeground.components.stores.server_registry import owned, register

logger = logging.getLogger(__name__)
REGISTRY_FILE = "qdrant_collections.json"
# The client's "Failed to obtain server version" (two lines with a source path, from a thread of its
# own) is left out: a server that does not answer fails the next request with its own one-line error.
# A real version mismatch is still warned about.
warnings.filterwarnings("ignore", message="Failed to obtain server version", category=UserWarning)

# re-entrant: a store's finalizer (``_release``) may run on this thread, from a garbage collection
# that an allocation under the lock triggers (making a client allocates a lot)
_shared_lock = threading.RLock()
_shared: dict[str, list[Any]] = {}  # resolved local path -> [client, number of stores using it]


def _api_key() -> Secret:
    return Secret.from_env_var("QDRANT_API_KEY", strict=False)


class CodegroundQdrantDocumentStore(QdrantDocumentStore):
    """``QdrantDocumentStore`` with the module's rules: a shared local client, a collection per
    generation on a server, and symbol lookup by payload filter."""

    def __init__(
        self,
        *,
        create_collection: bool = True,
        repository: str | None = None,
        generation: str | None = None,
        seed_from_generation: str | None = None,
        register_in: str | None = None,
        **kwargs: Any,
    ) -> None:
        """
        :param create_collection: create the collection when it does not exist (writers); a reader
            sets ``False`` and is refused in one line instead of creating an empty collection.
        :param repository: the index's name (``${index_name}``, the repository's folder name): on a
            server the collection is ``<index>-<repository>-<generation>``.
        :param generation: this index generation's name (``${generation}``), the collection's last part.
        :param seed_from_generation: the previous generation (``${previous_generation}``; empty for a
            full build): an empty server collection is first filled with that generation's points.
        :param register_in: file (in the generation's folder) listing the server collections it owns.
        :param kwargs: ``QdrantDocumentStore`` parameters; an empty ``url`` means local mode in ``path``,
            and without ``api_key`` the key is ``$QDRANT_API_KEY`` when set.
        """
        if not kwargs.get("url"):
            kwargs["url"] = None
        else:
            kwargs["path"] = None  # a server: nothing in the index folder
            if kwargs.get("api_key") is None:
                kwargs["api_key"] = _api_key()
        super().__init__(**kwargs)
        self.create_collection = create_collection
        self.repository = repository or None
        self.generation = generation or None
        self.seed_from_generation = seed_from_generation or None
        self.register_in = register_in or None
        self._base_index = self.index
        if self.url and self.generation:
            self.index = self._collection(self.generation)
        self._release: weakref.finalize | None = None
        self._init_lock = threading.RLock()  # setting the collection up calls back in

    def _collection(self, generation: str) -> str:
        return "-".join(p for p in (self._base_index, self.repository, generation) if p)

    # -- the client ----------------------------------------------------------------------------------
    def _initialize_client(self) -> None:
        with self._init_lock:
            if self._client is None:
                self._open()

    def _missing(self) -> ValueError:
        return ValueError(f"no Qdrant collection '{self.index}' here: index with pipelines/index_qdrant.yaml")

    def _open(self) -> None:
        if not self.path:  # a server (or ``:memory:``)
            if self.url and self.create_collection:
                self._register()  # before the collection exists: a crash in between leaks nothing
            if not self.create_collection:
                import qdrant_client

                client = qdrant_client.QdrantClient(**self._prepare_client_params())
                exists = client.collection_exists(self.index)
                client.close()
                if not exists:
                    raise self._missing()
            super()._initialize_client()
            if self.url:
                self._seed()
            return
        key = str(Path(self.path).resolve())
        if not self.create_collection and not Path(key).is_dir():
            raise self._missing()  # a reader never writes a folder into the index
        with _shared_lock:
            entry = _shared.get(key)
            if entry is None:
                import qdrant_client

                if not _shared:
                    atexit.register(_close_shared)
                entry = _shared[key] = [qdrant_client.QdrantClient(**self._prepare_client_params()), 0]
            entry[1] += 1
        self._client = entry[0]
        # a store dropped without close() (a pipeline that is garbage) lets go of its share too
        self._release = weakref.finalize(self, _release, key)
        if not self.create_collection and not self._client.collection_exists(self.index):
            raise self._missing()
        self._set_up_collection(
            self.index,
            self.embedding_dim,
            self.recreate_index,
            self.similarity,
            self.use_sparse_embeddings,
            self.sparse_idf,
            self.on_disk,
            None,  # payload indexes have no effect in local mode (Qdrant warns about each)
        )

    def close(self) -> None:
        if self._release is None:
            super().close()
            return
        release, self._release, self._client = self._release, None, None
        release()  # a finalizer runs once, whether called here or at garbage collection

    # -- a collection per generation on a server ---------------------------------------------------
    def _register(self) -> None:
        if self.register_in:
            register(self.register_in, {"url": self.url, "collection": self.index}, self.generation)

    def _seed(self) -> None:
        if not (self.generation and self.seed_from_generation):
            return
        assert self._client is not None
        if self._client.count(self.index, exact=True).count > 0:
            return
        source = self._collection(self.seed_from_generation)
        if not self._client.collection_exists(source):
            return
        offset, copied = None, 0
        while True:
            points, offset = self._client.scroll(
                source, limit=self.write_batch_size, offset=offset, with_payload=True, with_vectors=True
            )
            if points:
                structs = [rest.PointStruct(id=p.id, payload=p.payload, vector=p.vector) for p in points]
                self._client.upsert(self.index, points=structs, wait=True)
                copied += len(points)
            if offset is None:
                break
        logger.info("copied %d points from %s into %s", copied, source, self.index)

    # -- reading records by id --------------------------------------------------------------------
    def filter_documents(self, filters: dict[str, Any] | rest.Filter | None = None) -> list[Document]:
        """The stock filter, except that ``{"field": "id", "operator": "in", "value": ids}`` (how the
        app and symbol lookup read records back) is a lookup of those points by id, not a filter
        that local mode checks against every point (minutes on 39,000 records)."""
        if (
            isinstance(filters, dict)
            and set(filters) == {"field", "operator", "value"}
            and filters["field"] == "id"
            and filters["operator"] == "in"
        ):
            return self._by_ids([str(i) for i in filters["value"]])
        return super().filter_documents(filters)

    def _by_ids(self, ids: list[str]) -> list[Document]:
        self._initialize_client()
        assert self._client is not None
        docs: list[Document] = []
        for start in range(0, len(ids), self.scroll_size):
            points = self._client.retrieve(
                self.index,
                ids=[convert_id(i) for i in ids[start : start + self.scroll_size]],
                with_payload=True,
                with_vectors=self.return_embedding,
            )
            docs += [convert_qdrant_point_to_haystack_document(p, self.use_sparse_embeddings) for p in points]
        return docs

    # -- symbol lookup -------------------------------------------------------------------------------
    def records_by_symbol(self, names: list[str], fields: list[str]) -> list[tuple]:
        """``(id, symbol, meta[field], …)`` of the records whose symbol is one of ``names`` or ends in
        ``.name`` (the module's rule)."""
        names = [n for n in dict.fromkeys(names) if n]
        if not names:
            return []
        self._initialize_client()
        assert self._client is not None
        should: list[Any] = [rest.FieldCondition(key="meta.symbol", match=rest.MatchAny(any=names))]
        should += [rest.FieldCondition(key="meta.symbol", match=rest.MatchText(text=n)) for n in names]
        wanted = set(names)
        rows: list[tuple] = []
        offset = None
        while True:
            points, offset = self._client.scroll(
                self.index,
                scroll_filter=rest.Filter(should=should),
                limit=self.scroll_size,
                offset=offset,
                with_payload=["id", "meta"],
                with_vectors=False,
            )
            for point in points:
                payload = point.payload or {}
                meta = payload.get("meta") or {}
                symbol = meta.get("symbol") or ""
                if symbol in wanted or symbol.rsplit(".", 1)[-1] in wanted:
                    rows.append((payload.get("id"), symbol, *(meta.get(f) for f in fields)))
            if offset is None:
                return rows

    def to_dict(self) -> dict[str, Any]:
        """The stock store's parameters (its collection name, not the generation's) plus this store's."""
        params = [p for p in inspect.signature(QdrantDocumentStore.__init__).parameters if p != "self"]
        init = {k: getattr(self, k) for k in params}
        init.update(
            index=self._base_index,
            api_key=self.api_key.to_dict() if self.api_key else None,
            create_collection=self.create_collection,
            repository=self.repository,
            generation=self.generation,
            seed_from_generation=self.seed_from_generation,
            register_in=self.register_in,
        )
        return default_to_dict(self, **init)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodegroundQdrantDocumentStore:
        params = data.get("init_parameters", {})
        if isinstance(params.get("api_key"), dict):
            params["api_key"] = Secret.from_dict(params["api_key"])
        return default_from_dict(cls, data)


def _release(key: str) -> None:
    """One store lets go of the local client of ``key``; the last one closes it (freeing the folder)."""
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _shared[key]
    entry[0].close()


def _close_shared() -> None:
    """Close the local clients still open at exit, while the interpreter can still run their close
    (Qdrant's own finalizer fails once it is shutting down)."""
    with _shared_lock:
        entries = list(_shared.values())
        _shared.clear()
    for client, _ in entries:
        client.close()


def drop_registered(gen: Path) -> None:
    """Drop the server collections a generation's stores registered in it (best effort, logged)."""
    entries = owned(gen, REGISTRY_FILE)
    if not entries:
        return
    import qdrant_client

    for entry in entries:
        client = None
        try:
            client = qdrant_client.QdrantClient(url=entry["url"], api_key=_api_key().resolve_value())
            client.delete_collection(entry["collection"])
        except Exception as exc:  # noqa: BLE001 - the server is down or the collection gone: say so, go on
            logger.warning("could not drop Qdrant collection %s: %s", entry.get("collection"), exc)
        finally:
            if client is not None:
                client.close()
