"""Drop reranked candidates that score far below the best one."""

from __future__ import annotations

from typing import Any

from haystack import Document, component


@component
class RelativeScoreFloor:
    """Keep candidates scoring at least ``ratio`` × the best score, and never fewer than ``min_keep``.

    Rule: scores are the reranker's sigmoid outputs; anything below 2% of the best is
    dropped, but at least 3 candidates survive. When ``reranked`` is False (the reranker had no
    opinion) the scores are fusion scores, not probabilities, so nothing is dropped.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.score_floor import RelativeScoreFloor

    reranked = [Document(content=str(s), score=s) for s in (0.9, 0.5, 0.3, 0.01, 0.001)]
    kept = RelativeScoreFloor(ratio=0.02, min_keep=3).run(documents=reranked)["documents"]
    assert [d.score for d in kept] == [0.9, 0.5, 0.3]  # 0.01 < 2 % of 0.9
    ```
    """

    def __init__(self, *, ratio: float = 0.02, min_keep: int = 3) -> None:
        """
        :param ratio: fraction of the best score below which a candidate is dropped.
        :param min_keep: the number of top candidates always kept.
        """
        self.ratio = ratio
        self.min_keep = min_keep

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], reranked: bool = True) -> dict[str, Any]:
        """Apply the floor to documents sorted best first."""
        if not reranked or not documents:
            return {"documents": list(documents)}
        best = max((d.score or 0.0) for d in documents)
        floor = best * self.ratio
        kept = [d for i, d in enumerate(documents) if i < self.min_keep or (d.score or 0.0) >= floor]
        return {"documents": kept}
