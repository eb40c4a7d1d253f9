"""Reciprocal rank fusion with a chosen k, weights named per retriever, and path priors."""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatch
from typing import Any

from haystack import Document, component

from codeground.components.query_shape import is_search_phrase


@component
class RankFusion:
    """Fuse ranked lists: ``score(d) = prior(d) * sum_i weight_i / (k + rank_i(d))`` (rank from 1).

    Rules:
    - ``k`` is configuration (the stock ``DocumentJoiner`` fixes it at 61; a small k lets the top of
      the BM25 list count, which code questions need).
    - Each input list has its own socket named after the retriever that feeds it, and its weight is
      looked up by that name, so a weight can never land on the wrong list (the stock joiner applies
      weights in component run order).
    - ``path_priors`` multiply the fused score of documents whose ``file_path`` matches a glob
      (first match wins), e.g. ``{"tests/*": 0.7}`` so test files do not crowd out the library.
    - ``phrase_weights`` / ``phrase_k``, when given, replace ``weights`` / ``k`` for a search phrase
      (``query_shape.is_search_phrase``: neither a question nor one identifier). A question's words
      and an identifier are best matched by BM25; a short phrase's meaning needs the dense list as
      much (semble's benchmark of phrases 0.781 -> 0.826 at 1 : 1, k 60; the vLLM questions keep
      BM25 x16, k 10: at 1 : 1 code R@1 fell 0.667 -> 0.312; docs/measurements/semble.md).
    - Ties keep the order of first appearance; a document in several lists is returned once, with
      the content and meta of its first appearance. Inputs are never changed.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.joiners.rank_fusion import RankFusion

    a, b, c = (Document(id=i, content=i, meta={"file_path": f"{i}.py"}) for i in "abc")
    fusion = RankFusion(weights={"bm25": 2.0, "dense": 1.0}, k=10, top_k=24, path_priors={"tests/*": 0.7})
    fused = fusion.run(bm25=[a, b], dense=[b, c])["documents"]
    assert [d.id for d in fused] == ["b", "a", "c"]  # b: 2/12 + 1/11 beats a: 2/11
    ```
    """

    def __init__(
        self,
        *,
        weights: dict[str, float],
        k: int = 60,
        top_k: int | None = None,
        path_priors: dict[str, float] | None = None,
        phrase_weights: dict[str, float] | None = None,
        phrase_k: int | None = None,
    ) -> None:
        """
        :param weights: one entry per input list: socket name -> weight (> 0).
        :param k: the RRF constant (>= 1); smaller k gives the top ranks more say.
        :param top_k: how many fused documents to return (all when None).
        :param path_priors: glob on ``meta.file_path`` -> score multiplier (> 0); first match wins.
        :param phrase_weights: the weights for a search phrase (the same names as ``weights``; default:
            ``weights``).
        :param phrase_k: the RRF constant for a search phrase (default: ``k``).
        """
        if not weights:
            raise ValueError("RankFusion needs at least one named input in 'weights'")
        if any(w <= 0 for w in weights.values()):
            raise ValueError("RankFusion weights must be positive")
        if k < 1:
            raise ValueError("RankFusion k must be at least 1")
        if any(p <= 0 for p in (path_priors or {}).values()):
            raise ValueError("RankFusion path priors must be positive")
        if phrase_weights is not None:
            if set(phrase_weights) != set(weights):
                raise ValueError("RankFusion phrase_weights must name the same lists as weights")
            if any(w <= 0 for w in phrase_weights.values()):
                raise ValueError("RankFusion phrase weights must be positive")
        if phrase_k is not None and phrase_k < 1:
            raise ValueError("RankFusion phrase_k must be at least 1")
        if "query" in weights:
            raise ValueError("RankFusion cannot fuse a list named 'query' (the run's query input)")
        self.weights = dict(weights)
        self.k = k
        self.top_k = top_k
        self.path_priors = dict(path_priors or {})
        self.phrase_weights = dict(phrase_weights) if phrase_weights is not None else None
        self.phrase_k = phrase_k
        component.set_input_types(self, **{name: list[Document] for name in self.weights})
        component.set_input_type(self, "query", str, default="")

    def _prior(self, doc: Document) -> float:
        path = str(doc.meta.get("file_path", ""))
        for pattern, factor in self.path_priors.items():
            if fnmatch(path, pattern):
                return factor
        return 1.0

    @component.output_types(documents=list[Document])
    def run(self, query: str = "", **lists: list[Document] | None) -> dict[str, Any]:
        """The fused ranking of the named lists, best first (``query`` picks the blend)."""
        unknown = set(lists) - set(self.weights)
        if unknown:
            raise ValueError(f"RankFusion got lists it has no weight for: {sorted(unknown)}")
        phrase = is_search_phrase(query or "")
        weights = self.phrase_weights if phrase and self.phrase_weights is not None else self.weights
        k = self.phrase_k if phrase and self.phrase_k is not None else self.k
        totals: dict[str, float] = {}
        first: dict[str, Document] = {}
        for name, weight in weights.items():
            for rank, doc in enumerate(lists.get(name) or [], start=1):
                first.setdefault(doc.id, doc)
                totals[doc.id] = totals.get(doc.id, 0.0) + weight / (k + rank)
        scored = [(totals[i] * self._prior(doc), n, doc) for n, (i, doc) in enumerate(first.items())]
        scored.sort(key=lambda t: (-t[0], t[1]))
        fused = [replace(doc, score=score) for score, _, doc in scored]
        return {"documents": fused[: self.top_k] if self.top_k is not None else fused}
