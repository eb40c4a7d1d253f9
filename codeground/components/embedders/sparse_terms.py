"""BM25's identifier-aware tokens as sparse vectors, for an engine that scores them itself (Qdrant).

Rule: a record's sparse vector has one entry per distinct token of ``components.identifiers.tokenize``
over its provenance header and content (``components.lexical_text``: the text the BM25 store
scores); the entry's index is the token's 32-bit hash (the first 4 bytes of BLAKE2b, so it is the
same in every process and on every machine), its value the token's weight in the record:

- ``weighting: "bm25"`` (default): the BM25L term weight of the BM25 store
  (``(k1+1)(c+δ)/(k1+c+δ)``, ``c = tf / (1 - b + b·len/avg_tokens)``, ``len`` the record's token
  count), so that with Qdrant's IDF modifier the score is BM25L's up to the IDF's form. The one
  corpus statistic, the mean record length, is the fixed pivot ``avg_tokens`` instead of the
  collection's mean, so a vector never goes stale as the collection changes. A fixed pivot holds
  because the chunkers cap every record (2,000 characters, 1,000 for code bodies): the mean token
  count of the five benchmark corpora's records is 77 (zod), 79 (pydantic-core), 85 (cobra),
  90 (jpype) and 107 (vLLM) with the header written once, 90, 94, 98, 108 and 125 with it twice
  (``index_qdrant.yaml``; with 100 the pair's recall equals the BM25 store's on the vLLM dev sets);
- ``weighting: "saturated"``: BM25's saturation ``tf·(k1+1)/(tf+k1)`` without length normalisation
  (``b = 0``);
- ``weighting: "tf"``: the raw term frequency; with Qdrant's IDF modifier the score is TF-IDF.

A question's vector holds each of its distinct tokens (``identifiers.query_tokens``: the BM25
store's query terms, programmers' short forms included) with weight 1, so the engine's dot product is
the sum of the record's weights of the question's terms, times their IDF. Two tokens may share a
hash (1 in 2^32 per pair); that only merges their counts.

Usage:
```python
from haystack import Document
from codeground.components.embedders.sparse_terms import SparseTermDocumentEmbedder, SparseTermTextEmbedder

doc = Document(content="def load(trust_remote_code): ...", meta={"header": "loader.py"})
out = SparseTermDocumentEmbedder().run(documents=[doc])["documents"][0]
query = SparseTermTextEmbedder().run(text="trust remote code")["sparse_embedding"]
assert set(query.indices) <= set(out.sparse_embedding.indices) and doc.sparse_embedding is None
```
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.dataclasses import SparseEmbedding

from codeground.components.identifiers import query_tokens, tokenize
from codeground.components.lexical_text import checked_header_weight, lexical_text

WEIGHTINGS = ("bm25", "saturated", "tf")


@lru_cache(maxsize=500_000)
def term_index(token: str) -> int:
    """The token's sparse index: a stable 32-bit hash."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big")


def _sparse(weights: dict[int, float]) -> SparseEmbedding:
    indices = sorted(weights)
    return SparseEmbedding(indices=indices, values=[weights[i] for i in indices])


@component
class SparseTermDocumentEmbedder:
    """Set each record's ``sparse_embedding`` from its BM25 tokens (module rule); new documents,
    the inputs unchanged."""

    def __init__(
        self,
        *,
        weighting: str = "bm25",
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 0.5,
        avg_tokens: float = 100.0,
        header_field: str = "header",
        header_weight: int = 1,
    ) -> None:
        """
        :param weighting: ``"bm25"``, ``"saturated"`` or ``"tf"`` (module rule).
        :param k1: BM25's saturation constant (``"bm25"``, ``"saturated"``).
        :param b: length normalisation (``"bm25"``).
        :param delta: BM25L's shift (``"bm25"``).
        :param avg_tokens: the length pivot (``"bm25"``), in tokens.
        :param header_field: meta field whose text is tokenized before the content.
        :param header_weight: how many times the header is written before the content (as the BM25
            store's ``header_weight``; ``components.lexical_text``).
        """
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
        if not avg_tokens > 0:
            raise ValueError(f"avg_tokens must be positive, got {avg_tokens}")
        self.weighting = weighting
        self.k1 = k1
        self.b = b
        self.delta = delta
        self.avg_tokens = avg_tokens
        self.header_field = header_field
        self.header_weight = checked_header_weight(header_weight)

    def _weight(self, tf: int, length: int) -> float:
        k1 = self.k1
        if self.weighting == "tf":
            return float(tf)
        if self.weighting == "saturated":
            return tf * (k1 + 1) / (tf + k1)
        c = tf / (1 - self.b + self.b * length / self.avg_tokens) + self.delta
        return (k1 + 1) * c / (k1 + c)

    def _weights(self, text: str) -> dict[int, float]:
        tokens = tokenize(text)
        weights: dict[int, float] = {}
        for token, tf in Counter(tokens).items():
            index = term_index(token)
            weights[index] = weights.get(index, 0.0) + self._weight(tf, len(tokens))
        return weights

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        out = []
        for doc in documents:
            text = lexical_text(doc, header_field=self.header_field, header_weight=self.header_weight)
            out.append(replace(doc, sparse_embedding=_sparse(self._weights(text))))
        return {"documents": out}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            weighting=self.weighting,
            k1=self.k1,
            b=self.b,
            delta=self.delta,
            avg_tokens=self.avg_tokens,
            header_field=self.header_field,
            header_weight=self.header_weight,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SparseTermDocumentEmbedder:
        return default_from_dict(cls, data)


@component
class SparseTermTextEmbedder:
    """A question's sparse vector: each distinct BM25 token with weight 1 (module rule)."""

    @component.output_types(sparse_embedding=SparseEmbedding)
    def run(self, text: str) -> dict[str, SparseEmbedding]:
        return {"sparse_embedding": _sparse({term_index(t): 1.0 for t in query_tokens(text or "")})}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SparseTermTextEmbedder:
        return default_from_dict(cls, data)
