"""qdrant-haystack's retrievers over ``CodegroundQdrantDocumentStore`` (or any subclass of its store).

Rule: the stock retrievers read their store back with ``QdrantDocumentStore.from_dict``, which
refuses a subclass; these read it with the class its ``type`` names (it must be a
``QdrantDocumentStore``) and are otherwise the stock retrievers, unchanged.

Usage:
```python
from codeground.components.retrievers.qdrant import QdrantSparseRetriever
from codeground.components.stores.qdrant import CodegroundQdrantDocumentStore

store = CodegroundQdrantDocumentStore(location=":memory:", embedding_dim=4, use_sparse_embeddings=True)
retriever = QdrantSparseRetriever.from_dict(QdrantSparseRetriever(document_store=store).to_dict())
assert type(retriever.to_dict()["init_parameters"]["document_store"]) is dict
```
"""

from __future__ import annotations

from typing import Any

from haystack import component, default_from_dict
from haystack.core.serialization import import_class_by_name
from haystack.document_stores.types import FilterPolicy
from haystack_integrations.components.retrievers.qdrant import (
    QdrantEmbeddingRetriever,
    QdrantHybridRetriever,
    QdrantSparseEmbeddingRetriever,
)
from haystack_integrations.document_stores.qdrant import QdrantDocumentStore


def _from_dict(cls: type, data: dict[str, Any]) -> Any:
    from haystack.core.serialization import allow_deserialization_module

    from codeground.components.inner import ALLOWED_MODULES

    for pattern in ALLOWED_MODULES:  # as for any nested component of ours (components/inner.py)
        allow_deserialization_module(pattern)
    params = data["init_parameters"]
    store_cls = import_class_by_name(params["document_store"]["type"])
    if not issubclass(store_cls, QdrantDocumentStore):
        raise TypeError(f"{params['document_store']['type']} is not a QdrantDocumentStore")
    params["document_store"] = store_cls.from_dict(params["document_store"])
    if policy := params.get("filter_policy"):
        params["filter_policy"] = FilterPolicy.from_str(policy)
    return default_from_dict(cls, data)


@component
class QdrantDenseRetriever(QdrantEmbeddingRetriever):
    """``QdrantEmbeddingRetriever`` that reads back a subclass of the Qdrant store (module rule)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QdrantDenseRetriever:
        return _from_dict(cls, data)


@component
class QdrantSparseRetriever(QdrantSparseEmbeddingRetriever):
    """``QdrantSparseEmbeddingRetriever`` that reads back a subclass of the Qdrant store (module rule)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QdrantSparseRetriever:
        return _from_dict(cls, data)


@component
class QdrantHybridFusionRetriever(QdrantHybridRetriever):
    """``QdrantHybridRetriever`` (Qdrant's own fusion of the dense and sparse lists) that reads back a
    subclass of the Qdrant store (module rule)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QdrantHybridFusionRetriever:
        return _from_dict(cls, data)
