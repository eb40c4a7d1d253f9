"""Rerank with a local cross-encoder exported to OpenVINO IR once: the stock ranker's scores, without torch.

Rules:
- ``exported_cross_encoder`` exports a local Hugging Face sequence-classification folder with one
  label (``config.json``, ``model.safetensors``, ``tokenizer.json``; what ``codeground reranker
  build`` installs) to OpenVINO IR once per machine (``model_cache``: atomic folder, lock), keyed by
  the model files, the precision and the OpenVINO (and NNCF) versions, in a child process
  (``child_build``: the ranking process never holds torch). The IR takes ``input_ids``,
  ``attention_mask`` and ``token_type_ids`` (int64, ``[batch, tokens]``) and outputs one logit per
  pair (``[batch]``). Exporting needs torch and transformers; loading and ranking need neither.
- ``precision="int8"`` is static NNCF quantization (transformer preset) calibrated on pairs built
  from the committed ``calibration.json`` texts by a fixed rule: pair *k*'s query is the first
  non-blank line after text *k*'s header line (cut to 100 characters); its document is text *k*
  itself when *k* is even (a match) and text *k + 1* otherwise (a mismatch). Same inputs, same model.
- ``OpenVINOCrossEncoderRanker`` has the contract of the stock ``SentenceTransformersSimilarityRanker``:
  the query is ``query_prefix + query + query_suffix``; a document is ``document_prefix`` + the
  values of ``meta_fields_to_embed`` that are set (not None) and the content joined by
  ``embedding_separator``, + ``document_suffix``; documents are
  deduplicated by id (the highest score kept), scored (``sigmoid(logit * calibration_factor)`` when
  ``scale_score``, else the raw logit), sorted by score (ties in input order), kept when
  ``score >= score_threshold`` and cut to ``top_k``. The results are new Documents: inputs are never
  changed.
- A pair is at most ``max_length`` tokens: the query keeps its first ``max_length // 2`` tokens (cut
  at a token boundary), the document is truncated to fit (``only_second``). Pairs are sorted by
  length, scored ``batch_size`` (4) at a time on the CPU with the LATENCY hint, each batch padded
  (masked) to a multiple of 32 tokens (``openvino_encoder.PAD_TO_MULTIPLE``, the embedders' rule).
  Over the 95 vLLM dev questions' candidates (97 rankings, 24–26 pairs of 322 tokens on average, 19 % cut at
  512), batches of 16 padded to their longest pair wasted 22 % of the tokens. Batches of 4 padded to
  32 scored a question in 0.64 s instead of 0.75 s (bf16, 2-core Zen 4) and 1.29–1.35 s instead of
  1.51 s (f32 with oneDNN held to AVX2 on the same CPU), the logits equal to 6e-8 in f32. Every new
  ``[batch, tokens]`` shape is prepared once and kept: unpadded, a process scoring those questions
  twice grew by 260 MB (bf16) and 460 MB (f32); padded to 32, by 120 and 180 MB.
- ``model`` may be a hub id: its files are read from the local Hugging Face cache, downloaded once
  when they are not there and the hub can be reached (``codeground.components.hub.hub_folder``).
  ``query.yaml`` runs the stock ranker's model, ``cross-encoder/ms-marco-MiniLM-L-6-v2``, this way:
  through the stock ranker a cold ``codeground search`` with that model cached imported torch and
  sentence-transformers and took 10.5 s, about 1 GB; through this one 2.7 s, 470 MB (medians of 5
  alternated launches, 2-core EPYC Zen 4 computing in bf16, a MiniLM-size stand-in for the model,
  which cannot be downloaded here).
- The compiled model is kept per CPU beside the embedders' (``openvino_encoder.compile_kept``).
  It computes in the precision OpenVINO's CPU plugin picks for the CPU (``inference_precision``
  None): bf16 where the CPU computes it natively (AVX512_BF16, AMX), f32 elsewhere. Scoring 24
  candidates of about 300 tokens took 0.65–0.68 s in bf16 and 1.23–1.25 s in f32 on a 2-core Zen 4
  (16 pairs a batch, as before the batching rule above);
  bf16 moves the logits by rounding only (3e-4 at most on the stand-in). ``inference_precision="f32"``
  computes as torch's fp32 does on every CPU.

Usage:
```python
from haystack import Document
from codeground.components.rankers.openvino_cross_encoder import OpenVINOCrossEncoderRanker

ranker = OpenVINOCrossEncoderRanker(model="codeground-reranker", top_k=5, meta_fields_to_embed=["header"])
docs = [Document(content="def load_lora(path): ...", meta={"header": "File: lora.py"}),
        Document(content="Install it with pip install codeground", meta={"header": "File: README.md"})]
try:
    ranker.warm_up()  # exports the built reranker to OpenVINO once per machine
except FileNotFoundError as missing:  # no reranker built on this machine yet
    assert "codeground reranker build" in str(missing)
else:
    ranked = ranker.run(query="load a LoRA adapter", documents=docs)["documents"]
    assert len(ranked) == 2 and ranked[0].score >= ranked[1].score and docs[0].score is None
```
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from dataclasses import replace
from importlib.metadata import version
from math import inf
from pathlib import Path
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict

from codeground.components.embedders.child_build import in_child
from codeground.components.embedders.model_cache import (
    built_once,
    built_target,
    model_slug,
    source_fingerprint,
)
from codeground.components.embedders.openvino_encoder import PAD_TO_MULTIPLE, compile_kept
from codeground.components.hub import hub_folder, is_hub_id
from codeground.reranker.location import BUILT_RERANKER, resolve_reranker

logger = logging.getLogger(__name__)
CALIBRATION_FILE = Path(__file__).parents[1] / "embedders" / "calibration.json"
CALIBRATION_RULE = "pairs v1: query = first body line of text k; document = text k (even k) or k+1 (odd k)"
CALIBRATION_TOKENS = 256  # tokens per calibration pair
PRECISIONS = ("fp32", "int8")
# What a cross-encoder folder needs, its weights in either form (safetensors preferred), and what
# else its tokenizers read from a hub model.
NEEDED = ("config.json", "tokenizer.json")
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
HUB_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def _model_seq_length(model_dir: Path, default: int = 512) -> int:
    """The longest pair the model takes: its ``max_position_embeddings``."""
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return int(config.get("max_position_embeddings") or default)


def _fingerprint(model_dir: Path, precision: str, seq_len: int) -> str:
    extra: list[str | bytes] = [f"xenc|{precision}|{seq_len}|ov {version('openvino')}"]
    if precision == "int8":
        extra += [CALIBRATION_FILE.read_bytes(), CALIBRATION_RULE, str(CALIBRATION_TOKENS)]
        extra += [f"nncf {version('nncf')}"]
    return source_fingerprint(model_dir, *extra)


def exported_cross_encoder(model: str | Path, *, precision: str = "fp32") -> Path:
    """The folder holding ``model.xml`` + ``tokenizer.json`` for the cross-encoder ``model``, exporting
    it on first use on this machine."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    model_dir = Path(model).expanduser()
    if not all((model_dir / name).is_file() for name in NEEDED) or not any(
        (model_dir / name).is_file() for name in WEIGHTS
    ):
        raise FileNotFoundError(
            f"{model}: not a local cross-encoder folder "
            "(config.json, model.safetensors and tokenizer.json needed)"
        )
    seq_len = _model_seq_length(model_dir)
    fingerprint = _fingerprint(model_dir, precision, seq_len)
    target = built_target(model_dir, f"xenc-{precision}", fingerprint)

    def build(staging: Path) -> None:
        in_child(
            f"{__name__}:_export", model_dir=model_dir, out=staging, precision=precision, seq_len=seq_len
        )

    what = f"the OpenVINO {precision} export of the cross-encoder {model_slug(model_dir)}"
    return built_once(target, build, marker="model.xml", what=what)


def _hub_cross_encoder(model: str) -> Path:
    """Hub model ``model``'s snapshot folder with what ``exported_cross_encoder`` reads: its weights
    as safetensors, else (a model published without them, or cached that way) as ``pytorch_model.bin``."""
    try:
        return hub_folder(model, [*HUB_FILES, WEIGHTS[0]], required=(*NEEDED, WEIGHTS[0]))
    except OSError:
        return hub_folder(model, [*HUB_FILES, WEIGHTS[1]], required=(*NEEDED, WEIGHTS[1]))


def calibration_pairs() -> list[tuple[str, str]]:
    """The int8 calibration pairs (the module rule), built from ``calibration.json``."""
    texts = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))["texts"]
    pairs = []
    for k, text in enumerate(texts):
        body = [line.strip() for line in text.splitlines()[1:] if line.strip()]
        query = (body[0] if body else text.strip())[:100]
        pairs.append((query, text if k % 2 == 0 else texts[(k + 1) % len(texts)]))
    return pairs


def _export(model_dir: Path, out: Path, *, precision: str, seq_len: int) -> None:
    """Trace, (quantize) and save the cross-encoder into ``out``; run by ``in_child`` in its own process."""
    import openvino as ov
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForSequenceClassification

    classifier = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    if classifier.config.num_labels != 1:
        raise ValueError(f"{model_dir}: a cross-encoder has one label, not {classifier.config.num_labels}")

    class PairLogit(torch.nn.Module):
        """The classifier's one logit per pair: ``[batch, 1]`` squeezed to ``[batch]``."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: D102
            logits = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits
            return logits.squeeze(-1)

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(min(CALIBRATION_TOKENS, seq_len), strategy="longest_first")

    def features(pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
        return _padded(tokenizer.encode_batch(pairs), pad_id=0)

    example = {
        k: torch.from_numpy(v)
        for k, v in features([("load a lora", "def f(x): return x"), ("a query", "a short text")]).items()
    }
    with torch.no_grad():
        ir = ov.convert_model(
            PairLogit(classifier).eval(),
            example_input=example,
            input=[(name, [-1, -1], ov.Type.i64) for name in INPUT_NAMES],
        )
    if precision == "int8":
        import nncf

        pairs = calibration_pairs()
        ir = nncf.quantize(
            ir,
            nncf.Dataset([features([p]) for p in pairs]),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(pairs),
        )
    ov.save_model(ir, str(out / "model.xml"))
    shutil.copy2(model_dir / "tokenizer.json", out / "tokenizer.json")
    (out / "export.json").write_text(
        json.dumps({"source": str(model_dir), "precision": precision, "max_seq_length": seq_len}, indent=2)
    )


def _padded(
    encodings: list[Any], *, pad_id: int, multiple: int = 1, limit: int | None = None
) -> dict[str, np.ndarray]:
    """The model inputs for ``encodings`` (``tokenizers`` pair encodings), right-padded to the longest
    rounded up to a multiple of ``multiple``, but never past ``limit`` tokens (the model's longest)."""
    longest = max(len(e.ids) for e in encodings)
    rounded = -(-longest // multiple) * multiple
    width = rounded if limit is None else max(longest, min(rounded, limit))
    ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    types = np.zeros((len(encodings), width), dtype=np.int64)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def _unique(documents: list[Document]) -> list[Document]:
    """One document per id, the highest-scoring duplicate kept, in first-seen order (the stock rule)."""
    best: dict[str, Document] = {}
    for doc in documents:
        kept = best.get(doc.id)
        score = doc.score if doc.score is not None else -inf
        if kept is None or score > (kept.score if kept.score is not None else -inf):
            best[doc.id] = doc
    return list(best.values())


@component
class OpenVINOCrossEncoderRanker:
    """Drop-in for the stock ``SentenceTransformersSimilarityRanker``, running an OpenVINO export (see
    the module rules)."""

    def __init__(
        self,
        *,
        model: str = BUILT_RERANKER,
        top_k: int = 10,
        query_prefix: str = "",
        query_suffix: str = "",
        document_prefix: str = "",
        document_suffix: str = "",
        meta_fields_to_embed: list[str] | None = None,
        embedding_separator: str = "\n",
        scale_score: bool = True,
        calibration_factor: float = 1.0,
        score_threshold: float | None = None,
        precision: str = "fp32",
        inference_precision: str | None = None,
        max_length: int = 256,
        batch_size: int = 4,
    ) -> None:
        """
        :param model: ``codeground-reranker`` (the one ``codeground reranker build`` installs), the
            path of a local cross-encoder folder, or a hub id (``cross-encoder/ms-marco-MiniLM-L-6-v2``:
            its cached files, downloaded once when they are not cached and the hub can be reached).
        :param top_k: the most documents returned.
        :param query_prefix: text put before the query.
        :param query_suffix: text put after the query.
        :param document_prefix: text put before every document text.
        :param document_suffix: text put after every document text.
        :param meta_fields_to_embed: meta fields whose values are scored before the content.
        :param embedding_separator: joins the meta values and the content.
        :param scale_score: return ``sigmoid(logit * calibration_factor)`` instead of the raw logit.
        :param calibration_factor: multiplies the logit before the sigmoid.
        :param score_threshold: drop documents scoring below this.
        :param precision: ``fp32`` or ``int8`` (static NNCF quantization) export.
        :param inference_precision: OpenVINO's ``INFERENCE_PRECISION_HINT`` (``f32``, ``bf16``…); None
            leaves OpenVINO's choice for the CPU (see the module rules).
        :param max_length: tokens per query + document pair.
        :param batch_size: pairs per inference batch (after sorting by length; see the module rules).
        """
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, but got {top_k}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        if max_length < 8:
            raise ValueError(f"max_length must be at least 8 tokens, not {max_length}")
        if batch_size <= 0:
            raise ValueError(f"batch_size must be > 0, but got {batch_size}")
        self.model = model
        self.top_k = top_k
        self.query_prefix = query_prefix
        self.query_suffix = query_suffix
        self.document_prefix = document_prefix
        self.document_suffix = document_suffix
        self.meta_fields_to_embed = meta_fields_to_embed
        self.embedding_separator = embedding_separator
        self.scale_score = scale_score
        self.calibration_factor = calibration_factor
        self.score_threshold = score_threshold
        self.precision = precision
        self.inference_precision = inference_precision
        self.max_length = max_length
        self.batch_size = batch_size
        self._compiled: Any = None
        self._request: Any = None
        self._pair_tokenizer: Any = None
        self._query_tokenizer: Any = None
        self._pad_id = 0
        self._length = max_length
        self._seq_len = max_length
        self._lock = threading.Lock()

    def to_dict(self) -> dict[str, Any]:
        """Serialize (also when nested inside another component's init parameters)."""
        return default_to_dict(
            self,
            model=self.model,
            top_k=self.top_k,
            query_prefix=self.query_prefix,
            query_suffix=self.query_suffix,
            document_prefix=self.document_prefix,
            document_suffix=self.document_suffix,
            meta_fields_to_embed=self.meta_fields_to_embed,
            embedding_separator=self.embedding_separator,
            scale_score=self.scale_score,
            calibration_factor=self.calibration_factor,
            score_threshold=self.score_threshold,
            precision=self.precision,
            inference_precision=self.inference_precision,
            max_length=self.max_length,
            batch_size=self.batch_size,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenVINOCrossEncoderRanker:
        """Rebuild from :meth:`to_dict` output."""
        return default_from_dict(cls, data)

    def warm_up(self) -> None:
        """Export the model on first use on this machine, then compile it for the CPU."""
        if self._compiled is not None:
            return
        folder = resolve_reranker(self.model)
        if not (folder / "config.json").is_file() and is_hub_id(str(self.model)):
            folder = _hub_cross_encoder(str(self.model))
        if not (folder / "config.json").is_file():
            if str(self.model) == BUILT_RERANKER:
                raise FileNotFoundError(
                    f"no reranker built on this machine (nothing at {folder}); "
                    "run `codeground reranker build`"
                )
            raise FileNotFoundError(f"{folder}: no cross-encoder model folder there (config.json missing)")
        from tokenizers import Tokenizer

        exported = exported_cross_encoder(folder, precision=self.precision)
        seq_len = int(json.loads((exported / "export.json").read_text(encoding="utf-8"))["max_seq_length"])
        length = min(self.max_length, seq_len)
        pairs = Tokenizer.from_file(str(exported / "tokenizer.json"))
        padding = pairs.padding
        pairs.no_padding()  # batches are padded here (``_padded``, the module rules)
        pairs.enable_truncation(length, strategy="only_second")
        queries = Tokenizer.from_file(str(exported / "tokenizer.json"))
        queries.no_padding()
        queries.no_truncation()
        config = {"PERFORMANCE_HINT": "LATENCY"}
        if self.inference_precision:
            config["INFERENCE_PRECISION_HINT"] = self.inference_precision
        compiled = compile_kept(exported, config)
        self._pad_id = int(padding["pad_id"]) if padding else 0
        self._pair_tokenizer, self._query_tokenizer = pairs, queries
        self._length, self._seq_len = length, seq_len
        self._request = compiled.create_infer_request()
        self._compiled = compiled

    def _query_text(self, query: str) -> str:
        """``query`` cut at a token boundary to its first ``length // 2`` tokens (so the document fits)."""
        cap = self._length // 2
        encoding = self._query_tokenizer.encode(query, add_special_tokens=False)
        return query if len(encoding.ids) <= cap else query[: encoding.offsets[cap - 1][1]]

    def _document_text(self, doc: Document) -> str:
        fields = self.meta_fields_to_embed or []
        meta = [str(doc.meta[key]) for key in fields if doc.meta.get(key) is not None]
        return (
            self.document_prefix
            + self.embedding_separator.join([*meta, doc.content or ""])
            + self.document_suffix
        )

    def _logits(self, query: str, texts: list[str]) -> np.ndarray:
        encodings = self._pair_tokenizer.encode_batch([(query, t) for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        logits = np.empty(len(texts), dtype=np.float32)
        with self._lock:  # one infer request serves one caller at a time
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = [encodings[i] for i in chunk]
                self._request.infer(
                    _padded(batch, pad_id=self._pad_id, multiple=PAD_TO_MULTIPLE, limit=self._seq_len)
                )
                logits[chunk] = self._request.get_output_tensor(0).data.reshape(-1)
        return logits

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        documents: list[Document],
        top_k: int | None = None,
        scale_score: bool | None = None,
        calibration_factor: float | None = None,
        score_threshold: float | None = None,
    ) -> dict[str, list[Document]]:
        """New copies of ``documents`` with their scores for ``query``, best first (see the module rules)."""
        if not documents:
            return {"documents": []}
        if self._compiled is None:
            raise RuntimeError(
                "The component OpenVINOCrossEncoderRanker wasn't warmed up. "
                "Run 'warm_up()' before calling 'run()'."
            )
        top_k = self.top_k if top_k is None else top_k
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, but got {top_k}")
        scale_score = self.scale_score if scale_score is None else scale_score
        factor = self.calibration_factor if calibration_factor is None else calibration_factor
        threshold = self.score_threshold if score_threshold is None else score_threshold

        unique = _unique(documents)
        query_text = self._query_text(self.query_prefix + query + self.query_suffix)
        logits = self._logits(query_text, [self._document_text(d) for d in unique]).astype(np.float64)
        scores = 0.5 * (1.0 + np.tanh(logits * factor / 2.0)) if scale_score else logits  # stable sigmoid
        order = sorted(range(len(unique)), key=lambda i: -scores[i])
        ranked = [replace(unique[i], score=float(scores[i])) for i in order]
        if threshold is not None:
            ranked = [d for d in ranked if d.score >= threshold]
        return {"documents": ranked[:top_k]}
