"""Exact symbol lookup: identifiers the user typed become exact metadata lookups."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from codeground.components.identifiers import code_names
from codeground.components.stores.sqlite_bm25 import meta_rows

_PLACE = ("source_type", "file_path", "start_line")  # what decides a symbol's first record


@component
class SymbolRetriever:
    """Look up records whose symbol the question names exactly.

    Rules:
    - The question is tokenized on identifier characters, dotted paths included (``LLMEngine.add_request``
      also yields ``LLMEngine`` and ``add_request``). A token is looked up when it looks like code
      (snake_case, dotted, CamelCase, or written in backticks) and is in the symbol vocabulary.
    - The vocabulary holds every code record's full symbol (``Class.method``) and its last part
      (``method``). A key naming more than ``max_symbols_per_key`` distinct symbols is too generic to
      be a lookup (``forward`` in a model zoo) and is ignored.
    - Each matched symbol contributes its first record (lowest line); at most ``top_k`` records, in
      the order the question names them, full-symbol matches first.
    - ``named`` holds the records of the symbols the question names in full: a dotted name that is
      exactly one symbol (``Trainer.fit``, ``LLMEngine.add_request``); a bare name is not enough.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.retrievers.symbol_lookup import SymbolRetriever
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    meta = {"symbol": "Trainer.fit", "source_type": "impl", "file_path": "t.py", "start_line": 3}
    store.write_documents([Document(content="def fit(self): ...", meta=meta)])
    retriever = SymbolRetriever(document_store=store)
    found = retriever.run(query="What does `Trainer.fit` return?")["documents"]
    assert [d.meta["symbol"] for d in found] == ["Trainer.fit"]
    ```
    """

    def __init__(
        self,
        *,
        document_store: Any,
        top_k: int = 4,
        max_symbols_per_key: int = 3,
        source_types: list[str] | None = None,
    ) -> None:
        """
        :param document_store: the store holding every record (the BM25 store).
        :param top_k: the most records returned.
        :param max_symbols_per_key: keys naming more distinct symbols than this are ignored.
        :param source_types: record types whose symbols form the vocabulary (code records by default).
        """
        self.document_store = document_store
        self.top_k = top_k
        self.max_symbols_per_key = max_symbols_per_key
        self.source_types = source_types or ["api", "impl", "module"]
        self._by_key: dict[str, list[str]] | None = None
        self._first_record: dict[str, str] = {}  # symbol -> id of its first record

    def warm_up(self) -> None:
        """Build the symbol vocabulary once (symbol, type, path and line of each record, read without
        loading the records themselves), unless the store looks names up itself
        (``records_by_symbol``, as the BM25 store does): then nothing is read until a question names
        something."""
        if self._by_key is not None or self._store_looks_up:
            return
        rows = meta_rows(self.document_store, ["symbol", *_PLACE])
        self._by_key, self._first_record = self._vocabulary_of(rows)

    @property
    def _store_looks_up(self) -> bool:
        return callable(getattr(self.document_store, "records_by_symbol", None))

    def _vocabulary_of(self, rows) -> tuple[dict[str, list[str]], dict[str, str]]:
        """``(key -> symbols, symbol -> id of its first record)`` from ``(id, symbol, type, path, line)``
        rows: the vocabulary holds each code symbol in full and by its last part."""
        wanted = set(self.source_types)
        first: dict[str, tuple[tuple[str, int], str]] = {}
        for doc_id, symbol, source_type, file_path, start_line in rows:
            if not symbol or source_type not in wanted:
                continue
            place = (file_path or "", start_line or 0)
            best = first.get(symbol)
            if best is None or place < best[0]:
                first[symbol] = (place, doc_id)
        by_key: dict[str, set[str]] = defaultdict(set)
        for symbol in first:
            by_key[symbol].add(symbol)
            by_key[symbol.rsplit(".", 1)[-1]].add(symbol)
        return {k: sorted(v) for k, v in by_key.items()}, {s: doc_id for s, (_, doc_id) in first.items()}

    def _lookup(self, keys: list[str]) -> tuple[dict[str, list[str]], dict[str, str]]:
        """The vocabulary entries of ``keys``: from the store per question, or from the whole one."""
        if self._store_looks_up:
            return self._vocabulary_of(self.document_store.records_by_symbol(keys, list(_PLACE)))
        self.warm_up()
        return self._by_key or {}, self._first_record

    @property
    def vocabulary(self) -> set[str]:
        if self._store_looks_up:
            rows = meta_rows(self.document_store, ["symbol", *_PLACE])
            return set(self._vocabulary_of(rows)[0])
        self.warm_up()
        return set(self._by_key or {})

    @component.output_types(documents=list[Document], named=list[Document])
    def run(self, query: str) -> dict[str, list[Document]]:
        """Records whose symbols the query names, best first; ``named``: those it names beyond doubt."""
        keys = code_names(query)
        by_key, first_record = self._lookup(keys) if keys else ({}, {})
        exact: list[str] = []
        partial: list[str] = []
        certain: set[str] = set()
        for token in keys:
            symbols = by_key.get(token)
            if not symbols or len(symbols) > self.max_symbols_per_key:
                continue
            if symbols == [token] and "." in token:  # a dotted name written out in full
                certain.add(token)
            for symbol in symbols:
                (exact if symbol == token else partial).append(symbol)
        chosen: list[str] = []
        for symbol in exact + partial:
            record = first_record[symbol]
            if record not in chosen:
                chosen.append(record)
            if len(chosen) >= self.top_k:
                break
        found = {}
        if chosen:
            filters = {"field": "id", "operator": "in", "value": chosen}
            found = {d.id: d for d in self.document_store.filter_documents(filters=filters)}
        docs = [found[i] for i in chosen if i in found]
        named_ids = {first_record[s] for s in certain}
        return {"documents": docs, "named": [d for d in docs if d.id in named_ids]}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            document_store=self.document_store,
            top_k=self.top_k,
            max_symbols_per_key=self.max_symbols_per_key,
            source_types=self.source_types,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SymbolRetriever:
        return default_from_dict(cls, data)
