"""Symbol hits join the fused list after fusion, never displacing a fused result."""

from __future__ import annotations

from typing import Any

from haystack import Document, component


@component
class SymbolHitMerger:
    """Append exact-symbol hits after the fused candidates, deduplicated by id.

    Rule: symbol hits are added *after* reciprocal rank fusion so they never push a
    fused result out of the pool before reranking; a hit already in the pool is not added twice.
    The symbol hits are also passed on unchanged (``symbol_documents``) for re-seating.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.joiners.symbol_merge import SymbolHitMerger

    fused = [Document(id="a", content="a", score=0.9), Document(id="b", content="b", score=0.5)]
    named = [Document(id="b", content="b"), Document(id="s", content="s")]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=named)
    assert [d.id for d in out["documents"]] == ["a", "b", "s"]  # fused + new symbol hits
    ```
    """

    def __init__(self) -> None:
        pass

    @component.output_types(documents=list[Document], symbol_documents=list[Document])
    def run(
        self, documents: list[Document], symbol_documents: list[Document] | None = None
    ) -> dict[str, Any]:
        """``documents`` followed by the symbol hits not already among them."""
        symbol_documents = list(symbol_documents or [])
        seen = {d.id for d in documents}
        merged = list(documents)
        for doc in symbol_documents:
            if doc.id not in seen:
                seen.add(doc.id)
                merged.append(doc)
        return {"documents": merged, "symbol_documents": symbol_documents}
