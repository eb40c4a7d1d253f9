"""Chunk Jupyter notebooks so that explanations stay with the code they explain.

The rule: a markdown cell is glued to the code cell after it (one record = markdown + code). A
markdown-only stretch shorter than ``min_markdown_chars`` (200) is carried into the next chunk, so a
heading is never an orphan record; a longer stretch is a record of its own. Outputs and raw cells are
never indexed. The record cites the span of the cells' JSON objects in the ``.ipynb`` file.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from haystack import Document, component

from codeground.components.records import Source, line_of, record_from_content, source_text

logger = logging.getLogger(__name__)

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class NotebookError(ValueError):
    """The file is not a notebook this chunker can read."""


@dataclass(frozen=True)
class _Cell:
    index: int  # position in the notebook's ``cells`` array, 0-based
    kind: str  # "markdown" | "code"
    text: str  # the cell source, rendered for the record
    start_char: int  # span of the cell's JSON object in the raw file
    end_char: int


def _skip_ws(raw: str, idx: int) -> int:
    return _WHITESPACE.match(raw, idx).end()


def _expect(raw: str, idx: int, char: str) -> int:
    if raw[idx : idx + 1] != char:
        raise NotebookError(f"expected {char!r} at offset {idx}")
    return idx + 1


def parse_notebook(raw: str) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """Decode a notebook and find where each cell's JSON object lies in ``raw``.

    Walks the top-level object with ``json.JSONDecoder().raw_decode``; inside ``"cells"`` it records
    each element's ``(start, end)`` offsets (``raw[start:end]`` is that element's JSON).
    """
    decoder = json.JSONDecoder()
    notebook: dict[str, Any] = {}
    spans: list[tuple[int, int]] = []
    idx = _skip_ws(raw, 1 if raw.startswith("\ufeff") else 0)
    idx = _skip_ws(raw, _expect(raw, idx, "{"))
    if raw[idx : idx + 1] == "}":
        idx += 1
    else:
        while True:
            key, idx = decoder.raw_decode(raw, idx)
            if not isinstance(key, str):
                raise NotebookError(f"object key at offset {idx} is not a string")
            idx = _skip_ws(raw, _expect(raw, _skip_ws(raw, idx), ":"))
            if key == "cells" and raw[idx : idx + 1] == "[":
                cells: list[Any] = []
                spans = []
                idx = _skip_ws(raw, idx + 1)
                if raw[idx : idx + 1] == "]":
                    idx += 1
                else:
                    while True:
                        start = idx
                        cell, idx = decoder.raw_decode(raw, idx)
                        cells.append(cell)
                        spans.append((start, idx))
                        idx = _skip_ws(raw, idx)
                        if raw[idx : idx + 1] == "]":
                            idx += 1
                            break
                        idx = _skip_ws(raw, _expect(raw, idx, ","))
                value: Any = cells
            else:
                value, idx = decoder.raw_decode(raw, idx)
            notebook[key] = value
            idx = _skip_ws(raw, idx)
            if raw[idx : idx + 1] == "}":
                idx += 1
                break
            idx = _skip_ws(raw, _expect(raw, idx, ","))
    if _skip_ws(raw, idx) != len(raw):
        raise NotebookError(f"extra data after the notebook object at offset {idx}")
    return notebook, spans


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError(f"cell source is {type(source).__name__}, not a string or a list of strings")


def _first_heading(markdown: str) -> str | None:
    fence: str | None = None
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _ATX.match(line)
        if heading and heading.group(1).strip("# \t"):
            return heading.group(1).strip()
    return None


@component
class NotebookChunker:
    """Turns ``.ipynb`` notebooks into records of markdown glued to the code it introduces.

    - Cells are walked in order; raw cells, blank cells and all outputs are ignored.
    - Markdown cells gather in a buffer; a code cell takes the buffer with it (one record). When a new
      markdown cell arrives and the buffer already holds ``min_markdown_chars`` or more, the buffer is a
      record of its own; shorter buffers are carried forward (no orphan headings). A code cell with an
      empty buffer is its own record. Markdown left at the end joins the previous record when shorter
      than ``min_markdown_chars`` (and is kept alone when long or when there is no previous record).
    - Content: cells joined with a blank line; markdown as written, code inside a fenced block tagged
      with the notebook's language (``python`` by default) so the model reads code as code.
    - ``symbol``: the first markdown heading in the record, else ``cell N`` (N = 1-based index of its
      first cell); if that would repeat an id, `` (cells N-M)`` is appended. ``source_type`` is
      ``notebook``; meta ``cell_start``/``cell_end`` are 0-based inclusive cell indices.
    - The char/line range is the span of the record's cells' JSON objects in the raw ``.ipynb`` text,
      from the first cell's ``{`` to the last cell's ``}``.
    - Invalid JSON or a malformed cell: the notebook yields no records and a warning is logged; a
      notebook without ``cells`` yields no records.

    Usage example:
    ```python
    import json
    from haystack.dataclasses import ByteStream
    from codeground.components.chunkers.notebook import NotebookChunker

    nb = {"cells": [{"cell_type": "markdown", "source": ["# Train\\n"]},
                    {"cell_type": "code", "source": "fit()", "outputs": []}], "nbformat": 4}
    source = ByteStream(data=json.dumps(nb).encode(), meta={"file_path": "examples/train.ipynb"})
    docs = NotebookChunker().run(sources=[source])["documents"]
    print(docs[0].meta["symbol"], docs[0].content)  # Train  "# Train\\n\\n```python\\nfit()\\n```"
    ```
    """

    def __init__(self, *, min_markdown_chars: int = 200, fence_code: bool = True) -> None:
        """
        Create a NotebookChunker.

        :param min_markdown_chars: A markdown-only stretch shorter than this is carried into the next chunk.
        :param fence_code: Render code cells inside a fenced code block (``False``: plain source).
        """
        self.min_markdown_chars = min_markdown_chars
        self.fence_code = fence_code

    @component.output_types(documents=list[Document], failed=list[list[str]])
    def run(self, sources: list[Source]) -> dict[str, Any]:
        """
        Chunk each notebook.

        :param sources: ``.ipynb`` files; ``meta["file_path"]`` is the path relative to the repo root.
        :returns: ``{"documents": [...], "failed": [[path, "malformed_notebook"], ...]}``, the records of
            every readable notebook in cell order, and the broken notebooks that yielded nothing.
        """
        documents: list[Document] = []
        failed: list[list[str]] = []
        for source in sources:
            try:
                file_path, raw = source_text(source)
                documents.extend(self._chunk(file_path, raw))
            except Exception as error:  # one bad notebook must not cost the others
                path = (getattr(source, "meta", None) or {}).get("file_path", "<unknown>")
                logger.info("NotebookChunker skipped %s: %s", path, error)
                failed.append([path, "malformed_notebook"])
        return {"documents": documents, "failed": failed}

    def _cells(self, raw: str) -> list[_Cell]:
        notebook, spans = parse_notebook(raw)
        cells = notebook.get("cells")
        if cells is None:
            raise NotebookError("no 'cells' (not an nbformat 4 notebook)")
        if not isinstance(cells, list):
            raise NotebookError("'cells' is not a list")
        metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
        language = (metadata.get("language_info") or {}).get("name") or (
            metadata.get("kernelspec") or {}
        ).get("language")
        language = language if isinstance(language, str) and language else "python"

        result = []
        for index, (cell, (start, end)) in enumerate(zip(cells, spans, strict=True)):
            if not isinstance(cell, dict):
                raise NotebookError(f"cell {index} is not an object")
            kind = cell.get("cell_type")
            if kind not in ("markdown", "code"):
                continue  # raw cells (and unknown kinds) are not indexed
            text = _source(cell).rstrip().lstrip("\r\n")
            if not text.strip():
                continue
            if kind == "code" and self.fence_code:
                fence = "```"
                while fence in text:
                    fence += "`"
                text = f"{fence}{language}\n{text}\n{fence}"
            result.append(_Cell(index, kind, text, start, end))
        return result

    def _chunk(self, file_path: str, raw: str) -> list[Document]:
        cells = self._cells(raw)
        chunks: list[list[_Cell]] = []
        buffer: list[_Cell] = []
        for cell in cells:
            if cell.kind == "markdown":
                if buffer and len(_join(buffer)) >= self.min_markdown_chars:
                    chunks.append(buffer)
                    buffer = []
                buffer.append(cell)
            else:
                chunks.append(buffer + [cell])
                buffer = []
        if buffer:
            if chunks and len(_join(buffer)) < self.min_markdown_chars:
                chunks[-1] = chunks[-1] + buffer
            else:
                chunks.append(buffer)

        records: list[Document] = []
        seen: set[str] = set()
        for chunk in chunks:
            first, last = chunk[0], chunk[-1]
            heading = next(
                (h for c in chunk if c.kind == "markdown" for h in [_first_heading(c.text)] if h), None
            )
            span = (
                f"cells {first.index + 1}-{last.index + 1}"
                if last is not first
                else f"cell {first.index + 1}"
            )
            symbol = heading or f"cell {first.index + 1}"
            start_line = line_of(raw, first.start_char)
            if f"{file_path}:{symbol}:{start_line}" in seen:
                symbol = f"{symbol} ({span})"
            record = record_from_content(
                content=_join(chunk),
                file_path=file_path,
                symbol=symbol,
                source_type="notebook",
                start_line=start_line,
                end_line=line_of(raw, last.end_char - 1),
                start_char=first.start_char,
                end_char=last.end_char,
                extra_meta={"cell_start": first.index, "cell_end": last.index},
            )
            seen.add(record.id)
            records.append(record)
        return records


def _join(cells: list[_Cell]) -> str:
    return "\n\n".join(cell.text for cell in cells)
