"""The text lexical retrieval scores for a record: its provenance header, then its content.

Rule: the header (``meta["header"]``: file path, symbol, record type) comes first, written
``header_weight`` times, then the content. A definition's path and name say what it is; a word in its
body may only use it. With a weight of 2 the header's words count twice in BM25's term frequencies
(and in the record's length), which on the dev and language sets moved the record that *is* the
named thing above records that mention it (docs/measurements/retrieval.md: R@1 over 167 questions +3 on
the *tune* half, +1 on *check*, R@5 unchanged; 3 was lower on both). Every lexical scorer reads this
function: the BM25 store and the sparse vectors of the Qdrant pair.

Usage:
```python
from haystack import Document
from codeground.components.lexical_text import checked_header_weight, lexical_text

doc = Document(content="return x", meta={"header": "File: a.py | Symbol: load"})
assert lexical_text(doc) == "File: a.py | Symbol: load\\nreturn x"
assert lexical_text(doc, header_weight=2).count("Symbol: load") == 2
assert lexical_text(Document(content="text only")) == "text only"
assert checked_header_weight(2) == 2
```
"""

from __future__ import annotations

from haystack import Document


def checked_header_weight(header_weight: object) -> int:
    """``header_weight`` when it is a whole number >= 1 (a scorer checks it once, when built)."""
    if isinstance(header_weight, bool) or not isinstance(header_weight, int) or header_weight < 1:
        raise ValueError(f"header_weight must be a whole number >= 1, got {header_weight!r}")
    return header_weight


def lexical_text(document: Document, *, header_field: str = "header", header_weight: int = 1) -> str:
    """``document``'s header ``header_weight`` times (``checked_header_weight``), then its content,
    one per line."""
    header = (document.meta or {}).get(header_field) or ""
    content = document.content or ""
    return "\n".join([header] * header_weight + [content]) if header else content
