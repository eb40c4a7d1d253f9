"""Fenced code blocks in Markdown, found one way everywhere (the docs chunker, the grounding check,
the chat's marking of unknown names).

Rule (CommonMark's fences, read line by line):
- a fence opens with three or more backticks or tildes; a backtick fence's info string may not
  contain a backtick (so ````` ``x`` ````` prose and ```` ```inline``` ```` are not fences);
- it closes at a line holding only the same character, at least as many times (spaces around
  allowed), or runs to the end of the text;
- the info string's first word is the language (lowercased).
Indentation is allowed before either (CommonMark allows three spaces outside containers; a fence in
a list item is indented further, and a line reader does not track containers).

Usage:
```python
from codeground.components.markdown import opening_fence

ticks = "`" * 3
fence = opening_fence(f"  {ticks}Python title=x")
assert fence.language == "python" and fence.closed_by(f"  {ticks}`") and not fence.closed_by(f"{ticks} x")
assert opening_fence(f"{ticks}inline{ticks} code") is None and opening_fence("~~~") is not None
```
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Fence:
    """An opening fence: its indentation, its marker (```` ``` ```` or ``~~~``, with its length) and
    its info string."""

    indent: str
    marker: str
    info: str

    @property
    def language(self) -> str:
        """The info string's first word, lowercased (``""`` when there is none)."""
        words = self.info.split()
        return words[0].lower() if words else ""

    def closed_by(self, line: str) -> bool:
        """Whether ``line`` closes this fence."""
        stripped = line.strip()
        return len(stripped) >= len(self.marker) and set(stripped) == {self.marker[0]}


def opening_fence(line: str) -> Fence | None:
    """The fence ``line`` opens, or ``None``."""
    match = _OPEN.match(line.rstrip("\r\n"))
    if match is None:
        return None
    indent, marker, info = match.groups()
    if marker[0] == "`" and "`" in info:
        return None
    return Fence(indent, marker, info.strip())


@dataclass(frozen=True)
class Block:
    """A run of lines: outside any fence (``fence`` is None) or one fenced block, where ``lines`` are
    the opening line, the body and the closing line when there is one (``body`` is the body alone)."""

    fence: Fence | None
    lines: list[str]
    body: list[str]


def blocks(lines: list[str]) -> Iterator[Block]:
    """``lines`` (with their line ends) cut into text runs and fenced blocks, in order; an unclosed
    fence runs to the end."""
    text: list[str] = []
    i = 0
    while i < len(lines):
        fence = opening_fence(lines[i])
        if fence is None:
            text.append(lines[i])
            i += 1
            continue
        if text:
            yield Block(None, text, text)
            text = []
        j = i + 1
        while j < len(lines) and not fence.closed_by(lines[j]):
            j += 1
        yield Block(fence, lines[i : j + 1], lines[i + 1 : j])
        i = j + 1
    if text:
        yield Block(None, text, text)
