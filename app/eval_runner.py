"""Run questions through query pipelines and score them (`search-file`, `eval`, `compare`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from app.errors import CodegroundError
from app.evaluation import Question, Span, latency_summary, load_questions, recall_at_ks
from app.manifest import Manifest
from app.pipelines import PIPELINES_DIR

VARIANT_ORDER = ("query.yaml", "hybrid_norerank.yaml", "bm25.yaml", "dense.yaml")


def default_variants() -> list[Path]:
    """Every query pipeline in pipelines/ (index pipelines excluded), the four core ones first."""
    found = sorted(p for p in PIPELINES_DIR.glob("*.yaml") if not p.name.startswith("index"))
    rank = {name: i for i, name in enumerate(VARIANT_ORDER)}
    return sorted(found, key=lambda p: (rank.get(p.name, len(rank)), p.name))


def guess_prefix(questions: list[Question], manifest: Manifest) -> str:
    """The part of the dataset's paths that lies above the indexed root (``data/raw/vllm-0.10.1/``).

    Found by stripping leading folders from gold paths until one names an indexed file.
    """
    for q in questions:
        for span in q.sources:
            parts = span.file_path.split("/")
            for i in range(len(parts)):
                if "/".join(parts[i:]) in manifest.files:
                    return "/".join(parts[:i]) + ("/" if i else "")
    return ""


def _span(doc) -> Span:
    return Span(doc.meta["file_path"], doc.meta["start_char"], doc.meta["end_char"])


def search_all(engine, questions: list[Question], k: int) -> tuple[dict[str, list[Span]], dict[str, Any]]:
    """Search every question once; returns results and the latencies (seconds) and notices seen."""
    results: dict[str, list[Span]] = {}
    latencies: list[float] = []
    notices: dict[str, None] = {}
    for q in questions:
        t0 = time.perf_counter()
        result = engine.search(q.question, k=k)
        latencies.append(time.perf_counter() - t0)
        results[q.question_id] = [_span(d) for d in result.documents]
        for notice in result.notices:
            notices.setdefault(notice.split(";")[0], None)
    return results, {"latencies": latencies, "notices": list(notices)}


def evaluate_pipelines(
    gold: str | Path,
    pipelines: list[Path],
    index_dir: str | Path,
    *,
    path_prefix: str | None = None,
    k: int = 10,
) -> list[dict[str, Any]]:
    """One row per pipeline: recall@1/3/5/10, oversize sources, warm retrieval latency, notices."""
    from app.query import QueryEngine

    questions = load_questions(gold, require_sources=True)
    if not questions:
        raise CodegroundError(f"{gold}: no questions")
    rows = []
    for path in pipelines:
        engine = QueryEngine(index_dir, path)
        prefix = path_prefix if path_prefix is not None else guess_prefix(questions, engine.manifest)
        engine.warm_up()
        engine.search(questions[0].question, k=k)  # first query pays lazy loads; not timed
        results, info = search_all(engine, questions, k)
        report = recall_at_ks(questions, results, path_prefix=prefix)
        rows.append(
            {
                "pipeline": Path(path).name,
                "questions": report.n_questions,
                "recall": report.recall,
                "oversize_sources": report.oversize_sources,
                "latency": latency_summary(info["latencies"]),
                "notices": info["notices"],
            }
        )
    return rows
