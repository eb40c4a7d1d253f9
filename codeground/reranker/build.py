"""``codeground reranker build``: mine, train, check on held-out trees, install — or say it failed.

Rule: the build is reproducible from its settings (the listed trees, a seed, the step count) and
reports every count it depends on. It mines groups from ``train`` trees and from the disjoint
``check`` trees (``sources``), trains (``train``), scores the check groups (``heldout``) and installs
the model at ``codeground-reranker`` (``location``) only when its MRR@10 there beats BM25's own
order. Installing is atomic and locked (a reader sees the old model or the new one, never half of
one); ``build.json`` beside the weights says what it was trained on and how it scored. With
``out`` the model is written there instead and nothing is installed (the check is still run and
reported).

Usage:
```python
import tempfile
from codeground.reranker.build import BuildSettings, build_reranker

settings = BuildSettings(train=("click",), check=("tenacity",), max_per_tree=16, check_per_tree=8, steps=1)
with tempfile.TemporaryDirectory() as out:
    report = build_reranker(settings, out=out)
    assert report["pairs"]["train_groups"] > 0 and "reranker" in report["check"]
```
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.reranker.location import built_reranker_dir
from codeground.reranker.sources import CHECK_TREES, TRAIN_TREES, source_trees

BUILD_FILE = "build.json"


@dataclass(frozen=True)
class BuildSettings:
    """Everything a build depends on (written to ``build.json``)."""

    train: tuple[str, ...] = TRAIN_TREES
    check: tuple[str, ...] = CHECK_TREES
    seed: int = 0
    max_per_tree: int = 300  # training groups drawn per tree
    check_per_tree: int = 60  # held-out groups drawn per tree
    negatives: int = 4  # hard negatives per group (+ one in-batch)
    max_chars: int = 1200  # candidate text, as the ranker reads it
    steps: int = 200
    batch_size: int = 8
    max_length: int = 192  # tokens of question + candidate
    lr: float = 4e-5
    max_minutes: float = 25.0  # training stops here, saying so (the build's 30-minute budget)
    precision: str = "fp32"  # the OpenVINO export made for query time


def build_reranker(
    settings: BuildSettings = BuildSettings(),
    *,
    out: str | Path | None = None,
    on_line: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Run the build; returns its report. Raises ``CodegroundError`` when the check fails (installing
    nothing) or nothing could be mined."""
    from codeground.components.cpu import machine
    from codeground.reranker.heldout import mrr_at_10, torch_scorer
    from codeground.reranker.mining import mine
    from codeground.reranker.train import train_cross_encoder

    if set(settings.train) & set(settings.check):
        raise CodegroundError("the training and check trees must be disjoint")
    started = time.perf_counter()
    train_trees, check_trees = source_trees(settings.train), source_trees(settings.check)
    missing = sorted(
        (set(settings.train) | set(settings.check)) - {t.name for t in train_trees + check_trees}
    )
    if missing:
        on_line(f"not installed, skipped: {', '.join(missing)}")

    def mined(tree, groups) -> None:
        docs = sum(g.kind == "docs" for g in groups)
        on_line(
            f"mined {tree.name}: {len(groups)} questions ({docs} docs), {time.perf_counter() - started:.0f} s"
        )

    common = {"seed": settings.seed, "negatives": settings.negatives, "max_chars": settings.max_chars}
    train_groups = mine(train_trees, max_per_tree=settings.max_per_tree, on_tree=mined, **common)
    check_groups = mine(check_trees, max_per_tree=settings.check_per_tree, on_tree=mined, **common)
    if not train_groups or not check_groups:
        raise CodegroundError(
            "nothing to train or check on: no documented code was found in the listed trees"
        )
    pairs = {
        "train_groups": len(train_groups),
        "train_pairs": sum(1 + len(g.negatives) for g in train_groups),
        "train_docs_groups": sum(g.kind == "docs" for g in train_groups),
        "check_groups": len(check_groups),
    }
    on_line(
        f"{pairs['train_groups']} training questions, {pairs['train_pairs']} (question, candidate) pairs "
        f"+ in-batch negatives; {pairs['check_groups']} held-out questions"
    )
    mining_s = time.perf_counter() - started

    def step(done: int, steps: int, loss: float, seconds: float) -> None:
        if done == 1 or done % 10 == 0 or done == steps:
            eta = seconds / done * (steps - done)
            on_line(f"training step {done}/{steps}, loss {loss:.3f}, {seconds:.0f} s, ETA {eta:.0f} s")

    target = built_reranker_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = (
        Path(out)
        if out is not None
        else Path(tempfile.mkdtemp(prefix=".codeground-reranker-", dir=target.parent))
    )
    try:
        training = train_cross_encoder(
            train_groups,
            staging,
            steps=settings.steps,
            batch_size=settings.batch_size,
            max_length=settings.max_length,
            lr=settings.lr,
            seed=settings.seed,
            max_seconds=settings.max_minutes * 60,
            on_step=step,
        )
        if training["stopped_early"]:
            on_line(
                f"stopped at step {training['steps_done']}/{settings.steps}: "
                f"the {settings.max_minutes:g}-minute training budget is spent"
            )
        on_line(
            f"checking on {len(check_groups)} held-out questions ({', '.join(t.name for t in check_trees)})"
        )
        model_scores = torch_scorer(staging, max_length=settings.max_length)
        seen: dict[tuple[str, tuple[str, ...]], list[float]] = {}

        def scorer(query: str, texts: list[str]) -> list[float]:  # each group scored once for all figures
            key = (query, tuple(texts))
            if key not in seen:
                seen[key] = model_scores(query, texts)
            return seen[key]

        check = mrr_at_10(check_groups, scorer)
        check["by_kind"] = {
            kind: mrr_at_10([g for g in check_groups if g.kind == kind], scorer)
            for kind in ("code", "docs")
            if any(g.kind == kind for g in check_groups)
        }
        passed = check["reranker"] > check["bm25"]
        report = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {**machine(), "torch": version("torch")},
            "settings": dataclasses.asdict(settings),
            "trees": {
                "train": [t.name for t in train_trees],
                "check": [t.name for t in check_trees],
                "missing": missing,
            },
            "pairs": pairs,
            "training": training,
            "check": check,
            "passed": passed,
            "seconds": {"mining": round(mining_s, 1), "total": round(time.perf_counter() - started, 1)},
        }
        (staging / BUILD_FILE).write_text(json.dumps(report, indent=2), encoding="utf-8")
        verdict = "beats" if passed else "does NOT beat"
        on_line(
            f"held-out MRR@10: reranker {check['reranker']:.3f} {verdict} BM25's order {check['bm25']:.3f}"
        )
        if out is not None:
            return report
        if not passed:
            raise CodegroundError(
                f"the reranker did not beat BM25's order on held-out code (MRR@10 {check['reranker']:.3f} "
                f"vs {check['bm25']:.3f}); nothing installed"
            )
        _install(staging, target)
        report["installed"] = str(target)
        from codeground.components.rankers.openvino_cross_encoder import exported_cross_encoder

        on_line("exporting it to OpenVINO for query time (once per machine)")
        exported_cross_encoder(target, precision=settings.precision)
        on_line(f"installed {target} in {time.perf_counter() - started:.0f} s")
        return report
    finally:
        if out is None:
            shutil.rmtree(staging, ignore_errors=True)


def _install(staging: Path, target: Path) -> None:
    """Swap ``staging`` into ``target`` under a lock: the old model is renamed away, then removed."""
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}-old-{os.getpid()}")
            os.replace(target, old)
        os.replace(staging, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def installed_build() -> dict[str, Any] | None:
    """The installed reranker's ``build.json`` (None when none is built)."""
    path = built_reranker_dir() / BUILD_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
