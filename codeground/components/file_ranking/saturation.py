"""Each further record of one file counts for less in the final list."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component

from codeground.components.file_ranking.named_definition import names_code_in_a_sentence


@component
class FileSaturation:
    """The final ``top_k``, each record's score × ``decay`` per record of its file already chosen.

    Rule: a reader looking for where something lives wants files; ten records of one file leave
    nine places without news. Records are taken best first, and the second record of a file counts
    ``decay`` of its score, the third ``decay²``…, so another file's record of nearly the same score
    goes before it, while a file far ahead of the rest still shows several records. Documentation
    sections are not decayed: a page holds many topics, each section an answer of its own. Nor is
    anything when the question is a sentence naming code (``names_code_in_a_sentence``): it asks for
    that code's record, which may well be the second of its file. ``top_k`` may
    be given per run (a search asking for 10 sources). The documents are copies, scored as ranked.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.file_ranking.saturation import FileSaturation

    docs = [Document(id=i, content=i, score=s, meta={"file_path": p})
            for i, s, p in (("a1", 0.9, "a.py"), ("a2", 0.8, "a.py"), ("b1", 0.5, "b.py"))]
    out = FileSaturation(decay=0.5, top_k=3).run(documents=docs)["documents"]
    assert [d.id for d in out] == ["a1", "b1", "a2"]  # a2 counts 0.4
    ```
    """

    def __init__(self, *, decay: float = 0.5, top_k: int | None = None) -> None:
        """
        :param decay: the factor per record of the same file already in the list (0 < decay <= 1).
        :param top_k: how many records to return (``None``: all).
        """
        if not 0 < decay <= 1:
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        self.decay = decay
        self.top_k = top_k

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], query: str = "", top_k: int | None = None) -> dict[str, Any]:
        """The list by effective score, cut to ``top_k`` (the run's value first)."""
        limit = top_k if top_k is not None else self.top_k
        decay = 1.0 if names_code_in_a_sentence(query) else self.decay
        order = sorted(range(len(documents)), key=lambda i: (-(documents[i].score or 0.0), i))
        seen: dict[str, int] = {}
        scored = []
        place = {i: n for n, i in enumerate(order)}
        for i in order:
            path = documents[i].meta.get("file_path", "")
            if documents[i].meta.get("source_type") == "docs":
                scored.append((documents[i].score or 0.0, i))  # a page's sections are topics of their own
                continue
            n = seen.get(path, 0)
            seen[path] = n + 1
            scored.append(((documents[i].score or 0.0) * decay**n, i))
        scored.sort(key=lambda t: (-t[0], place[t[1]]))
        chosen = scored if limit is None else scored[:limit]
        return {"documents": [replace(documents[i], score=s) for s, i in chosen]}
