"""BM25 retrieval from the on-disk identifier-aware store, with the stock BM25 retriever's contract."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.document_stores.types import FilterPolicy, apply_filter_policy

from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore


@component
class BM25Retriever:
    """The ``top_k`` records of a ``SQLiteBM25DocumentStore`` by BM25 score.

    Rule: inputs, outputs and filter handling are those of Haystack's ``InMemoryBM25Retriever``
    (which accepts only the in-memory store); the scoring rule lives in the store.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.retrievers.bm25 import BM25Retriever
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    store.write_documents([Document(content="def load(trust_remote_code): ...")])
    retriever = BM25Retriever(document_store=store, top_k=5)
    assert retriever.run(query="trust remote code")["documents"][0].content.startswith("def load")
    ```
    """

    def __init__(
        self,
        *,
        document_store: SQLiteBM25DocumentStore,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        scale_score: bool = False,
        filter_policy: FilterPolicy = FilterPolicy.REPLACE,
    ) -> None:
        """
        :param document_store: the store to search.
        :param filters: Haystack filters applied to every query unless the run gives its own.
        :param top_k: the most records returned (> 0).
        :param scale_score: map scores to (0, 1) as the stock retriever does.
        :param filter_policy: how run-time filters combine with ``filters`` (stock semantics).
        """
        if not isinstance(document_store, SQLiteBM25DocumentStore):
            raise ValueError("document_store must be a SQLiteBM25DocumentStore")
        if top_k <= 0:
            raise ValueError(f"top_k must be greater than 0, but got {top_k}")
        self.document_store = document_store
        self.filters = filters
        self.top_k = top_k
        self.scale_score = scale_score
        self.filter_policy = (
            FilterPolicy.from_str(filter_policy) if isinstance(filter_policy, str) else filter_policy
        )

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
    ) -> dict[str, list[Document]]:
        """The best records for ``query``, best first, each with its ``score``."""
        filters = apply_filter_policy(self.filter_policy, self.filters, filters)
        docs = self.document_store.bm25_retrieval(
            query=query,
            filters=filters,
            top_k=self.top_k if top_k is None else top_k,
            scale_score=self.scale_score if scale_score is None else scale_score,
        )
        return {"documents": docs}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            document_store=self.document_store,
            filters=self.filters,
            top_k=self.top_k,
            scale_score=self.scale_score,
            filter_policy=self.filter_policy.value,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BM25Retriever:
        return default_from_dict(cls, data)
