"""Repair, then mark: an answer naming what the repository lacks is asked for once more.

Rule: when the grounding check finds identifiers in a finished answer that the repository does not
have, the same question (as searched, so a follow-up is not rewritten twice) goes through the
pipeline once more with those names passed to the prompt as ``not_in_repository`` (the shipped
template then tells the model they do not exist in this repository material and shows the same
excerpts). At most one retry. The retry must finish within what is left of ``budget_s`` (counted
from the question): otherwise the first answer stands, marked as before, with a ``repair_skipped``
notice. The second answer is not streamed while it is written: it reaches the client once checked.
A second answer that still names what the repository lacks is not the answer (a model that insists
has invented it twice): the user gets ``withheld_text`` (the refusal, with the closest sources) and
the invented answer only apart, behind a disclosure that says so (``QueryResult.withheld``; a
``withheld`` notice); the grounding check itself is not changed. A query YAML turns it off with
``metadata.repair.enabled: false`` (or sets ``budget_s``); a caller with ``repair=False``
(``--no-repair``). A template without a ``not_in_repository`` variable cannot be told the names, so
no repair is attempted with it.

The question's premise (``QuestionPremise``) adds names of its own: what the question names that
the repository lacks although the model was asked anyway (a proper noun it never mentions, such as
``PostgreSQL``; a name the user pasted that it does not have). The model was told so in the prompt;
an answer that still uses such a name (whole word, case ignored) and does not say the material
does not answer (``codeground.components.grounding.refusal``) is asked again the same way, with
those names among the ones listed as absent.

Usage:
```python
from codeground.app.query.repair import RepairSettings

settings = RepairSettings.of({"metadata": {"repair": {"budget_s": 30}}})
assert settings.enabled and settings.budget_s == 30.0
assert not RepairSettings.of({"metadata": {"repair": {"enabled": False}}}).enabled

from codeground.app.query.repair import premise_names_used

report = {"proper_absent": ["PostgreSQL"], "pasted_absent": []}
assert premise_names_used("vLLM logs to PostgreSQL on port 5432.", report) == ["PostgreSQL"]
assert premise_names_used("This repository material does not mention PostgreSQL.", report) == []
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.components.grounding.refusal import is_refusal

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


def premise_names_used(answer: str | None, premise: dict[str, Any] | None) -> list[str]:
    """The names the premise found absent (and only told the model about) that ``answer`` uses,
    unless the answer is a refusal (module docstring)."""
    if not answer or not premise or is_refusal(answer):
        return []
    told = dict.fromkeys([*premise.get("pasted_absent", []), *premise.get("proper_absent", [])])
    return [n for n in told if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", answer, re.IGNORECASE)]


def repaired_text(names: list[str]) -> str:
    """The notice of a repaired answer."""
    return f"answered again: the first answer named {', '.join(names)}, which this repository does not have"


def skipped_text(names: list[str], why: str) -> str:
    """The notice of a repair that did not happen or did not finish."""
    return f"asking again without {', '.join(names)} failed ({why}); the first answer is shown, marked"


def withheld_text(names: list[str]) -> str:
    """The answer in place of a repaired answer that still names what the repository lacks."""
    return (
        f"This repository material does not answer the question: asked twice, the model named "
        f"{', '.join(names)}, which this repository does not have. The closest sources are below."
    )


def withheld_notice(names: list[str]) -> str:
    """The notice of an answer withheld (shown apart, never as the answer)."""
    return f"the answer asked for again still named {', '.join(names)}: withheld, shown apart"


def marker(names: list[str]) -> str:
    """The line a client that cannot take back streamed text prints before the corrected answer."""
    named = ", ".join(names)
    return f"\n\n--- corrected answer (the one above named {named}, which this repository lacks) ---\n"
