"""The BM25 store passes Haystack's own DocumentStore test suites for what it supports (count,
write with every duplicate policy, delete, every filter operator)."""

from dataclasses import replace

import pytest
from haystack import Document
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.testing.document_store import (
    CountDocumentsTest,
    DeleteDocumentsTest,
    FilterDocumentsTest,
    WriteDocumentsTest,
)

from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore


class TestSQLiteBM25AgainstHaystackSuites(
    CountDocumentsTest, WriteDocumentsTest, DeleteDocumentsTest, FilterDocumentsTest
):
    @pytest.fixture
    def document_store(self, tmp_path):
        return SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))

    @staticmethod
    def assert_documents_are_equal(received: list[Document], expected: list[Document]):
        """The store keeps text and metadata, not vectors (Chroma keeps those): documents come back
        as written, without their embeddings, in storage order."""
        key = lambda d: d.id  # noqa: E731
        assert sorted(received, key=key) == sorted((replace(d, embedding=None) for d in expected), key=key)

    def test_write_documents(self, document_store):
        """The suite leaves the default policy to the store: here it is FAIL, as in Haystack's
        in-memory store."""
        doc = Document(content="test doc")
        assert document_store.write_documents([doc]) == 1
        self.assert_documents_are_equal(document_store.filter_documents(), [doc])
        with pytest.raises(DuplicateDocumentError):
            document_store.write_documents([doc])
