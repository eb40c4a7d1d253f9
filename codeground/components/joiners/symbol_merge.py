"""Symbol hits join the fused list: a symbol the question names goes first, other hits after."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component


@component
class SymbolHitMerger:
    """Put the records of the symbols the question names first; append the other symbol hits.

    Rules:
    - A symbol the question names in full (``named_documents``: ``Trainer.fit``) is the first
      answer: every record of that symbol leads the list, those fusion found in fusion's order, then
      the symbol's first record, ahead of the other fused candidates, with the list's top score where
      their own is lower, so the scores still read best first. Connected in
      ``query_named_first.yaml`` only (docs/measurements/retrieval.md: it costs one dev question at R@1).
    - Other symbol hits (a name several symbols share) are added *after* the fused candidates, so
      they never push a fused result out of the pool; nothing appears twice.
    - The symbol hits are also passed on unchanged (``symbol_documents``) for re-seating.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.joiners.symbol_merge import SymbolHitMerger

    fused = [Document(id="a", content="a", score=0.9), Document(id="b", content="b", score=0.5)]
    named = [Document(id="b", content="b"), Document(id="s", content="s")]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=named)
    assert [d.id for d in out["documents"]] == ["a", "b", "s"]  # fused + new symbol hits
    out = SymbolHitMerger().run(documents=fused, symbol_documents=named, named_documents=[named[1]])
    assert [d.id for d in out["documents"]] == ["s", "a", "b"]  # a named symbol leads
    ```
    """

    def __init__(self) -> None:
        pass

    @component.output_types(documents=list[Document], symbol_documents=list[Document])
    def run(
        self,
        documents: list[Document],
        symbol_documents: list[Document] | None = None,
        named_documents: list[Document] | None = None,
    ) -> dict[str, Any]:
        """The named symbols' records, then ``documents``, then the other symbol hits."""
        symbol_documents = list(symbol_documents or [])
        # every record of a named symbol leads: those fusion found in its order, then the named record
        named = list(named_documents or [])
        symbols = {d.meta.get("symbol") for d in named} - {None}
        leading = [d for d in documents if d.meta.get("symbol") in symbols] + named
        # a leading record ranks with the best: it gets the list's top score if its own is lower
        best = max((d.score for d in documents if d.score is not None), default=None)
        lead: dict[str, Document] = {}
        for doc in leading:
            own = doc.score
            score = best if own is None or (best is not None and own < best) else own
            lead.setdefault(doc.id, replace(doc, score=score))
        seen = set(lead)
        merged = list(lead.values())
        for doc in documents:
            if doc.id not in seen:
                seen.add(doc.id)
                merged.append(doc)
        for doc in symbol_documents:
            if doc.id not in seen:
                seen.add(doc.id)
                merged.append(doc)
        return {"documents": merged, "symbol_documents": symbol_documents}
