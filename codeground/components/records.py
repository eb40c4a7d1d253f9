"""The one shape every indexed record has, whichever chunker made it.

A record is a Haystack ``Document`` whose ``content`` is an exact slice of the original file
(``text[start_char:end_char]``) and whose meta says where it came from:

- ``file_path``: POSIX path relative to the indexed repository root
- ``symbol``: ``Class.method`` for Python, the heading path for docs, a cell range for notebooks
- ``source_type``: ``api`` | ``impl`` | ``module`` | ``docs`` | ``notebook`` | ``text``
- ``start_line``/``end_line``: 1-based, inclusive
- ``start_char``/``end_char``: Python ``str`` offsets into the decoded file, end-exclusive
- ``header``: ``File: … | Symbol: … | Type: …``, embedded and BM25-indexed but never shown as excerpt

The id is ``path:symbol:line``. ``RECORDS_VERSION`` names the chunkers' rules: an index made under
other rules is rebuilt in full (``app.pipeline.loader.settings_fingerprint``; the embedding cache keeps the
vectors of every text that did not change).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from pathlib import Path
from typing import Any

from haystack import Document
from haystack.dataclasses import ByteStream

SOURCE_TYPES = ("api", "impl", "module", "docs", "notebook", "text")
# bump when a chunker's rule changes which records a file gets: indexes made under the old rules rebuild
# 1: Python that ast refuses parsed by tree-sitter, unparsable source indexed as text
# 2: keys in the text redacted (secret_scan; a change to its rules bumps this too), more secret files
# 3: a file of imports alone (a re-export) is one module record, not left out
RECORDS_VERSION = 3


def record_id(file_path: str, symbol: str, start_line: int) -> str:
    """The record id rule: ``path:symbol:line``."""
    return f"{file_path}:{symbol}:{start_line}"


def provenance_header(file_path: str, symbol: str, source_type: str) -> str:
    """The provenance header that is embedded and BM25-indexed with the text."""
    return f"File: {file_path} | Symbol: {symbol} | Type: {source_type}"


def line_of(text: str, char_offset: int) -> int:
    """1-based line number of ``char_offset`` in ``text``.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as in Python's tokenizer and editors, so a file
    with old-Mac or mixed line endings gets the line numbers its AST has (and distinct record ids).
    """
    return bisect_left(_line_breaks(text), char_offset) + 1


_BREAK = re.compile(r"\n|\r(?!\n)")  # a CRLF pair breaks at its \n


@lru_cache(maxsize=4)
def _line_breaks(text: str) -> list[int]:
    """Offsets of the characters that end a line; kept for the few files being chunked (a ``str``
    keeps its hash, so finding the same text again costs nothing)."""
    return [m.start() for m in _BREAK.finditer(text)]


def make_record(
    *,
    text: str,
    file_path: str,
    symbol: str,
    source_type: str,
    start_char: int,
    end_char: int,
    extra_meta: dict[str, Any] | None = None,
) -> Document:
    """Build a record whose content is exactly ``text[start_char:end_char]``.

    ``text`` is the whole decoded file, so lines and offsets are computed here, once, for every
    chunker. ``end_line`` is the line holding the last character of the slice.
    """
    if source_type not in SOURCE_TYPES:
        raise ValueError(f"unknown source_type {source_type!r}")
    if not 0 <= start_char < end_char <= len(text):
        raise ValueError(f"bad char range {start_char}:{end_char} for {file_path}")
    return record_from_content(
        content=text[start_char:end_char],
        file_path=file_path,
        symbol=symbol,
        source_type=source_type,
        start_line=line_of(text, start_char),
        end_line=line_of(text, end_char - 1),
        start_char=start_char,
        end_char=end_char,
        extra_meta=extra_meta,
    )


def record_from_content(
    *,
    content: str,
    file_path: str,
    symbol: str,
    source_type: str,
    start_line: int,
    end_line: int,
    start_char: int,
    end_char: int,
    extra_meta: dict[str, Any] | None = None,
) -> Document:
    """Build a record whose content is not a slice of the file's text (notebook cells).

    The caller states the line and char range of the cited region in the original file.
    """
    meta: dict[str, Any] = {
        "file_path": file_path,
        "symbol": symbol,
        "source_type": source_type,
        "start_line": start_line,
        "end_line": end_line,
        "start_char": start_char,
        "end_char": end_char,
        "header": provenance_header(file_path, symbol, source_type),
    }
    if extra_meta:
        meta.update(extra_meta)
    return Document(id=record_id(file_path, symbol, start_line), content=content, meta=meta)


# What a chunker's ``sources`` input accepts: the stock converters' type, so FileTypeRouter connects.
Source = str | Path | ByteStream


def source_text(source: Source) -> tuple[str, str]:
    """``(file_path, decoded text)`` of one source.

    A ByteStream from the walker carries its repository-relative path in meta ``file_path``; a
    plain path is read from disk and cited as given. Raises ``UnicodeDecodeError`` for non-UTF-8.
    """
    if isinstance(source, ByteStream):
        return source.meta.get("file_path") or "unknown", source.data.decode("utf-8")
    path = Path(source)
    return path.as_posix(), path.read_bytes().decode("utf-8")
