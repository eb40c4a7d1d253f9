"""What a repository names: its symbols, modules and raw identifiers, read once from its records.

Rules:
- Built from every record of a document store: each ``meta["symbol"]`` and its dotted parts, the
  module names of Python files (``src/vllm/engine/llm_engine.py`` gives ``vllm.engine``,
  ``llm_engine``, ``vllm.engine.llm_engine``, …: every contiguous run of its path parts), every raw
  identifier in ``content`` and ``meta["impl"]`` (case kept), and the languages of its files.
- **Known** (the grounding check's rule): a name is known when it is a symbol or module, or a raw
  identifier; a dotted name when the whole is a symbol or module, or its last part is known.
- **Near**: a name that is not known, but that the repository spells differently: the same letters
  and digits ignoring case, ``_`` and ``-`` (``NemotronVL`` / ``nemotron_vl``, ``SwiGLUOAI`` /
  ``SwigluOAIAndMul``'s head), or the head of a longer identifier cut where one of its parts
  begins (``GPTQMarlin24`` → ``GPTQMarlin24Config``; ``Trai`` is not a head of ``Trainer``).
- **Written**: what is not an identifier (a command-line flag ``--max-old-space-size``, an HTTP path
  ``/v1/chat/completions``) is looked for verbatim in the records (``written_in``): the store's
  own search where it has one (``SQLiteBM25DocumentStore.contains_text``), else every record.
- One vocabulary per store file (its path, inode, size and times; the 4 latest files are kept) and
  per in-memory store object (and its record count): the grounding check and the question's
  premise check of one pipeline build it once.

Usage:
```python
from haystack import Document
from codeground.components.grounding.vocabulary import vocabulary_of
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

store = SQLiteBM25DocumentStore()
config = Document(content="class GPTQMarlin24Config: ...", meta={"symbol": "GPTQMarlin24Config"})
store.write_documents([config])
vocabulary = vocabulary_of(store)
assert vocabulary.is_known("GPTQMarlin24Config") and not vocabulary.is_known("GPTQMarlin24")
assert vocabulary.near("GPTQMarlin24") == ["GPTQMarlin24Config"] and vocabulary.near("Blockchain") == []
```
"""

from __future__ import annotations

import bisect
import os
import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from codeground.components.languages import Language, language_for

# Raw identifiers as written in code and docs, case kept (``trust_remote_code``, ``LLMEngine``).
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_SEPARATORS = re.compile(r"[_\-]")
_MAX_NEAR = 3


def normalized(name: str) -> str:
    """``name`` without case, ``_`` or ``-``: the letters and digits a reader would say aloud."""
    return _SEPARATORS.sub("", name).lower()


def _module_names(file_path: str) -> set[str]:
    """Dotted module names a Python file provides (every contiguous run of its path parts)."""
    if not file_path.endswith((".py", ".pyi")):
        return set()
    parts = [p for p in file_path.rsplit(".", 1)[0].split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)}


def _part_starts_at(spelling: str, letters: int) -> bool:
    """Whether a new part of ``spelling`` begins after its first ``letters`` letters and digits."""
    seen = 0
    for i, ch in enumerate(spelling):
        if seen == letters:
            prev = spelling[i - 1]
            return (
                ch in "_-."
                or (ch.isupper() and not prev.isupper())
                or (ch.isupper() and i + 1 < len(spelling) and spelling[i + 1].islower())
                or (ch.isdigit() != prev.isdigit())
            )
        if ch not in "_-":
            seen += 1
    return False


@dataclass
class RepositoryVocabulary:
    """The names one repository has (module rules)."""

    symbols: set[str] = field(default_factory=set)
    identifiers: set[str] = field(default_factory=set)
    languages: set[Language] = field(default_factory=set)
    python: bool = False  # the repository has Python files (Python is not one of ``languages``)
    _by_normal: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _normals: list[str] = field(default_factory=list, repr=False)

    @classmethod
    def from_records(cls, records: list[Any]) -> RepositoryVocabulary:
        vocabulary = cls()
        for doc in records:
            meta = doc.meta or {}
            symbol = meta.get("symbol")
            if isinstance(symbol, str) and symbol:
                vocabulary.symbols.add(symbol)
                vocabulary.identifiers.update(symbol.split("."))
            file_path = meta.get("file_path")
            if isinstance(file_path, str):
                lang = language_for(file_path)
                if lang is not None:
                    vocabulary.languages.add(lang)
                modules = _module_names(file_path)
                vocabulary.python = vocabulary.python or bool(modules)
                vocabulary.symbols.update(modules)
                vocabulary.identifiers.update(m for m in modules if "." not in m)
            for text in (doc.content, meta.get("impl")):
                if isinstance(text, str):
                    vocabulary.identifiers.update(_IDENTIFIER.findall(text))
        return vocabulary

    def is_known(self, identifier: str) -> bool:
        """Whether the repository has ``identifier`` anywhere (the grounding check's rule)."""
        if "." in identifier:
            return identifier in self.symbols or identifier.rsplit(".", 1)[-1] in self.identifiers
        return identifier in self.symbols or identifier in self.identifiers

    def near(self, name: str) -> list[str]:
        """The repository's spellings of a name it does not have verbatim (module rules), at most 3:
        the same letters first, then the longer names it heads. For a dotted name, its last part's."""
        part = name.rsplit(".", 1)[-1]
        key = normalized(part)
        if not key:
            return []
        same = [s for s in self._spellings(key) if s != part]
        heads: list[str] = []
        start = bisect.bisect_right(self._normals, key)
        for normal in self._normals[start:]:
            if not normal.startswith(key) or len(heads) >= _MAX_NEAR:
                break
            heads.extend(s for s in self._by_normal[normal] if _part_starts_at(s, len(key)))
        return (same + sorted(heads, key=lambda s: (len(s), s)))[:_MAX_NEAR]

    def _spellings(self, key: str) -> list[str]:
        self.index_spellings()
        return self._by_normal.get(key, [])

    def index_spellings(self) -> None:
        """Build the spelling index ``near`` reads (once; ``near`` builds it when needed)."""
        if self._normals or not (self.identifiers or self.symbols):
            return
        by_normal: dict[str, set[str]] = {}
        for name in self.identifiers | {s for s in self.symbols if "." not in s}:
            by_normal.setdefault(normalized(name), set()).add(name)
        self._by_normal = {k: sorted(v) for k, v in by_normal.items() if k}
        self._normals = sorted(self._by_normal)


_lock = threading.Lock()
_by_file: OrderedDict[tuple[str, int, int, int, int], RepositoryVocabulary] = OrderedDict()
_MAX_FILES = 4  # the latest stores read (a server holding several repositories); older ones are dropped
_by_object: weakref.WeakKeyDictionary[Any, tuple[int, RepositoryVocabulary]] = weakref.WeakKeyDictionary()


def _file_key(store: Any) -> tuple[str, int, int, int, int] | None:
    path = getattr(store, "persist_path", None)
    if not isinstance(path, str | os.PathLike):
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):  # a folder's times do not follow the data inside it
        return None
    return (os.path.realpath(path), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def written_in(store: Any, text: str) -> bool:
    """Whether any record of ``store`` holds ``text`` verbatim (content, or its meta's text)."""
    if store is None or not text:
        return False
    contains = getattr(store, "contains_text", None)
    if callable(contains):
        return bool(contains(text))
    for doc in store.filter_documents():
        meta = doc.meta or {}
        if any(isinstance(t, str) and text in t for t in (doc.content, *meta.values())):
            return True
    return False


def _count(store: Any) -> int:
    try:
        return int(store.count_documents())
    except Exception:  # noqa: BLE001 - a store without a count is read again each time
        return -2


def vocabulary_of(store: Any) -> RepositoryVocabulary:
    """The vocabulary of every record in ``store`` (``None``: empty), built once per store file."""
    if store is None:
        return RepositoryVocabulary()
    key = _file_key(store)
    with _lock:
        if key is not None:
            cached = _by_file.get(key)
            if cached is not None:
                _by_file.move_to_end(key)
        else:  # an in-memory store: the same object with as many records as when it was read
            count, cached = _by_object.get(store, (-1, None))
            if cached is not None and count != _count(store):
                cached = None
        if cached is not None:
            return cached
        vocabulary = RepositoryVocabulary.from_records(store.filter_documents())
        if key is not None:
            for old in [k for k in _by_file if k[0] == key[0]]:
                del _by_file[old]  # an older state of the same file
            _by_file[key] = vocabulary
            while len(_by_file) > _MAX_FILES:
                _by_file.popitem(last=False)
        else:
            try:
                _by_object[store] = (_count(store), vocabulary)
            except TypeError:  # a store that cannot be weakly referenced is read again next time
                pass
        return vocabulary
