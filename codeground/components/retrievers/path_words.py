"""Files a question names by their words: candidates that neither BM25 nor the vectors brought."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from codeground.components.file_ranking.path_words import path_share, path_words, question_words
from codeground.components.identifiers import tokenize
from codeground.components.query_shape import is_symbol_query
from codeground.components.stores.sqlite_bm25 import meta_rows


@component
class PathWordRetriever:
    """The best record of each of the ``top_files`` files whose name or folder spells most of the
    question's words.

    Rule: a file named after what the question asks about (``errors.go`` for "error types and
    per-request error collection", ``middleware/cors.py`` for "the CORS middleware") is a candidate
    even when its text shares few words with the question; the file-level prior
    (``file_ranking.path_words.PathWordPrior``) then weighs it with the others. Words and matching are
    that prior's (``path_share``: grammar words never count, "dependency" meets ``dependencies``);
    a file must match at least ``min_share`` of the words. The files matching the largest share come
    first, then the shallower path, then the path's order; of each file the record sharing most
    question words with its text is returned (then the earliest). A question that is one identifier
    is the symbol lookup's (nothing is returned). The store's paths are read once, at ``warm_up``.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.retrievers.path_words import PathWordRetriever
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    store.write_documents([
        Document(id="e", content="type Error struct{}", meta={"file_path": "errors.go", "start_line": 1}),
        Document(id="c", content="func (c *Context) Next()", meta={"file_path": "ctx.go", "start_line": 1}),
    ])
    found = PathWordRetriever(document_store=store).run(query="error types and their collection")
    assert [d.id for d in found["documents"]] == ["e"]
    ```
    """

    def __init__(self, *, document_store: Any, top_files: int = 3, min_share: float = 0.2) -> None:
        """
        :param document_store: the store holding every record (the BM25 store).
        :param top_files: the most files returned (one record each).
        :param min_share: the least share of the question's words a file's name must spell.
        """
        self.document_store = document_store
        self.top_files = top_files
        self.min_share = min_share
        self._files: dict[str, list[str]] | None = None  # path -> ids of its records, in line order
        self._names: dict[str, set[str]] = {}

    def warm_up(self) -> None:
        """Read every record's path once (without loading the records)."""
        if self._files is not None:
            return
        placed: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for doc_id, file_path, start_line in meta_rows(self.document_store, ["file_path", "start_line"]):
            if file_path:
                placed[file_path].append((start_line or 0, doc_id))
        self._files = {path: [i for _, i in sorted(rows)] for path, rows in placed.items()}
        self._names = {path: path_words(path) for path in self._files}

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict[str, list[Document]]:
        """One record of each file the question names, best named first."""
        words = question_words(query)
        if not words or is_symbol_query(query):
            return {"documents": []}
        self.warm_up()
        shares = []
        for path, names in self._names.items():
            share = path_share(words, names)
            if share >= self.min_share:
                shares.append((-share, path.count("/"), path))
        chosen = [path for _, _, path in sorted(shares)[: self.top_files]]
        if not chosen:
            return {"documents": []}
        ids = [i for path in chosen for i in (self._files or {})[path]]
        records = self.document_store.filter_documents(
            filters={"field": "id", "operator": "in", "value": ids}
        )
        by_file: dict[str, list[Document]] = defaultdict(list)
        for doc in records:
            by_file[doc.meta.get("file_path", "")].append(doc)
        terms = set(tokenize(query))
        out = []
        for path in chosen:
            order = {doc_id: n for n, doc_id in enumerate((self._files or {})[path])}
            docs = sorted(by_file.get(path, []), key=lambda d: order.get(d.id, 0))
            if docs:
                out.append(max(docs, key=lambda d: len(terms & set(tokenize(d.content or "")))))
        return {"documents": out}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self, document_store=self.document_store, top_files=self.top_files, min_share=self.min_share
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PathWordRetriever:
        return default_from_dict(cls, data)
