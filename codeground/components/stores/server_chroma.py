"""A generation's dense store on a Chroma server: one collection per index generation.

Rules (what a Chroma folder inside the generation gets for free, a server collection must be told):

- The collection is named after the generation (``collection_name: codeground-${generation}``), so a
  new index generation never touches the collection the live one is answering from, and the switch
  to it is the same atomic ``CURRENT`` swap as for a local index.
- An incremental run starts its generation as a copy of the previous one; a server collection is
  not in that copy. With ``seed_from_generation`` set (the previous generation's name) and its own
  collection empty, the store first copies the previous collection's rows (ids and vectors, and
  content and meta unless ``vectors_only``) in batches, so only changed records are written.
- With ``register_in`` (a file in the generation's folder), the store records the collection it
  created there; removing the generation drops those collections (``drop_registered``, only those
  named after that generation: an incremental run's folder starts as a copy of the previous one's),
  so replaced generations do not pile up on the server.

Usage (a running ``chroma run --host 127.0.0.1 --port 8000`` is needed, so this is not run here):
```python
from codeground.components.stores.server_chroma import ServerChromaDocumentStore

store = ServerChromaDocumentStore(host="127.0.0.1", port=8000, collection_name="codeground-gen-2",
                                  generation="gen-2", seed_from_generation="gen-1", vectors_only=True)
# store.count_documents() copies codeground-gen-1's vectors first when codeground-gen-2 is empty
```
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from haystack import default_from_dict

from codeground.components.stores.batched_chroma import BatchedChromaDocumentStore
from codeground.components.stores.server_registry import owned, register

logger = logging.getLogger(__name__)
REGISTRY_FILE = "server_collections.json"


class ServerChromaDocumentStore(BatchedChromaDocumentStore):
    """``BatchedChromaDocumentStore`` on a Chroma server, one collection per generation (module rules)."""

    def __init__(
        self,
        *,
        generation: str | None = None,
        seed_from_generation: str | None = None,
        register_in: str | None = None,
        **kwargs: Any,
    ) -> None:
        """
        :param generation: this index generation's name (``${generation}``), part of the collection name.
        :param seed_from_generation: the previous generation (``${previous_generation}``; empty for a full
            build): an empty collection is first filled with that generation's rows.
        :param register_in: file (in the generation's folder) listing the server collections it owns.
        :param kwargs: ``BatchedChromaDocumentStore`` / ``ChromaDocumentStore`` parameters (``host``…).
        """
        super().__init__(**kwargs)
        self.generation = generation or None
        self.seed_from_generation = seed_from_generation or None
        self.register_in = register_in or None

    def _ensure_initialized(self) -> None:
        fresh = not self._collection
        super()._ensure_initialized()
        if fresh:
            self._register()
            self._seed()

    def _register(self) -> None:
        if self.register_in:
            register(
                self.register_in,
                {"host": self._host, "port": self._port, "collection": self._collection_name},
                self.generation,
            )

    def _seed(self) -> None:
        own, previous = self.generation, self.seed_from_generation
        if not (own and previous) or own not in self._collection_name:
            return
        assert self._collection is not None
        if self._collection.count() > 0:
            return
        source_name = self._collection_name.replace(self.generation, self.seed_from_generation)
        try:
            source = self._client.get_collection(source_name)
        except Exception:  # noqa: BLE001 - no previous collection: nothing to copy (a full build follows)
            return
        include = ["embeddings"] if self.vectors_only else ["embeddings", "documents", "metadatas"]
        size = min(self.write_batch_size, self._client.get_max_batch_size())
        offset = 0
        while True:
            rows = source.get(include=include, limit=size, offset=offset)
            if not rows["ids"]:
                break
            fields = {"ids": rows["ids"], "embeddings": rows["embeddings"]}
            if not self.vectors_only:
                fields.update(documents=rows["documents"], metadatas=rows["metadatas"])
            self._collection.add(**fields)
            offset += len(rows["ids"])
        logger.info("copied %d rows from %s into %s", offset, source_name, self._collection_name)

    def to_dict(self) -> dict[str, Any]:
        """The batched store's serialization plus this store's three parameters."""
        data = super().to_dict()
        params = data["init_parameters"]
        params.update(
            generation=self.generation,
            seed_from_generation=self.seed_from_generation,
            register_in=self.register_in,
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ServerChromaDocumentStore:
        return default_from_dict(cls, data)


def drop_registered(gen: Path) -> None:
    """Drop the server collections a generation's stores registered in it (best effort, logged)."""
    entries = owned(gen, REGISTRY_FILE)
    if not entries:
        return
    import chromadb
    from chromadb.config import Settings

    for entry in entries:
        try:
            client = chromadb.HttpClient(
                host=entry["host"], port=entry["port"], settings=Settings(anonymized_telemetry=False)
            )
            client.delete_collection(entry["collection"])
        except Exception as exc:  # noqa: BLE001 - the server is down or the collection gone: say so, go on
            logger.warning("could not drop Chroma collection %s: %s", entry.get("collection"), exc)
