"""Split Markdown and reStructuredText pages at their headings.

The rule: one record per section, from a heading line to just before the next heading of *any*
level, so a page's sections are flat and contiguous (they tile the file). The record's ``symbol`` is
the heading path (``LoRA Adapters > Serving LoRA Adapters``) and its content is the exact slice of
the file. Pages that are only Sphinx autodoc directives (``.. automodule::`` and friends) are dropped:
they hold no prose, and the Python chunker indexes the docstrings they would render.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from haystack import Document, component

from codeground.components.markdown import Fence, opening_fence
from codeground.components.records import Source, make_record, source_text

logger = logging.getLogger(__name__)

RST_SUFFIXES = (".rst", ".rest")

# Directives that render API reference or navigation only: a page made of nothing else is dropped.
AUTODOC_DIRECTIVES = frozenset(
    {
        "automodule",
        "autoclass",
        "autofunction",
        "automethod",
        "autoattribute",
        "autoexception",
        "autodata",
        "autoproperty",
        "autodecorator",
        "autosummary",
        "autoprogram",
        "toctree",
        "currentmodule",
        "module",
        "py:module",
        "py:currentmodule",
    }
)

_RST_ADORNMENT_CHARS = "=-~^\"'`#*+:._<>!$%&,/;?@[\\]{|}()"
_RST_ADORNMENT = re.compile(r"^([" + re.escape(_RST_ADORNMENT_CHARS) + r"])\1*$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_NOT_SETEXT_TITLE = re.compile(r"^(?:\s{4}|\s*(?:[-*+](?:\s|$)|\d+[.)](?:\s|$)|[>|<]|`{3}|~{3}))")
_EXPLICIT_MARKUP = re.compile(r"^(\s*)\.\.(?:\s+(.*))?$")
_DIRECTIVE = re.compile(r"^([\w:.-]+)::(?:\s|$)")
_MYST_DIRECTIVE = re.compile(r"^\{([\w:.-]+)\}")
_MKDOCSTRINGS = re.compile(r"^(\s*):::\s+\S")
_MARKDOWN_ANCHOR = re.compile(r"^\s*(?:\(\S+\)=|\[\]\(\)\{[^}]*\})\s*$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class _Heading:
    first_line: int  # index of the first line of the heading (the overline, if any)
    last_line: int  # index of the last line of the heading (the underline, if any)
    level: int
    title: str


def _split_lines(text: str) -> tuple[list[str], list[int]]:
    """Lines without their ``\\n`` (a ``\\r`` stays) and the char offset where each starts."""
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    return lines, offsets


def _front_matter_end(lines: list[str]) -> int:
    """Number of leading lines that are YAML front matter (``---`` … ``---``), 0 if none."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


def _markdown_headings(lines: list[str]) -> list[_Heading]:
    """ATX and setext headings outside fenced code blocks and front matter."""
    headings: list[_Heading] = []
    fence: Fence | None = None
    i = _front_matter_end(lines)
    prev_boundary = i - 1  # index of the last line after which a setext title may start
    n = len(lines)
    while i < n:
        line = lines[i].rstrip()
        if fence is not None:
            if fence.closed_by(line):
                fence = None
                prev_boundary = i
            i += 1
            continue
        fence = opening_fence(line)
        if fence is not None:
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            title = _ATX_CLOSING.sub("", atx.group(2) or "").strip()
            # ``# --8<-- [start:name]`` marks a pymdownx snippet section, not a heading.
            if title and not title.startswith("--8<--"):
                headings.append(_Heading(i, i, len(atx.group(1)), title))
                prev_boundary = i
            i += 1
            continue
        if (
            line.strip()
            and i + 1 < n
            and (prev_boundary == i - 1 or not lines[i - 1].strip())
            and not _NOT_SETEXT_TITLE.match(line)
        ):
            underline = _SETEXT.match(lines[i + 1].rstrip())
            if underline:
                level = 1 if underline.group(1)[0] == "=" else 2
                headings.append(_Heading(i, i + 1, level, line.strip()))
                prev_boundary = i + 1
                i += 2
                continue
        i += 1
    return headings


def _rst_headings(lines: list[str]) -> list[_Heading]:
    """reST section titles: an underline (and optional identical overline) of one punctuation char."""
    headings: list[_Heading] = []
    styles: dict[tuple[str, bool], int] = {}
    n = len(lines)
    i = 0
    after_heading = False
    while i < n:
        line = lines[i].rstrip()
        prev_blank = i == 0 or not lines[i - 1].strip() or after_heading
        after_heading = False
        # Overline + title + underline.
        if (
            prev_blank
            and _RST_ADORNMENT.match(line)
            and i + 2 < n
            and lines[i + 2].rstrip() == line
            and lines[i + 1].strip()
            and not _RST_ADORNMENT.match(lines[i + 1].strip())
            and len(line) >= len(lines[i + 1].strip())
        ):
            style = (line[0], True)
            level = styles.setdefault(style, len(styles) + 1)
            headings.append(_Heading(i, i + 2, level, lines[i + 1].strip()))
            i += 3
            after_heading = True
            continue
        # Title + underline.
        if prev_blank and line and not line[0].isspace() and not _RST_ADORNMENT.match(line) and i + 1 < n:
            underline = lines[i + 1].rstrip()
            if _RST_ADORNMENT.match(underline) and len(underline) >= len(line.strip()):
                style = (underline[0], False)
                level = styles.setdefault(style, len(styles) + 1)
                headings.append(_Heading(i, i + 1, level, line.strip()))
                i += 2
                after_heading = True
                continue
        i += 1
    return headings


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """Index after an explicit-markup block: the following lines that are blank or indented deeper."""
    j = start + 1
    while j < len(lines):
        line = lines[j]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        j += 1
    return j


def _scan_residue(lines: list[str], skip: set[int], markdown: bool) -> tuple[bool, bool]:
    """``(has_prose, has_autodoc)`` of ``lines``, ignoring the indices in ``skip``.

    Ignorable: blank lines, autodoc/toctree directives with their options, reST comments and link
    targets, front matter, MyST ``{automodule}``-style fences and ``{eval-rst}`` fences holding only
    those, mkdocstrings ``::: module`` blocks and bare anchors. Anything else is prose.
    """
    has_autodoc = False
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i].rstrip()
        if i in skip or not line.strip():
            i += 1
            continue
        markup = _EXPLICIT_MARKUP.match(line)
        if markup:
            body = markup.group(2) or ""
            directive = _DIRECTIVE.match(body)
            if directive:
                if directive.group(1).lower() not in AUTODOC_DIRECTIVES:
                    return True, has_autodoc
                has_autodoc = True
            elif body.startswith("|") or body.startswith("["):
                return True, has_autodoc  # substitution definition or footnote: content
            # else: a comment or a hyperlink target, ignorable
            i = _block_end(lines, i, len(markup.group(1)))
            continue
        if markdown:
            fence = opening_fence(line)
            if fence:
                end = i + 1
                while end < n and not fence.closed_by(lines[end]):
                    end += 1
                myst = _MYST_DIRECTIVE.match(fence.info)
                if not myst:
                    return True, has_autodoc
                name = myst.group(1).lower()
                if name == "eval-rst":
                    inner_prose, inner_autodoc = _scan_residue(lines[i + 1 : end], set(), markdown=False)
                    if inner_prose:
                        return True, has_autodoc
                    has_autodoc = has_autodoc or inner_autodoc
                elif name in AUTODOC_DIRECTIVES:
                    has_autodoc = True
                else:
                    return True, has_autodoc
                i = end + 1
                continue
            mkdocstrings = _MKDOCSTRINGS.match(line)
            if mkdocstrings:
                has_autodoc = True
                i = _block_end(lines, i, len(mkdocstrings.group(1)))
                continue
            if _MARKDOWN_ANCHOR.match(line):
                i += 1
                continue
        return True, has_autodoc
    return False, has_autodoc


@component
class DocsChunker:
    """Turns Markdown and reStructuredText pages into one record per heading section.

    - Markdown (``.md``, ``.markdown``, ``.mdx``): ATX ``#`` headings and setext ``===``/``---``
      underlines; lines inside fenced code blocks, YAML front matter and ``# --8<--`` snippet markers
      are not headings. Level = number of ``#`` (setext: ``=`` is 1, ``-`` is 2).
    - reST (``.rst``, ``.rest``): a title with an underline of one repeated punctuation char at least
      as long as the title, optionally with an identical overline; the level of each adornment style
      is its order of first appearance, as in docutils. Any other suffix is read as Markdown.
    - A section runs from its heading to just before the next heading of any level. ``symbol`` is the
      heading path joined by ``" > "``; text before the first heading is a record named after the file
      stem (merged into the first section instead when it is only front matter, comments or targets).
    - A heading with no body is merged into the next section (the record starts at the empty heading,
      its symbol is the next section's path); a body-less last heading joins the previous record.
    - A page whose text, ignoring headings, is only autodoc/toctree directives with their options
      (also MyST ``{automodule}``/``{eval-rst}`` fences and mkdocstrings ``:::`` blocks) yields nothing.
    - Content is the exact slice ``text[start_char:end_char]``; leading blank lines and trailing
      whitespace are left out of the slice. ``source_type`` is ``docs``.
    - A Markdown table longer than ``table_rows_over_chars`` (one excerpt's worth: it would be cut
      into pieces that each hold many rows) also yields one record per row, as questions ask about
      one row: the row's exact line, ``symbol`` its section path and first cell, ``parent`` the
      section record's id, and the table's column names in the provenance header (so BM25 and the
      embedder read them with the row).

    Usage example:
    ```python
    from haystack.dataclasses import ByteStream
    from codeground.components.chunkers.docs import DocsChunker

    page = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\npip install x\\n"
    source = ByteStream(data=page.encode(), meta={"file_path": "docs/guide.md"})
    docs = DocsChunker().run(sources=[source])["documents"]
    print([d.meta["symbol"] for d in docs])  # ['Guide', 'Guide > Install']
    ```
    """

    def __init__(
        self,
        *,
        drop_autodoc_pages: bool = True,
        heading_separator: str = " > ",
        table_rows_over_chars: int | None = None,
    ) -> None:
        """
        Create a DocsChunker.

        :param drop_autodoc_pages: Drop pages that hold nothing but autodoc/toctree directives and headings.
        :param heading_separator: The string joining the titles of a heading path in ``symbol``.
        :param table_rows_over_chars: a Markdown table longer than this also yields a record per row
            (``None``: never).
        """
        self.drop_autodoc_pages = drop_autodoc_pages
        self.heading_separator = heading_separator
        self.table_rows_over_chars = table_rows_over_chars

    @component.output_types(documents=list[Document])
    def run(self, sources: list[Source]) -> dict[str, Any]:
        """
        Split each page at its headings.

        :param sources: Markdown/reST files; ``meta["file_path"]`` is the path relative to the repo root.
        :returns: ``{"documents": [...]}``, one record per non-empty section, in file order.
        """
        documents: list[Document] = []
        for source in sources:
            try:
                file_path, text = source_text(source)
                documents.extend(self._chunk(file_path, text))
            except Exception as error:  # one bad page must not cost the others
                path = (getattr(source, "meta", None) or {}).get("file_path", "<unknown>")
                logger.warning("DocsChunker skipped %s: %s", path, error)
        return {"documents": documents}

    def _chunk(self, file_path: str, text: str) -> list[Document]:
        if not text.strip():
            return []
        lines, offsets = _split_lines(text)
        raw_lines = lines
        if text.startswith("\ufeff"):  # a BOM must not hide a first-line heading; offsets stay raw
            lines = [lines[0][1:], *lines[1:]]
        markdown = not file_path.lower().endswith(RST_SUFFIXES)
        headings = _markdown_headings(lines) if markdown else _rst_headings(lines)

        front_matter = set(range(_front_matter_end(lines))) if markdown else set()
        heading_lines = {j for h in headings for j in range(h.first_line, h.last_line + 1)}
        if self.drop_autodoc_pages:
            has_prose, has_autodoc = _scan_residue(lines, heading_lines | front_matter, markdown)
            if has_autodoc and not has_prose:
                logger.debug("DocsChunker dropped autodoc-only page %s", file_path)
                return []

        stem = PurePosixPath(file_path).stem or file_path
        if not headings:
            return self._records(text, file_path, [(0, len(text), stem, False)])

        # Flat sections tiling the file: (start, end, symbol, body_is_empty).
        sections: list[tuple[int, int, str, bool]] = []
        first = offsets[headings[0].first_line]
        if text[:first].strip():
            preamble_lines = lines[: headings[0].first_line]
            has_prose, _ = _scan_residue(preamble_lines, front_matter, markdown)
            sections.append((0, first, stem, not has_prose))
        path: list[tuple[int, str]] = []
        for k, heading in enumerate(headings):
            while path and path[-1][0] >= heading.level:
                path.pop()
            path.append((heading.level, heading.title))
            start = offsets[heading.first_line]
            end = offsets[headings[k + 1].first_line] if k + 1 < len(headings) else len(text)
            body_start = min(offsets[heading.last_line] + len(raw_lines[heading.last_line]), end)
            symbol = self.heading_separator.join(title for _, title in path)
            sections.append((start, end, symbol, not text[body_start:end].strip()))
        return self._records(text, file_path, sections)

    def _records(
        self, text: str, file_path: str, sections: list[tuple[int, int, str, bool]]
    ) -> list[Document]:
        """Merge body-less sections forward (the last one backward) and build the records."""
        merged: list[list[Any]] = []
        carry: int | None = None
        for start, end, symbol, empty in sections:
            if empty:
                carry = start if carry is None else carry
                continue
            merged.append([start if carry is None else carry, end, symbol])
            carry = None
        if carry is not None and merged:
            merged[-1][1] = len(text)

        records = []
        for start, end, symbol in merged:
            piece = text[start:end]
            stripped = piece.lstrip()
            if not stripped:
                continue
            # Skip whole leading blank lines only, so the first line keeps its indentation.
            lead = piece[: len(piece) - len(stripped)]
            start += lead.rfind("\n") + 1
            end = start + len(text[start:end].rstrip())
            section = make_record(
                text=text,
                file_path=file_path,
                symbol=symbol,
                source_type="docs",
                start_char=start,
                end_char=end,
            )
            records.append(section)
            if self.table_rows_over_chars is not None and not file_path.lower().endswith(RST_SUFFIXES):
                records.extend(self._table_rows(text, file_path, section))
        return records

    def _table_rows(self, text: str, file_path: str, section: Document) -> list[Document]:
        """One record per row of each table in ``section`` longer than ``table_rows_over_chars``."""
        start, end = section.meta["start_char"], section.meta["end_char"]
        lines, offsets = _split_lines(text[start:end])
        rows: list[Document] = []
        fence: Fence | None = None
        i = 0
        while i < len(lines):
            line = lines[i]
            if fence is not None:
                fence = None if fence.closed_by(line) else fence
                i += 1
                continue
            fence = opening_fence(line)
            header_ok = _TABLE_ROW.match(line) and i + 1 < len(lines) and _TABLE_DELIMITER.match(lines[i + 1])
            if fence is not None or not header_ok or "|" not in lines[i + 1]:
                i += 1
                continue
            body = i + 2
            last = body
            while last < len(lines) and _TABLE_ROW.match(lines[last]):
                last += 1
            table_chars = offsets[last - 1] + len(lines[last - 1]) - offsets[i] if last > body else 0
            if last > body and table_chars > self.table_rows_over_chars:
                columns = [c.strip() for c in line.strip().strip("|").split("|")]
                for j in range(body, last):
                    row_start = start + offsets[j] + (len(lines[j]) - len(lines[j].lstrip()))
                    row_end = start + offsets[j] + len(lines[j].rstrip())
                    first_cell = lines[j].strip().strip("|").split("|")[0].strip().strip("`*_ ")
                    cell = first_cell or f"row {j - body + 1}"
                    name = f"{section.meta['symbol']}{self.heading_separator}{cell}"
                    row = make_record(
                        text=text,
                        file_path=file_path,
                        symbol=name,
                        source_type="docs",
                        start_char=row_start,
                        end_char=row_end,
                        extra_meta={"parent": section.id},
                    )
                    row.meta["header"] += f" | Columns: {', '.join(c for c in columns if c)}"
                    rows.append(row)
            i = max(last, i + 1)
        return rows
