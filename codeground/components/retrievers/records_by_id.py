"""Retrieved ids back into records: the dense store keeps vectors, the record store keeps records."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict


@component
class RecordsById:
    """Replace each retrieved document by the record with the same id in ``document_store``.

    Rules:
    - The dense store holds only ids and vectors (``BatchedChromaDocumentStore(vectors_only=True)``);
      content and meta live once, in the record store (the BM25 store), so an index run writes each
      record's text once and the dense store stays small and fast to update.
    - Each document becomes the store's record with the retrieved document's score, in the retrieved
      order; its embedding is kept if it carried one.
    - An id the store lacks is dropped, never passed on as an empty excerpt (the index check refuses
      stores that disagree before any question is asked). Inputs are never mutated.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.retrievers.records_by_id import RecordsById
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    record = Document(id="a.py:f:1", content="def f(): ...", meta={"symbol": "f", "file_path": "a.py"})
    store.write_documents([record])
    hits = [Document(id="a.py:f:1", score=0.12), Document(id="gone.py:g:1", score=0.3)]
    out = RecordsById(document_store=store).run(documents=hits)["documents"]
    assert [(d.content, d.meta["symbol"], d.score) for d in out] == [("def f(): ...", "f", 0.12)]
    ```
    """

    def __init__(self, *, document_store: Any) -> None:
        """
        :param document_store: the store holding every record (the BM25 store); it answers
            ``filter_documents`` on ``id`` ``in`` a list.
        """
        self.document_store = document_store

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        """The records of ``documents``, with their scores, in their order."""
        if not documents:
            return {"documents": []}
        wanted = {"field": "id", "operator": "in", "value": [d.id for d in documents]}
        records = {r.id: r for r in self.document_store.filter_documents(filters=wanted)}
        found = []
        for doc in documents:
            record = records.get(doc.id)
            if record is not None:
                embedding = doc.embedding if doc.embedding is not None else record.embedding
                found.append(replace(record, score=doc.score, embedding=embedding))
        return {"documents": found}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecordsById:
        return default_from_dict(cls, data)
