"""Notices are data: a kind that programs read, and the one line a person reads.

Rule: every notice our components output is a ``Notice``: a ``str`` (its text, so it prints,
compares and serializes as the text) with a ``kind`` from ``KINDS``. The CLI, the chat and the
evaluation decide by the kind, never by the wording; a plain string from someone else's component
has no kind (``kind_of`` says ``None``).

Usage:
```python
import copy
from codeground.components.notices import RERANK_UNAVAILABLE, Notice, kind_of

notice = Notice(RERANK_UNAVAILABLE, "reranking unavailable: model not downloaded; kept the fused order")
assert notice.startswith("reranking unavailable") and kind_of(copy.deepcopy(notice)) == RERANK_UNAVAILABLE
assert kind_of("a plain string") is None
```
"""

from __future__ import annotations

from typing import Any

REWRITTEN = "rewritten"  # the follow-up question was searched as rewritten
SEARCHED_AS_TYPED = "searched_as_typed"  # the rewrite failed: the question was searched as typed
RERANK_UNAVAILABLE = "rerank_unavailable"  # the reranker had no opinion: the fused order was kept
LLM_FAILED = "llm_failed"  # the LLM gave no answer (unreachable, model missing, timeout, ...)
NOTHING_FOUND = "nothing_found"  # no source matched: the model was not asked
UNKNOWN_IDENTIFIERS = "unknown_identifiers"  # the answer names what the repository does not have
REPAIRED = "repaired"  # the model was asked once more without the names the repository lacks
REPAIR_SKIPPED = "repair_skipped"  # that second call did not happen or did not finish in its budget
NO_ANSWER = "no_answer"  # the retrieved material does not look like it answers: the model was not asked
WITHHELD = "withheld"  # the answer asked for again still named what the repository lacks: not the answer

KINDS = (
    REWRITTEN,
    SEARCHED_AS_TYPED,
    RERANK_UNAVAILABLE,
    LLM_FAILED,
    NOTHING_FOUND,
    UNKNOWN_IDENTIFIERS,
    REPAIRED,
    REPAIR_SKIPPED,
    NO_ANSWER,
    WITHHELD,
)
# what the user should read the notice as
SEARCHED = frozenset({REWRITTEN, SEARCHED_AS_TYPED})
DEGRADED = frozenset(
    {
        SEARCHED_AS_TYPED,
        RERANK_UNAVAILABLE,
        LLM_FAILED,
        NOTHING_FOUND,
        UNKNOWN_IDENTIFIERS,
        REPAIRED,  # the first answer invented names: worth a look even though it was answered again
        REPAIR_SKIPPED,
        NO_ANSWER,
        WITHHELD,
    }
)


class Notice(str):
    """A notice's text with its ``kind``."""

    kind: str

    def __new__(cls, kind: str, text: str) -> Notice:
        if kind not in KINDS:
            raise ValueError(f"unknown notice kind {kind!r} (known: {', '.join(KINDS)})")
        notice = super().__new__(cls, text)
        notice.kind = kind
        return notice

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles keep the kind
        return (Notice, (self.kind, str(self)))

    def __repr__(self) -> str:
        return f"Notice({self.kind!r}, {str(self)!r})"


def kind_of(notice: Any) -> str | None:
    """The kind of a notice, or ``None`` for a plain string."""
    return getattr(notice, "kind", None)
