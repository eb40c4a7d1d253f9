"""Whether an answer says the repository material does not answer the question.

Rule: an answer is a refusal when it uses one of the phrases the shipped prompts ask the model to
use for that ("this repository material does not answer it") or a close variant ("does not cover",
"is not documented", "no information", "cannot find", "the sources do not …"), case ignored. One
rule for every caller: ``codeground eval-answers`` counts refusals with it, and the repair
(``codeground.app.query.repair``) does not ask again about a name the answer only says is missing.

Usage:
```python
from codeground.components.grounding.refusal import is_refusal

assert is_refusal("This repository material does not answer the question.")
assert not is_refusal("Call `Trainer.fit(data)`.")
```
"""

from __future__ import annotations

import re

REFUSAL_PHRASES = re.compile(
    r"has nothing on|does(?: not|n't) (?:answer|cover|say|mention|contain|describe)|"
    r"(?:is|are) not (?:covered|mentioned|described|documented)|no (?:information|mention)|"
    r"cannot (?:answer|find)|can't (?:answer|find)|not (?:able|possible) to answer|"
    r"(?:material|repository|sources?) (?:provided )?(?:do(?:es)?n't|do(?:es)? not)",
    re.IGNORECASE,
)


def is_refusal(answer: str | None) -> bool:
    """An answer that says the repository does not answer the question (``REFUSAL_PHRASES``)."""
    return bool(REFUSAL_PHRASES.search(answer or ""))
