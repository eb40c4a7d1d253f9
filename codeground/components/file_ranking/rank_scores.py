"""Scores from the order: one scale for the file-level rules that follow."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component


@component
class RankScores:
    """Give each document the score ``1 / (k + rank)`` of its place in the incoming order, then the
    candidates of ``rest`` and of ``extra`` it does not hold, in their order.

    Rule: the list this stage receives is ordered by whatever ranked it last — fused RRF scores, a
    cross-encoder's probabilities, symbol hits re-seated with no score of their own — so its scores
    are of mixed kinds. The file-level priors after it add a share of the best score, which only
    means the same thing on one scale: the order's. ``k`` (60, as RRF's usual constant) keeps the
    scale flat, so a prior worth the best score can lift a record from deep in the list. A
    reranked list holds only what the reranker judged and kept; the candidates it did not judge
    (``rest``: the fused pool) follow it, then candidates found by other means (``extra``: files the
    question names by their words), so a file-level rule can still bring one of them up. The
    order is otherwise unchanged; the documents are copies.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.file_ranking.rank_scores import RankScores

    docs = [Document(id="a", content="a", score=0.9), Document(id="b", content="b")]
    pool = [Document(id="c", content="c"), Document(id="a", content="a")]
    out = RankScores(k=60).run(documents=docs, rest=pool)["documents"]
    assert [d.id for d in out] == ["a", "b", "c"] and out[1].score == 1 / 62
    ```
    """

    def __init__(self, *, k: int = 60) -> None:
        """
        :param k: the constant of ``1 / (k + rank)`` (ranks start at 1).
        """
        if k < 0:
            raise ValueError(f"k must be 0 or more, got {k}")
        self.k = k

    @component.output_types(documents=list[Document])
    def run(
        self,
        documents: list[Document],
        rest: list[Document] | None = None,
        extra: list[Document] | None = None,
    ) -> dict[str, Any]:
        """The documents in their order, then ``rest``'s and ``extra``'s others, scored by their rank."""
        ranked = list(documents)
        held = {d.id for d in documents}
        for doc in [*(rest or ()), *(extra or ())]:
            if doc.id not in held:
                held.add(doc.id)
                ranked.append(doc)
        return {"documents": [replace(d, score=1.0 / (self.k + r)) for r, d in enumerate(ranked, 1)]}
