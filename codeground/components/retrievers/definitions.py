"""The definitions of the one symbol a question is: candidates wherever the rankers left them."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from codeground.components.file_ranking.named_definition import symbol_names
from codeground.components.query_shape import is_symbol_query

_CODE = ("api", "impl", "module")
_SEPARATORS = re.compile(r"::|\\|->|\.|#")


def _stem(path: str) -> str:
    return PurePosixPath(path).stem.lower().replace("_", "").replace("-", "")


@component
class DefinitionRetriever:
    """Every code record that defines the symbol a one-identifier question names, up to ``top_k``.

    Rule: a question that is one identifier (``Deserialize``, ``HTTPAdapter``, ``Router.route``:
    ``file_ranking.named_definition.is_symbol_query``) asks where it is defined. The exact symbol
    lookup skips a name that many symbols share (``max_symbols_per_key``), and BM25 ranks the many
    records that merely *use* a popular name above the one that defines it; so the records whose
    symbol is the name, or ends in it (``de.Deserialize`` for ``Deserialize``), are candidates here,
    code records only; of a qualified name (``serde::Deserializer``) also the records of its last
    part, after those. Order: the symbol as asked first, then records in a file named after it
    (``router.go`` for ``Router``), then the store's order.
    A sentence returns nothing (the other retrievers serve it).

    Usage:
    ```python
    from haystack import Document
    from codeground.components.retrievers.definitions import DefinitionRetriever
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    meta = lambda path, symbol: {"file_path": path, "symbol": symbol, "source_type": "api", "start_line": 1}
    store.write_documents([
        Document(id="use", content="impl Deserialize for Foo", meta=meta("src/foo.rs", "Foo.deserialize")),
        Document(id="def", content="pub trait Deserialize<'de>", meta=meta("src/de/mod.rs", "Deserialize")),
    ])
    found = DefinitionRetriever(document_store=store).run(query="Deserialize")["documents"]
    assert [d.id for d in found] == ["def"]
    ```
    """

    def __init__(self, *, document_store: Any, top_k: int = 8) -> None:
        """
        :param document_store: the store holding every record; it must look symbols up
            (``records_by_symbol``, as the BM25 store does), or this finds nothing.
        :param top_k: the most records returned.
        """
        self.document_store = document_store
        self.top_k = top_k

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict[str, list[Document]]:
        """The defining records of the symbol the question is, best first."""
        lookup = getattr(self.document_store, "records_by_symbol", None)
        if not is_symbol_query(query) or not callable(lookup):
            return {"documents": []}
        asked, last = symbol_names(query)
        rows = lookup(sorted({asked, last}), ["source_type", "file_path"])
        ranked = []
        for n, (doc_id, symbol, source_type, file_path) in enumerate(rows):
            dotted = _SEPARATORS.sub(".", symbol or "")
            if source_type not in _CODE:
                continue
            if dotted == asked or dotted.endswith("." + asked):
                exact = True
            elif dotted == last or dotted.endswith("." + last):
                exact = False  # ``Deserializer`` for ``serde::Deserializer``: the name, less its path
            else:
                continue
            ranked.append((not exact, _stem(file_path or "") != last.lower(), n, doc_id))
        chosen = [doc_id for *_, doc_id in sorted(ranked)[: self.top_k]]
        if not chosen:
            return {"documents": []}
        found = {
            d.id: d
            for d in self.document_store.filter_documents(
                filters={"field": "id", "operator": "in", "value": chosen}
            )
        }
        return {"documents": [found[i] for i in chosen if i in found]}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store, top_k=self.top_k)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DefinitionRetriever:
        return default_from_dict(cls, data)
