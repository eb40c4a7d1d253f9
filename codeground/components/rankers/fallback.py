"""Cross-encoder reranking that never turns a failure into scores: no opinion keeps the fused order."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import Any

from haystack import Document, component

from codeground.components.hub import unavailable
from codeground.components.inner import LazyComponent, init_parameters, one_line
from codeground.components.notices import RERANK_UNAVAILABLE, Notice

logger = logging.getLogger(__name__)

DEFAULT_RANKER = {  # query.yaml's
    "type": "codeground.components.rankers.openvino_cross_encoder.OpenVINOCrossEncoderRanker",
    "init_parameters": {
        "model": "cross-encoder/ms-marco-MiniLM-L-6-v2",
        "top_k": 24,
        "meta_fields_to_embed": ["header"],
        "scale_score": True,
        "max_length": 512,
        "precision": "fp32",
    },
}


NO_OPINION = "reranking unavailable"  # how a notice without the reranker's opinion begins


def no_opinion(documents: list[Document], why: str) -> dict[str, Any]:
    """What any ranker returns without an opinion: the incoming order and scores, and why."""
    return {
        "documents": list(documents),
        "reranked": False,
        "notices": [Notice(RERANK_UNAVAILABLE, f"{NO_OPINION}: {why}; kept the fused order")],
    }


@component
class FallbackRanker:
    """Rerank with a stock ranker over header + text cut to ``max_chars``; keep the fused order on failure.

    Rules:
    - The ranker sees each candidate's provenance header (via the stock ranker's
      ``meta_fields_to_embed``) and its content cut to ``max_chars``; the documents returned are the
      originals (full content) with the ranker's score (sigmoid when ``scale_score``).
    - A ranker without an opinion — its model cannot be loaded (offline, missing), it raises, or it
      takes longer than ``timeout_s`` — changes nothing: the incoming (fused) order and scores are
      kept, ``reranked`` is False and a notice "reranking unavailable: …" says why. Scores are never
      zeroed. A model that failed to load is not retried on every query.
    - ``timeout_s`` is the one time budget that can change the default search's order (a machine
      too busy to score in time gets the fused order): it stays because a hung or swapped-out model
      must not hang the question, and the notice says so, so an order that came without one is the
      order that question gets every time (``test_revote_determinism``).
    - With ``max_candidates`` set (``query.yaml``: 12, the candidates the re-vote orders), the ranker
      judges the first ``max_candidates`` documents and every symbol hit (``symbol_documents``)
      further down the list, where ``SymbolHitMerger`` appends them; a reranked list holds what was
      judged, nothing else (as the floor after it keeps only what scored). Without an opinion nothing
      is cut. Why: scoring is the bulk of a cold search with a cross-encoder (24 pairs of up to 512
      tokens took 1.6-1.8 s on a 2-core AVX2-only EPYC, over the 3 s a cold search may take there);
      on the vLLM dev sets the first gold record sat in the pool's first 12 for 88 of the 89 questions
      whose gold the pool holds (the other at 20, a *check* question), so no reranker, however good,
      can lose more than that one question to the cut (docs/answering.md, "The reranker judges the
      first 12").

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.fallback import FallbackRanker

    ranker = FallbackRanker(ranker={"type": "haystack_integrations.components.rankers.sentence_transformers."
                                    "sentence_transformers_similarity.SentenceTransformersSimilarityRanker",
                                    "init_parameters": {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}})
    ranker.warm_up()  # never raises: without the model (offline, not downloaded) it has no opinion
    fused = [Document(content="def load_lora(path): ...", score=0.5)]
    out = ranker.run(query="load a LoRA adapter", documents=fused)
    assert out["reranked"] or (out["documents"] == fused and out["notices"])
    ```
    """

    def __init__(
        self,
        *,
        ranker: dict[str, Any] | None = None,
        max_chars: int = 2000,
        timeout_s: float = 30.0,
        max_candidates: int | None = None,
    ) -> None:
        """
        :param ranker: the stock ranker, serialized (``type`` + ``init_parameters``) as in a pipeline YAML.
        :param max_chars: candidates' content is cut to this many characters before scoring.
        :param timeout_s: a ranking that takes longer than this is abandoned (fused order kept).
        :param max_candidates: how many of the first documents the ranker judges, besides the symbol
            hits further down (``None``: all of them; see the class rules).
        """
        if max_candidates is not None and max_candidates < 1:
            raise ValueError(f"max_candidates must be at least 1, got {max_candidates}")
        self.ranker = ranker or DEFAULT_RANKER
        self.max_chars = max_chars
        self.timeout_s = timeout_s
        self.max_candidates = max_candidates
        self._inner = LazyComponent(self.ranker, "ranker")
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codeground-rerank")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FallbackRanker:
        """Keep the stock ranker serialized until ``warm_up``: building it imports its model library."""
        return cls(**(data.get("init_parameters") or {}))

    def warm_up(self) -> None:
        """Load the stock ranker's model once; a failure is remembered and reported per query."""
        if not self._ready():
            logger.info("reranker unavailable: %s", self._load_error())

    def _ready(self) -> bool:
        if self._inner.instance is None and self._inner.error is None:
            missing = unavailable(self._model_name())
            if missing:  # no import of torch / sentence-transformers for a model that cannot load
                self._inner.error = missing
        return self._inner.warm_up()

    def _load_error(self) -> str:
        reason = one_line(self._inner.error) if self._inner.error else "ranker not loaded"
        if "connect" in reason.lower() or "offline" in reason.lower():
            reason = "not downloaded and no network; fetch it once online or point the YAML at a local copy"
        return f"model {self._model_name()!r} could not be loaded ({reason[:160]})"

    def _model_name(self) -> str:
        return str(init_parameters(self.ranker).get("model", type(self.ranker).__name__))

    @component.output_types(documents=list[Document], reranked=bool, notices=list[str])
    def run(
        self,
        query: str,
        documents: list[Document],
        top_k: int | None = None,
        symbol_documents: list[Document] | None = None,
    ) -> dict[str, Any]:
        """Rerank ``documents`` (or those the class rules say it judges) for ``query``, or return them
        unchanged with a notice."""
        if not documents:
            return {"documents": [], "reranked": False, "notices": []}
        if not self._ready():
            return self._no_opinion(documents, self._load_error())
        judged = self._judged(documents, symbol_documents or [])
        trimmed = [replace(d, content=(d.content or "")[: self.max_chars]) for d in judged]
        kwargs: dict[str, Any] = {"query": query, "documents": trimmed}
        if top_k is not None:
            kwargs["top_k"] = top_k
        try:
            future = self._pool.submit(self._inner.instance.run, **kwargs)
            ranked = future.result(timeout=self.timeout_s)["documents"]
        except FutureTimeout:
            return self._no_opinion(documents, f"no answer within {self.timeout_s:g} s")
        except Exception as exc:  # noqa: BLE001
            return self._no_opinion(documents, one_line(exc))
        originals = {d.id: d for d in documents}
        out = [replace(originals[d.id], score=d.score) for d in ranked if d.id in originals]
        return {"documents": out, "reranked": True, "notices": []}

    def _judged(self, documents: list[Document], symbol_documents: list[Document]) -> list[Document]:
        """The first ``max_candidates`` documents, then the symbol hits further down, in list order."""
        if self.max_candidates is None or len(documents) <= self.max_candidates:
            return list(documents)
        hits = {d.id for d in symbol_documents}
        head, rest = documents[: self.max_candidates], documents[self.max_candidates :]
        return [*head, *(d for d in rest if d.id in hits)]

    _no_opinion = staticmethod(no_opinion)
