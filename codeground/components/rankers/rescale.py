"""Scale some candidates' scores and sort again, as the question-read priors do.

Rule: each candidate's score is multiplied by its factor (a candidate without a score keeps it),
and the list is sorted by the new scores, best first, stably: among equals the incoming order
stays. The documents passed in are not changed (scaled ones are copies). Used by
``AskedDefaultPrior``, ``AskedVersionPrior`` and ``AskedInterfacePrior``.

```python
from haystack import Document
from codeground.components.rankers.rescale import checked_boost, rescaled

docs = [Document(id="a", content="x", score=1.4), Document(id="b", content="y", score=1.2)]
assert [d.id for d in rescaled(docs, [1.0, 1.5])] == ["b", "a"] and docs[1].score == 1.2
assert checked_boost(2.0) == 2.0
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from haystack import Document


def checked_boost(boost: float) -> float:
    """``boost`` if it is positive (a prior's factor); a ``ValueError`` otherwise."""
    if boost <= 0:
        raise ValueError(f"boost must be positive, got {boost}")
    return boost


def rescaled(documents: Sequence[Document], factors: Sequence[float]) -> list[Document]:
    """``documents`` with each score times its factor, sorted again (module rule)."""
    out = [
        doc if factor == 1 or doc.score is None else replace(doc, score=doc.score * factor)
        for doc, factor in zip(documents, factors, strict=True)
    ]
    order = sorted(range(len(out)), key=lambda i: (-(out[i].score or 0.0), i))
    return [out[i] for i in order]
