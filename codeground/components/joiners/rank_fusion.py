"""Reciprocal rank fusion with a chosen k, weights named per retriever, and path priors."""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatch
from typing import Any

from haystack import Document, component


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
    ) -> None:
        """
        :param weights: one entry per input list: socket name -> weight (> 0).
        :param k: the RRF constant (>= 1); smaller k gives the top ranks more say.
        :param top_k: how many fused documents to return (all when None).
        :param path_priors: glob on ``meta.file_path`` -> score multiplier (> 0); first match wins.
        """
        if not weights:
            raise ValueError("RankFusion needs at least one named input in 'weights'")
        if any(w <= 0 for w in weights.values()):
            raise ValueError("RankFusion weights must be positive")
        if k < 1:
            raise ValueError("RankFusion k must be at least 1")
        if any(p <= 0 for p in (path_priors or {}).values()):
            raise ValueError("RankFusion path priors must be positive")
        self.weights = dict(weights)
        self.k = k
        self.top_k = top_k
        self.path_priors = dict(path_priors or {})
        component.set_input_types(self, **{name: list[Document] for name in self.weights})

    def _prior(self, doc: Document) -> float:
        path = str(doc.meta.get("file_path", ""))
        for pattern, factor in self.path_priors.items():
            if fnmatch(path, pattern):
                return factor
        return 1.0

    @component.output_types(documents=list[Document])
    def run(self, **lists: list[Document] | None) -> dict[str, Any]:
        """The fused ranking of the named lists, best first."""
        unknown = set(lists) - set(self.weights)
        if unknown:
            raise ValueError(f"RankFusion got lists it has no weight for: {sorted(unknown)}")
        totals: dict[str, float] = {}
        first: dict[str, Document] = {}
        for name, weight in self.weights.items():
            for rank, doc in enumerate(lists.get(name) or [], start=1):
                first.setdefault(doc.id, doc)
                totals[doc.id] = totals.get(doc.id, 0.0) + weight / (self.k + rank)
        scored = [(totals[i] * self._prior(doc), n, doc) for n, (i, doc) in enumerate(first.items())]
        scored.sort(key=lambda t: (-t[0], t[1]))
        fused = [replace(doc, score=score) for score, _, doc in scored]
        return {"documents": fused[: self.top_k] if self.top_k is not None else fused}
