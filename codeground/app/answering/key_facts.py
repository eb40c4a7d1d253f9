"""Whether an answer carries a reference answer's key facts: the correctness figure of answer benches.

Rule: a reference answer's key facts are what a reader would check an answer against, each written
as the reference writes it:

- a code span in backticks of at most ``SPAN_CHARS`` characters (``mk.FusedMoEActivationFormat``,
  ``(True, False)``); a longer span (a whole command) gives its flags and code names instead;
- outside backticks, code names (a dotted path, a ``snake_case``, ``UPPER_CASE`` or inner-capital
  ``CamelCase`` name: ``float8_info.min``, ``FP8_MIN``, ``NIXLConnector``), command-line flags
  (``--max-model-len``), quoted values (``'auto'``) and numbers that are not part of a name (``250``,
  ``0.9``).

A fact the question already writes (``vLLM`` in "… in vLLM?") is not one: repeating the question
proves nothing. An answer *has* a fact when it contains it verbatim, whitespace runs counted as one
space (numbers and names are case-sensitive: ``fp8_min`` is not ``FP8_MIN``). An answer is
*correct* when it has every key fact; a reference with none (prose only) is left out of the figure,
not counted correct.
The rule reads text only (no model), so one configuration's figure compares with another's.

Usage:
```python
from codeground.app.answering.key_facts import has_facts, key_facts

ref = "FP8_MIN defaults to float8_info.min; pass `--kv-cache-dtype fp8` and 250 steps."
assert key_facts(ref) == ["--kv-cache-dtype fp8", "FP8_MIN", "float8_info.min", "250"]
assert key_facts(ref, question="What is FP8_MIN?") == ["--kv-cache-dtype fp8", "float8_info.min", "250"]
assert has_facts("Set `--kv-cache-dtype  fp8`; FP8_MIN is float8_info.min, 250.", key_facts(ref))
```
"""

from __future__ import annotations

import re

SPAN_CHARS = 60
_SPAN = re.compile(r"`([^`\n]+)`")
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_QUOTED = re.compile(r"""(?<!\w)(['"])([^'"\n]{1,40})\1""")
_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
_SNAKE = r"[A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]"
_CAMEL = r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z][A-Za-z0-9]*"
_NAME = re.compile(rf"(?<![\w.])(?:{_DOTTED}|{_SNAKE}|{_CAMEL})(?![\w])")
_NUMBER = re.compile(r"(?<![\w./-])\d+(?:\.\d+)?(?![\w.]*[A-Za-z_])")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _plain_facts(text: str) -> list[str]:
    """Flags, quoted values, code names and numbers of text outside backticks, in that order."""
    facts = [m.group(0) for m in _FLAG.finditer(text)]
    facts += [m.group(2) for m in _QUOTED.finditer(text)]
    bare = _QUOTED.sub(" ", _FLAG.sub(" ", text))
    facts += [m.group(0).rstrip(".") for m in _NAME.finditer(bare)]
    facts += [m.group(0) for m in _NUMBER.finditer(_NAME.sub(" ", bare))]
    return facts


def key_facts(reference: str, question: str = "") -> list[str]:
    """The key facts of ``reference`` that ``question`` does not write, each once, in the order the
    rule reads them."""
    facts: list[str] = []
    for m in _SPAN.finditer(reference):
        span = _squash(m.group(1))
        facts += [span] if len(span) <= SPAN_CHARS else _plain_facts(span)
    facts += _plain_facts(_SPAN.sub(" ", reference))
    asked = _squash(question)
    return list(dict.fromkeys(f for f in facts if f.strip() and _squash(f) not in asked))


def facts_found(answer: str, facts: list[str]) -> list[str]:
    """The facts ``answer`` contains (verbatim, whitespace runs as one space)."""
    text = _squash(answer)
    return [f for f in facts if _squash(f) in text]


def has_facts(answer: str, facts: list[str]) -> bool:
    """Whether ``answer`` has every fact of ``facts`` (False for no facts: nothing to check)."""
    return bool(facts) and len(facts_found(answer, facts)) == len(facts)
