"""A persisted BM25 store with identifier-aware tokens that also indexes the provenance header.

Stock ``InMemoryDocumentStore`` does BM25 over ``content`` with a regex tokenizer. Code search
needs two more things (DESIGN.md): tokens that split identifiers (``trust_remote_code`` also yields
``trust``, ``remote``, ``code``) and the ``File: … | Symbol: … | Type: …`` header indexed with the
text while the stored content stays the exact excerpt. This subclass changes only those two points
and adds persistence to one JSON file, so the stock ``InMemoryBM25Retriever`` works unchanged.
Stores opened on the same file in one process share their documents (loaded once).

Unfiltered ``bm25_retrieval`` uses an inverted index (token → {doc id: term frequency}) and scores
only the documents that contain a query token; it returns the same documents, scores and order as
the stock method, which scores every document per query (too slow for ~40,000 records).
"""

from __future__ import annotations

import gc
import heapq
import math
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import orjson
from haystack import Document, default_from_dict, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.in_memory.document_store import BM25_SCALING_FACTOR, BM25DocumentStats
from haystack.document_stores.types import DuplicatePolicy
from haystack.utils import expit

from components.identifiers import tokenize

FORMAT = 2  # 2: each document also carries its BM25 term frequencies ("tf") and length ("len")


def _file_key(path: str) -> str:
    """Identity of a persisted store file's current contents (path, size, mtime)."""
    resolved = Path(path).resolve()
    try:
        st = resolved.stat()
        return f"codeground-bm25:{resolved}:{st.st_size}:{st.st_mtime_ns}"
    except FileNotFoundError:
        return f"codeground-bm25:{resolved}:new"


class _PostingsIndex:
    """Inverted index over the BM25 stats of one store (shared like the stock stats when ``shared``).

    ``stats_ref`` is the ``_bm25_attr`` dict it mirrors and ``n_docs`` how many of its entries it
    holds; a mismatch with the live stats (e.g. the stock ``delete_all_documents`` or another class
    writing to a shared index) makes the next retrieval rebuild it. ``version`` changes on every
    write/delete and keys the per-document and Okapi caches.
    """

    __slots__ = ("postings", "stats_ref", "n_docs", "version", "doc_cache", "okapi_cache")

    def __init__(self, stats_ref: dict[str, BM25DocumentStats]) -> None:
        self.postings: dict[str, dict[str, int]] = {}
        self.stats_ref = stats_ref
        self.n_docs = 0 if not stats_ref else -1  # -1: out of sync, rebuild before use
        self.version = 0
        self.doc_cache: tuple[tuple, dict[str, float], dict[str, int]] | None = None
        self.okapi_cache: tuple[tuple, float] | None = None

    def in_sync(self, stats: dict[str, BM25DocumentStats]) -> bool:
        return self.stats_ref is stats and self.n_docs == len(stats)

    def add(self, doc_id: str, freq: dict[str, int]) -> None:
        postings = self.postings
        for token, tf in freq.items():
            bucket = postings.get(token)
            if bucket is None:
                postings[token] = {doc_id: tf}
            else:
                bucket[doc_id] = tf
        self.n_docs += 1

    def remove(self, doc_id: str, freq: dict[str, int]) -> None:
        postings = self.postings
        for token in freq:
            bucket = postings.get(token)
            if bucket is not None:
                bucket.pop(doc_id, None)
                if not bucket:
                    del postings[token]
        self.n_docs -= 1

    def rebuild(self, stats: dict[str, BM25DocumentStats]) -> None:
        self.postings = {}
        self.stats_ref = stats
        self.n_docs = 0
        for doc_id, doc_stats in stats.items():
            self.add(doc_id, doc_stats.freq_token)
        self.version += 1


# Inverted indexes of shared stores, keyed by index like the stock ``_BM25_STATS_STORAGES``.
_POSTINGS: dict[str, _PostingsIndex] = {}

_STOCK_SCORERS = {"BM25Okapi": "_score_bm25okapi", "BM25L": "_score_bm25l", "BM25Plus": "_score_bm25plus"}


def _top(items: list[tuple[str, float]], n: int, position: dict[str, int]) -> list[tuple[str, float]]:
    """The first ``n`` of ``items`` sorted by score descending, ties in storage order (stable sort)."""
    if len(items) > n:
        kth = heapq.nlargest(n, [score for _, score in items])[-1]
        items = [item for item in items if item[1] >= kth]
    items.sort(key=lambda item: (-item[1], position[item[0]]))
    return items[:n]


class CodeBM25DocumentStore(InMemoryDocumentStore):
    """BM25 over ``meta[header_field] + content`` with identifier-aware tokens, persisted as JSON.

    Rule: the text scored for a record is its provenance header and its content; the tokens are
    those of ``components.identifiers.tokenize``. Documents are stored without embeddings.

    Usage:
    ```python
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from components.stores.code_bm25 import CodeBM25DocumentStore

    store = CodeBM25DocumentStore(persist_path="/tmp/bm25.json")
    store.write_documents([Document(content="def load(trust_remote_code): ...",
                                    meta={"header": "File: a.py | Symbol: load | Type: impl"})])
    store.save()
    InMemoryBM25Retriever(document_store=store).run(query="trust remote")["documents"]
    ```
    """

    def __init__(
        self,
        *,
        persist_path: str | None = None,
        header_field: str = "header",
        bm25_algorithm: Literal["BM25Okapi", "BM25L", "BM25Plus"] = "BM25L",
        bm25_parameters: dict | None = None,
    ) -> None:
        """
        :param persist_path: JSON file the store loads from (if it exists) and ``save()`` writes to.
        :param header_field: meta field whose text is indexed before the content.
        :param bm25_algorithm: one of the stock algorithms.
        :param bm25_parameters: stock BM25 parameters, e.g. ``{"k1": 1.2, "b": 0.75}``.
        """
        # Stores opening the same unchanged file share one in-process copy (the stock ``shared``
        # storage keyed by ``index``), so the BM25 retriever and the symbol lookup load it once.
        shared = persist_path is not None
        super().__init__(
            bm25_algorithm=bm25_algorithm,
            bm25_parameters=bm25_parameters,
            index=_file_key(persist_path) if shared else None,
            shared=shared,
            # records are stored without embeddings, so there is nothing to strip: the stock path then
            # hands out the stored documents instead of copying every one (a full listing of 38k
            # records, as the symbol vocabulary and the per-type counts make, took ~1 s of copies)
            return_embedding=True,
        )
        if shared:
            _POSTINGS.setdefault(self.index, _PostingsIndex(self._bm25_attr))
        else:
            self._local_postings = _PostingsIndex(self._bm25_attr)
        self.persist_path = persist_path
        self.header_field = header_field
        if shared and not self.storage and Path(persist_path).exists():
            self._load(Path(persist_path))

    # -- the two rules ---------------------------------------------------------------------------
    def _tokenize_bm25(self, text: str) -> list[str]:
        return tokenize(text)

    def _bm25_text(self, document: Document) -> str:
        header = document.meta.get(self.header_field) or ""
        return f"{header}\n{document.content}" if header else document.content or ""

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """Stock semantics (duplicate policy, incremental stats); tokens come from header + content."""
        if isinstance(documents, str) or any(not isinstance(doc, Document) for doc in documents):
            raise ValueError("Please provide a list of Documents.")
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        index = self._postings
        written = 0
        for document in documents:
            if document.id in self.storage:
                if policy == DuplicatePolicy.FAIL:
                    raise DuplicateDocumentError(f"ID '{document.id}' already exists.")
                if policy == DuplicatePolicy.SKIP:
                    continue
                self.delete_documents([document.id])
            stored = Document(id=document.id, content=document.content, meta=dict(document.meta))
            self.storage[document.id] = stored
            written += 1
            index.version += 1
            if stored.content is None:
                continue
            tokens = self._tokenize_bm25(self._bm25_text(stored))
            freq = Counter(tokens)
            synced = index.in_sync(self._bm25_attr)
            self._bm25_attr[stored.id] = BM25DocumentStats(freq, len(tokens))
            if synced:
                index.add(stored.id, freq)
            else:
                index.n_docs = -1
            self._freq_vocab_for_idf.update(set(tokens))
            n_docs = len(self._bm25_attr)
            self._avg_doc_len = (len(tokens) + self._avg_doc_len * (n_docs - 1)) / n_docs
        return written

    def delete_documents(self, document_ids: list[str]) -> None:
        """Stock semantics; the inverted index drops the deleted documents' postings."""
        index = self._postings
        for doc_id in document_ids:
            if doc_id not in self.storage:
                continue
            stats = self._bm25_attr.get(doc_id)
            synced = index.in_sync(self._bm25_attr)
            super().delete_documents([doc_id])
            index.version += 1
            if stats is None:
                continue
            if synced:
                index.remove(doc_id, stats.freq_token)
            else:
                index.n_docs = -1

    def delete_all_documents(self) -> None:
        """Stock semantics; the inverted index starts over empty."""
        super().delete_all_documents()
        fresh = _PostingsIndex(self._bm25_attr)
        fresh.version = self._postings.version + 1
        if self._shared:
            _POSTINGS[self.index] = fresh
        else:
            self._local_postings = fresh

    # -- fast BM25 retrieval ---------------------------------------------------------------------
    @property
    def _postings(self) -> _PostingsIndex:
        if not self._shared:
            return self._local_postings
        index = _POSTINGS.get(self.index)
        if index is None:
            index = _POSTINGS[self.index] = _PostingsIndex(self._bm25_attr)
        return index

    def bm25_retrieval(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10, scale_score: bool = False
    ) -> list[Document]:
        """Stock ``bm25_retrieval`` results (documents, scores, order), scoring only matching documents.

        Rule: with no ``filters`` only documents containing a query token are scored; documents
        without one score exactly 0 in every stock algorithm, so BM25L/BM25Plus drop them and
        BM25Okapi ranks them as zeros in storage order. With ``filters`` (and in the degenerate
        cases: empty query, empty or tokenless corpus, ``top_k`` < 1) the stock method runs.
        """
        stats = self._bm25_attr
        vocab = self._freq_vocab_for_idf
        algorithm = self.bm25_algorithm
        if (
            filters
            or not query
            or not isinstance(top_k, int)
            or top_k <= 0
            or not stats
            or not vocab
            or self._avg_doc_len == 0
            or getattr(self.bm25_algorithm_inst, "__name__", None) != _STOCK_SCORERS.get(algorithm)
        ):
            return super().bm25_retrieval(query=query, filters=filters, top_k=top_k, scale_score=scale_score)

        index = self._postings
        if not index.in_sync(stats):
            index.rebuild(stats)
        params = self.bm25_parameters
        k = params.get("k1", 1.5)
        b = params.get("b", 0.75)
        norm, position = self._doc_cache(index, b)
        postings = index.postings
        n_corpus = len(stats)
        # The stock scorers build the IDF as a dict over the query tokens: duplicates collapse and
        # terms are summed in first-occurrence order (kept here so the float sums are identical).
        tokens = dict.fromkeys(self._tokenize_bm25(query))
        scores: dict[str, float] = {}
        get = scores.get
        if algorithm == "BM25L":
            delta = params.get("delta", 0.5)
            for token in tokens:
                n = vocab.get(token, 0)
                bucket = postings.get(token)
                if not n or not bucket:
                    continue
                idf = math.log((n_corpus + 1.0) / (n + 0.5)) * int(n != 0)
                for doc_id, tf in bucket.items():
                    ctd = tf / norm[doc_id]
                    scores[doc_id] = get(doc_id, 0.0) + idf * ((1.0 + k) * (ctd + delta) / (k + ctd + delta))
        elif algorithm == "BM25Plus":
            delta = params.get("delta", 1.0)
            for token in tokens:
                n = vocab.get(token, 0)
                bucket = postings.get(token)
                if not n or not bucket:
                    continue
                idf = math.log(1 + (n_corpus - n + 0.5) / (n + 0.5)) * int(n != 0)
                for doc_id, tf in bucket.items():
                    damped = tf * (1.0 + k) / (tf + k * norm[doc_id]) + delta
                    scores[doc_id] = get(doc_id, 0.0) + idf * damped
        else:
            eps = self._okapi_epsilon(index, params.get("epsilon", 0.25))
            for token in tokens:
                n = vocab.get(token)
                bucket = postings.get(token)
                if n is None or not bucket:
                    continue
                idf = math.log((n_corpus - n + 0.5) / (n + 0.5))
                if idf < 0:
                    idf = eps
                for doc_id, tf in bucket.items():
                    scores[doc_id] = get(doc_id, 0.0) + idf * (tf * (1.0 + k) / (tf + k * norm[doc_id]))

        ranked = _top([(d, s) for d, s in scores.items() if s > 0.0], top_k, position)
        if algorithm == "BM25Okapi" and len(ranked) < top_k:
            # Stock keeps non-positive Okapi scores: every other document with content scores 0
            # and ranks next in storage order, then the negative ones.
            for doc_id, doc in self.storage.items():
                if len(ranked) == top_k:
                    break
                if doc.content is None:
                    continue
                score = get(doc_id)
                if score is None or score == 0.0:
                    ranked.append((doc_id, 0.0 if score is None else score))
            if len(ranked) < top_k:
                negative = [(d, s) for d, s in scores.items() if s < 0.0]
                ranked.extend(_top(negative, top_k - len(ranked), position))

        return [self._scored_copy(self.storage[doc_id], score, scale_score) for doc_id, score in ranked]

    def _doc_cache(self, index: _PostingsIndex, b: float) -> tuple[dict[str, float], dict[str, int]]:
        """Per document: the stock length normalisation ``1 - b + b * doc_len / avgdl`` and the
        storage position (the stock tie order). Recomputed once per write/delete."""
        avg = self._avg_doc_len
        key = (index.version, b, avg, len(self._bm25_attr), len(self.storage))
        cached = index.doc_cache
        if cached is None or cached[0] != key:
            norm = {doc_id: 1 - b + b * st.doc_len / avg for doc_id, st in self._bm25_attr.items()}
            position = {doc_id: i for i, doc_id in enumerate(self.storage)}
            cached = index.doc_cache = (key, norm, position)
        return cached[1], cached[2]

    def _okapi_epsilon(self, index: _PostingsIndex, epsilon: float) -> float:
        """The stock Okapi floor for negative IDFs (``epsilon`` × mean IDF over the whole vocabulary),
        computed exactly as the stock code does but once per write/delete instead of per query."""
        vocab = self._freq_vocab_for_idf
        n_corpus = len(self._bm25_attr)
        key = (index.version, epsilon, n_corpus, len(vocab))
        cached = index.okapi_cache
        if cached is None or cached[0] != key:
            sum_idf = 0.0
            for n in vocab.values():
                sum_idf += math.log((n_corpus - n + 0.5) / (n + 0.5))
            cached = index.okapi_cache = (key, epsilon * sum_idf / len(vocab))
        return cached[1]

    def _scored_copy(self, document: Document, score: float, scale_score: bool) -> Document:
        """A new Document with ``score``, built as the stock ``bm25_retrieval`` builds it."""
        if not self.return_embedding:
            document = replace(document, embedding=None)
        if scale_score:
            score = expit(score / BM25_SCALING_FACTOR)
        fields = document.to_dict()
        fields["score"] = score
        if not self.return_embedding and "embedding" in fields:
            fields.pop("embedding")
        return Document.from_dict(fields)

    # -- persistence -----------------------------------------------------------------------------
    def save(self, path: str | None = None) -> None:
        """Write every document (content + meta) atomically to ``path`` or ``persist_path``."""
        target = Path(path or self.persist_path or "")
        if not str(target):
            raise ValueError("CodeBM25DocumentStore.save needs a path")
        target.parent.mkdir(parents=True, exist_ok=True)
        stats = self._bm25_attr

        def entry(doc: Document) -> dict[str, Any]:
            out = {"id": doc.id, "content": doc.content, "meta": doc.meta}
            if doc.id in stats:  # saves re-tokenizing every document on load
                out["tf"], out["len"] = stats[doc.id].freq_token, stats[doc.id].doc_len
            return out

        payload = {"format": FORMAT, "documents": [entry(d) for d in self.storage.values()]}
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_bytes(orjson.dumps(payload))  # ~10x the stdlib's speed on a 70 MB store
        os.replace(tmp, target)

    def _load(self, path: Path) -> None:
        # tens of thousands of small objects: the cyclic GC would rescan them all many times over
        # (it tripled the load time); none of them form cycles
        collect = gc.isenabled()
        gc.disable()
        try:
            try:
                payload = orjson.loads(path.read_bytes())
                if payload.get("format") not in (1, FORMAT):
                    raise ValueError(f"unsupported BM25 store format {payload.get('format')!r}")
                entries = payload["documents"]
                docs = [Document(id=d["id"], content=d["content"], meta=d["meta"]) for d in entries]
                known = [(d["tf"], d["len"]) if "tf" in d else None for d in entries]
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:  # JSONDecodeError too
                raise ValueError(
                    f"the BM25 store {path} cannot be read, rebuild the index with "
                    f"`codeground index PATH --full` ({type(exc).__name__}: {exc})"
                ) from exc
            if all(k is not None or d.content is None for d, k in zip(docs, known, strict=True)):
                self._restore(docs, known)
            else:  # format 1: tokenize again
                self.write_documents(docs, policy=DuplicatePolicy.OVERWRITE)
        finally:
            if collect:
                gc.enable()

    def _restore(self, docs: list[Document], known: list[tuple[dict[str, int], int] | None]) -> None:
        """Fill an empty store from saved documents and their saved term frequencies (no tokenizing)."""
        storage, stats, vocab = self.storage, self._bm25_attr, self._freq_vocab_for_idf
        total = 0
        for doc, saved in zip(docs, known, strict=True):
            storage[doc.id] = doc
            if saved is None:
                continue
            freq, length = Counter(saved[0]), int(saved[1])
            stats[doc.id] = BM25DocumentStats(freq, length)
            vocab.update(freq.keys())
            total += length
        self._avg_doc_len = total / len(stats) if stats else 0.0
        # the inverted index is now out of sync with the stats: the first retrieval builds it, so a
        # process that only updates the store (an incremental index run) never pays for it
        self._postings.n_docs = -1

    # -- serialization ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            persist_path=self.persist_path,
            header_field=self.header_field,
            bm25_algorithm=self.bm25_algorithm,
            bm25_parameters=self.bm25_parameters,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeBM25DocumentStore:
        return default_from_dict(cls, data)
