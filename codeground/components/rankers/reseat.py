"""Put back symbol hits the reranker demoted out of the result."""

from __future__ import annotations

from typing import Any

from haystack import Document, component


@component
class SymbolReseater:
    """Re-seat up to ``max_reseat`` demoted symbol hits by overwriting the lowest non-symbol entries.

    Rule: when the user named a symbol and its record is no longer in the final list
    (the reranker demoted it or the score floor dropped it), it takes the place of the
    lowest-ranked entry that is not itself a symbol hit. The list never grows, no id appears twice,
    and at most ``max_reseat`` hits come back (in the order symbol lookup found them).

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.reseat import SymbolReseater

    final = [Document(id=i, content=i, score=s) for i, s in (("a", 0.9), ("b", 0.5))]
    named = [Document(id="s", content="s")]  # the record of the symbol the question named
    out = SymbolReseater(max_reseat=2).run(documents=final, symbol_documents=named)["documents"]
    assert "s" in [d.id for d in out]
    ```
    """

    def __init__(self, *, max_reseat: int = 2, top_k: int | None = None) -> None:
        """
        :param max_reseat: the most symbol hits put back.
        :param top_k: the result's length: the list is cut to it before re-seating (``None``: keep its
            length). A run may pass its own ``top_k`` (a search asking for 10 sources).
        """
        self.max_reseat = max_reseat
        self.top_k = top_k

    @component.output_types(documents=list[Document])
    def run(
        self,
        documents: list[Document],
        symbol_documents: list[Document] | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """The final list, cut to ``top_k`` (the run's value first), with demoted symbol hits put back."""
        limit = top_k if top_k is not None else self.top_k
        result = list(documents[:limit] if limit is not None else documents)
        symbol_ids = {d.id for d in symbol_documents or []}
        present = {d.id for d in result}
        missing = [d for d in symbol_documents or [] if d.id not in present][: self.max_reseat]
        slots: list[int] = []
        for i in range(len(result) - 1, -1, -1):
            if len(slots) == len(missing):
                break
            if result[i].id not in symbol_ids:
                slots.append(i)
        # the first hit found takes the highest of the freed seats
        for hit, slot in zip(missing, sorted(slots), strict=False):
            result[slot] = hit
        return {"documents": result}
