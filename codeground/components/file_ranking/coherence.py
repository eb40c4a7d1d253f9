"""A file with several strong records lifts its best one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component

from codeground.components.file_ranking.named_definition import (
    is_symbol_query,
    names_code_in_a_sentence,
    symbol_names,
)


@component
class FileCoherence:
    """Add ``boost × best score × (the file's summed score / the top file's)`` to each file's best record.

    Rule: a question about a part of the code meets several records of the file that implements it;
    the summed evidence of a file says more than any one record's, so the file's best record is
    lifted in proportion to its file's total (the file with the most evidence by ``boost`` × the
    best score, others by their share). Only one record per file moves: the list does not fill with
    one file's records. A sentence naming code asks for a record, not a file: nothing moves
    (``names_code_in_a_sentence``). A question that is one identifier counts as evidence only the
    records that write it (the file that uses the name most, not the file with most records near
    it). Order: by the new scores, ties as they came; the documents are copies.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.file_ranking.coherence import FileCoherence

    docs = [Document(id="x", content="x", score=0.50, meta={"file_path": "one.py"}),
            Document(id="a", content="a", score=0.45, meta={"file_path": "many.py"}),
            Document(id="b", content="b", score=0.40, meta={"file_path": "many.py"})]
    out = FileCoherence(boost=0.4).run(documents=docs)["documents"]  # a: 0.45 + 0.2; x: 0.5 + 0.118
    assert [d.id for d in out] == ["a", "x", "b"]
    ```
    """

    def __init__(self, *, boost: float = 0.2) -> None:
        """
        :param boost: the share of the best score the file with the most summed evidence adds.
        """
        self.boost = boost

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], query: str = "") -> dict[str, Any]:
        """The documents re-scored by the rule, best first."""
        if not documents or names_code_in_a_sentence(query):
            return {"documents": list(documents)}
        best = max(d.score or 0.0 for d in documents)
        name = symbol_names(query)[1] if is_symbol_query(query) else None
        totals: dict[str, float] = {}
        leader: dict[str, int] = {}
        for i, doc in enumerate(documents):
            path = doc.meta.get("file_path", "")
            if name is not None and name not in (doc.content or ""):
                continue
            totals[path] = totals.get(path, 0.0) + (doc.score or 0.0)
            if path not in leader or (doc.score or 0.0) > (documents[leader[path]].score or 0.0):
                leader[path] = i
        if not totals:
            return {"documents": list(documents)}
        top = max(totals.values()) or 1.0
        lifted = {i: self.boost * best * totals[path] / top for path, i in leader.items()}
        out = [replace(d, score=(d.score or 0.0) + lifted.get(i, 0.0)) for i, d in enumerate(documents)]
        order = sorted(range(len(out)), key=lambda i: (-(out[i].score or 0.0), i))
        return {"documents": [out[i] for i in order]}
