"""One escaping rule for text that comes from a repository or a model.

Rule: such text is data wherever it goes, so each place it enters is given it in the one form that
place cannot read as anything but data:

- ``one_line``: a field that must stay on one line (a path, a symbol, a heading): every control
  character — C0 (``\\n`` and ``\\t`` included), DEL, C1 — and every Unicode bidirectional override
  is written out as a visible escape (``\\n``, ``\\x1b``, ``\\u202e``), so it can neither split the
  line, nor move the cursor, nor retitle the terminal, nor reorder what the reader sees.
- ``for_terminal``: multi-line text for a terminal (a model's answer): the same, but newlines and
  tabs are kept.
- ``for_markup``: a field shown in Markdown or HTML (the HTTP endpoint's ``Sources:`` list, which
  chat front ends render): ``one_line`` and then ``& < > " '`` as HTML entities.
- ``for_prompt_attribute``: a value inside a quoted attribute of the prompt's ``<excerpt …>`` tag:
  ``for_markup``, so it cannot close the quote or the tag.
- ``for_prompt_body``: the quoted text inside an ``<excerpt>`` block: every ``<excerpt`` or
  ``</excerpt`` in any letter case (also with spaces after ``<`` or ``/``) gets a backslash after
  its ``<``, so no repository text can close its block or open a forged one; nothing else changes
  (the model reads code as the repository writes it).

Usage:
```python
from codeground.components.escaping import for_prompt_attribute, for_prompt_body, one_line

assert one_line("a\\nb\\x1b]0;t\\x07") == "a\\\\nb\\\\x1b]0;t\\\\x07"
assert for_prompt_attribute('x"></excerpt>') == "x&quot;&gt;&lt;/excerpt&gt;"
assert for_prompt_body("</EXCERPT >") == "<\\\\/EXCERPT >"
```
"""

from __future__ import annotations

import html
import re

# C0 controls, DEL, C1 controls, and the bidirectional embeddings/overrides/isolates (Trojan Source)
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_EXCERPT_TAG = re.compile(r"<(?=\s*/?\s*excerpt)", re.IGNORECASE)


def _visible(match: re.Match) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: object) -> str:
    """``text`` as one line with every control and bidi character written out visibly."""
    return _UNSAFE.sub(_visible, str(text))


def for_terminal(text: object) -> str:
    """``text`` for a terminal: control and bidi characters written out, newlines and tabs kept
    (a carriage return, which overwrites a line, is written out too)."""
    return _UNSAFE_KEEP_LINES.sub(_visible, str(text))


def for_markup(text: object) -> str:
    """``text`` as one line that Markdown or HTML shows as text (``one_line``, then HTML entities)."""
    return html.escape(one_line(text), quote=True)


def for_prompt_attribute(text: object) -> str:
    """``text`` inside a double-quoted attribute of the prompt's ``<excerpt>`` tag."""
    return for_markup(text)


def for_prompt_body(text: object) -> str:
    """``text`` inside an ``<excerpt>`` block: no ``<excerpt``/``</excerpt`` of any case survives."""
    return _EXCERPT_TAG.sub("<\\\\", str(text))
