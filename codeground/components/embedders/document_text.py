"""The text a document embedder embeds: the stock sentence-transformers rule, in one place.

Rule: ``prefix`` + the values of ``meta_fields_to_embed`` that are set, then the content, joined by
``separator`` + ``suffix`` (what ``SentenceTransformersDocumentEmbedder`` embeds), so our embedders
give the vectors the stock one would for the same model.

Usage:
```python
from haystack import Document
from codeground.components.embedders.document_text import embedding_text

embedding_text(Document(content="def f(): ...", meta={"header": "File: a.py"}), ["header"], "\\n")
# 'File: a.py\\ndef f(): ...'
```
"""

from __future__ import annotations

from haystack import Document


def embedding_text(
    doc: Document, meta_fields: list[str], separator: str, prefix: str = "", suffix: str = ""
) -> str:
    """What is embedded for ``doc``."""
    values = [str(doc.meta[k]) for k in meta_fields if doc.meta.get(k) is not None]
    return prefix + separator.join([*values, doc.content or ""]) + suffix
