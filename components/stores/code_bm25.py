"""A persisted BM25 store with identifier-aware tokens that also indexes the provenance header.

Stock ``InMemoryDocumentStore`` does BM25 over ``content`` with a regex tokenizer. Code search
needs two more things (DESIGN.md): tokens that split identifiers (``trust_remote_code`` also yields
``trust``, ``remote``, ``code``) and the ``File: … | Symbol: … | Type: …`` header indexed with the
text while the stored content stays the exact excerpt. This subclass changes only those two points
and adds persistence to one JSON file, so the stock ``InMemoryBM25Retriever`` works unchanged.
Stores opened on the same file in one process share their documents (loaded once).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from haystack import Document, default_from_dict, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.in_memory.document_store import BM25DocumentStats
from haystack.document_stores.types import DuplicatePolicy

from components.identifiers import tokenize

FORMAT = 1


def _file_key(path: str) -> str:
    """Identity of a persisted store file's current contents (path, size, mtime)."""
    resolved = Path(path).resolve()
    try:
        st = resolved.stat()
        return f"codeground-bm25:{resolved}:{st.st_size}:{st.st_mtime_ns}"
    except FileNotFoundError:
        return f"codeground-bm25:{resolved}:new"


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
            return_embedding=False,
        )
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
            if stored.content is None:
                continue
            tokens = self._tokenize_bm25(self._bm25_text(stored))
            self._bm25_attr[stored.id] = BM25DocumentStats(Counter(tokens), len(tokens))
            self._freq_vocab_for_idf.update(set(tokens))
            n_docs = len(self._bm25_attr)
            self._avg_doc_len = (len(tokens) + self._avg_doc_len * (n_docs - 1)) / n_docs
        return written

    # -- persistence -----------------------------------------------------------------------------
    def save(self, path: str | None = None) -> None:
        """Write every document (content + meta) atomically to ``path`` or ``persist_path``."""
        target = Path(path or self.persist_path or "")
        if not str(target):
            raise ValueError("CodeBM25DocumentStore.save needs a path")
        target.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "format": FORMAT,
            "documents": [{"id": d.id, "content": d.content, "meta": d.meta} for d in self.storage.values()],
        }
        tmp = target.with_suffix(target.suffix + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, ensure_ascii=False)
        os.replace(tmp, target)

    def _load(self, path: Path) -> None:
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
        if payload.get("format") != FORMAT:
            raise ValueError(f"{path}: unsupported BM25 store format {payload.get('format')!r}")
        docs = [Document(id=d["id"], content=d["content"], meta=d["meta"]) for d in payload["documents"]]
        self.write_documents(docs, policy=DuplicatePolicy.OVERWRITE)

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
