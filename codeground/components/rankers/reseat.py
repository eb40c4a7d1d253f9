"""Put back symbol hits the fused or reranked list ranks too low or dropped."""

from __future__ import annotations

from typing import Any

from haystack import Document, component


@component
class SymbolReseater:
    """Seat up to ``max_reseat`` symbol hits the list ranks too low: at ``seat``, or in its lowest places.

    Rules (the list never grows, no id appears twice, hits keep the order symbol lookup found them):
    - ``seat`` set (``query.yaml``: 4): a record of a symbol the question names that is not among the
      first ``seat - 1`` entries (ranked lower, or not in the list at all) moves up to place ``seat``,
      pushing the entries from there down by one; several such hits take places ``seat``,
      ``seat + 1``, … The first ``seat - 1`` entries, fusion's or the reranker's best, keep their
      places. On a list shorter than ``seat`` the hits take its last places.
    - ``seat`` unset: only a hit missing from the list comes back, overwriting the lowest entry that is
      not itself a symbol hit; a hit in the list keeps its place.
    docs/measurements/retrieval.md ("Symbol hits at the fourth place") has the figures behind the
    default.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.reseat import SymbolReseater

    final = [Document(id=i, content=i, score=s) for i, s in (("a", 0.9), ("b", 0.5), ("c", 0.4))]
    named = [Document(id="s", content="s")]  # the record of the symbol the question named
    out = SymbolReseater(max_reseat=2).run(documents=final, symbol_documents=named)["documents"]
    assert [d.id for d in out] == ["a", "b", "s"]  # the lowest place
    out = SymbolReseater(seat=2).run(documents=final, symbol_documents=named)["documents"]
    assert [d.id for d in out] == ["a", "s", "b"]  # the second place, the rest pushed down
    ```
    """

    def __init__(self, *, max_reseat: int = 2, top_k: int | None = None, seat: int | None = None) -> None:
        """
        :param max_reseat: the most symbol hits moved or put back.
        :param top_k: the result's length: the list is cut to it before re-seating (``None``: keep its
            length). A run may pass its own ``top_k`` (a search asking for 10 sources).
        :param seat: the place (1-based) a symbol hit ranked lower moves up to; ``None``: missing hits
            take the lowest places.
        """
        if seat is not None and seat < 1:
            raise ValueError(f"seat must be 1 or more, got {seat}")
        self.max_reseat = max_reseat
        self.top_k = top_k
        self.seat = seat

    @component.output_types(documents=list[Document])
    def run(
        self,
        documents: list[Document],
        symbol_documents: list[Document] | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """The list cut to ``top_k`` (the run's value first), with the symbol hits seated by the rule."""
        limit = top_k if top_k is not None else self.top_k
        result = list(documents[:limit] if limit is not None else documents)
        hits = list(symbol_documents or [])
        if self.seat is not None:
            return {"documents": self._seated(result, hits)}
        symbol_ids = {d.id for d in hits}
        present = {d.id for d in result}
        missing = [d for d in hits if d.id not in present][: self.max_reseat]
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

    def _seated(self, result: list[Document], hits: list[Document]) -> list[Document]:
        size = len(result)
        seen: set[str] = set()
        unique = [h for h in hits if not (h.id in seen or seen.add(h.id))]
        head_size = min(self.seat - 1, size)
        while True:  # a list too short for head + hits gives up the head's lowest places
            head = result[:head_size]
            kept = {d.id for d in head}
            moved = [h for h in unique if h.id not in kept][: self.max_reseat]
            if head_size + len(moved) <= size or head_size == 0:
                break
            head_size = size - len(moved)
        # a hit already in the list moves as the list holds it (its fused or reranked score with it)
        listed = {d.id: d for d in result[head_size:]}
        moved = [listed.get(h.id, h) for h in moved]
        moved_ids = {h.id for h in moved}
        rest = [d for d in result[head_size:] if d.id not in moved_ids]
        return (head + moved + rest)[:size]
