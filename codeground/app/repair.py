"""Repair, then mark: an answer naming what the repository lacks is asked for once more.

Rule: when the grounding check finds identifiers in a finished answer that the repository does not
have, the same question (as searched, so a follow-up is not rewritten twice) goes through the
pipeline once more with those names passed to the prompt as ``not_in_repository`` (the shipped
template then tells the model they do not exist in this repository material and shows the same
excerpts). At most one retry. The retry must finish within what is left of ``budget_s`` (counted
from the question): otherwise the first answer stands, marked as before, with a ``repair_skipped``
notice. Whatever the second answer still names that the repository lacks is marked as usual; the
grounding check itself is not changed. A query YAML turns it off with ``metadata.repair.enabled:
false`` (or sets ``budget_s``); a caller with ``repair=False`` (``--no-repair``). A template without
a ``not_in_repository`` variable cannot be told the names, so no repair is attempted with it.

Usage:
```python
from codeground.app.repair import RepairSettings

settings = RepairSettings.of({"metadata": {"repair": {"budget_s": 30}}})
assert settings.enabled and settings.budget_s == 30.0
assert not RepairSettings.of({"metadata": {"repair": {"enabled": False}}}).enabled
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codeground.app.errors import CodegroundError

DEFAULT_BUDGET_S = 60.0
PROMPT_VARIABLE = "not_in_repository"


@dataclass(frozen=True)
class RepairSettings:
    enabled: bool = True
    budget_s: float = DEFAULT_BUDGET_S

    @classmethod
    def of(cls, data: dict[str, Any]) -> RepairSettings:
        """The settings a pipeline dict's ``metadata.repair`` gives (defaults: on, 60 s)."""
        raw = ((data.get("metadata") or {}).get("repair")) or {}
        if not isinstance(raw, dict):
            raise CodegroundError("metadata.repair must be a mapping (enabled, budget_s)")
        enabled, budget = raw.get("enabled", True), raw.get("budget_s", DEFAULT_BUDGET_S)
        if not isinstance(enabled, bool) or not isinstance(budget, int | float) or budget <= 0:
            raise CodegroundError(
                "metadata.repair: enabled must be true/false and budget_s a positive number"
            )
        return cls(enabled=enabled, budget_s=float(budget))


def repaired_text(names: list[str]) -> str:
    """The notice of a repaired answer."""
    return f"answered again: the first answer named {', '.join(names)}, which this repository does not have"


def skipped_text(names: list[str], why: str) -> str:
    """The notice of a repair that did not happen or did not finish."""
    return f"asking again without {', '.join(names)} failed ({why}); the first answer is shown, marked"


def marker(names: list[str]) -> str:
    """The line a client that cannot take back streamed text prints before the corrected answer."""
    named = ", ".join(names)
    return f"\n\n--- corrected answer (the one above named {named}, which this repository lacks) ---\n"
