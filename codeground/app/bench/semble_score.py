"""The scorer of semble's code-search benchmark: NDCG@10 as its ``benchmarks/run_benchmark.py`` computes it.

One function scores every system (codeground's pipelines and semble run here side by side), so the
columns of ``codeground bench --semble`` differ only in the ranked results they were given.

The rules (``../shared/bench-data/semble/README.md``, checked against semble's ``benchmarks/data.py``
and ``metrics.py``):

- targets = ``relevant`` + ``secondary``; a target is a path relative to the benchmark root, or a
  path with a 1-based inclusive line span;
- a target's rank is the 1-based position of the first of the top-10 results whose path equals the
  target's path or ends with ``/`` + it and, when the target has lines, whose span overlaps them;
- gains are binary *per position*: two targets first found by the same result count once (semble
  sets ``relevances[rank - 1] = 1``), so a query's NDCG never exceeds 1;
- n_relevant = len(relevant + secondary): the published figures (``published.json``,
  ``source.metric``: run_benchmark.py at 2018720) count every target, whether or not the index
  holds it (a later semble revision counts only targets some chunk of its index covers);
- NDCG@10 = DCG / ideal DCG of min(10, n_relevant) hits, DCG = Σ 1/log2(rank + 1);
- a repository's figure is the mean over its queries, a language's the mean over its repositories,
  the overall figure the mean over repositories, and a category's the mean over repositories of
  their per-category means (a repository without queries of that category does not count).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

K = 10
CATEGORIES = ("architecture", "semantic", "symbol")


@dataclass(frozen=True)
class Target:
    """An annotated answer: a path relative to the benchmark root, with or without a line span."""

    path: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def has_span(self) -> bool:
        return self.start_line is not None and self.end_line is not None

    def label(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}" if self.has_span else self.path


@dataclass(frozen=True)
class Hit:
    """One ranked result: its file (relative to the benchmark root) and 1-based inclusive lines."""

    file_path: str
    start_line: int
    end_line: int


def parse_target(raw: str | Mapping[str, Any]) -> Target:
    """A target as the annotations give it: a bare path, or ``{path, start_line, end_line}``."""
    if isinstance(raw, str):
        return Target(raw)
    start, end = raw.get("start_line"), raw.get("end_line")
    return Target(str(raw["path"]), None if start is None else int(start), None if end is None else int(end))


def path_matches(result_path: str, target_path: str) -> bool:
    """A result's path names the target's file when it equals it or ends with ``/`` + it."""
    result, target = result_path.replace("\\", "/"), target_path.replace("\\", "/")
    return result == target or result.endswith("/" + target)


def covers(hit: Hit, target: Target) -> bool:
    """A result covers a target when its path matches and, if the target has lines, its span overlaps."""
    if not path_matches(hit.file_path, target.path):
        return False
    if not target.has_span:
        return True
    return not (hit.end_line < target.start_line or hit.start_line > target.end_line)  # type: ignore[operator]


def target_rank(hits: Sequence[Hit], target: Target, k: int = K) -> int | None:
    """The 1-based position of the first of the top ``k`` results covering ``target``, or None."""
    for rank, hit in enumerate(hits[:k], 1):
        if covers(hit, target):
            return rank
    return None


def dcg(ranks: Iterable[int]) -> float:
    """Σ 1/log2(rank + 1) over distinct ranks: binary gain per position."""
    return sum(1.0 / math.log2(rank + 1) for rank in set(ranks))


def ndcg_at_k(ranks: Iterable[int], n_relevant: int, k: int = K) -> float:
    """DCG of the found ranks (within ``k``) over the ideal DCG of min(k, n_relevant) hits; 0 when
    there is nothing to find."""
    if n_relevant <= 0:
        return 0.0
    return dcg(r for r in ranks if 1 <= r <= k) / dcg(range(1, min(k, n_relevant) + 1))


def score_query(hits: Sequence[Hit], targets: Sequence[Target], k: int = K) -> dict[str, Any]:
    """One query's NDCG@k and the rank of each target (None: not in the top ``k``)."""
    ranks = [target_rank(hits, t, k) for t in targets]
    return {"ndcg": ndcg_at_k([r for r in ranks if r is not None], len(targets), k), "ranks": ranks}


def summarise(
    rows: Mapping[str, Sequence[Mapping[str, Any]]], languages: Mapping[str, str]
) -> dict[str, Any]:
    """Per repository, language, category and overall means (module docstring) of scored queries.

    ``rows`` maps a repository to its queries' ``{"ndcg", "category"}``; ``languages`` a repository
    to its language. Repositories without queries are left out of every mean.
    """
    repos: dict[str, Any] = {}
    for name, queries in rows.items():
        if not queries:
            continue
        by_cat = {
            c: fmean(q["ndcg"] for q in queries if q["category"] == c)
            for c in CATEGORIES
            if any(q["category"] == c for q in queries)
        }
        repos[name] = {
            "language": languages[name],
            "queries": len(queries),
            "ndcg10": fmean(q["ndcg"] for q in queries),
            "by_category": by_cat,
        }
    by_language: dict[str, Any] = {}
    for lang in sorted({r["language"] for r in repos.values()}):
        members = [r for r in repos.values() if r["language"] == lang]
        by_language[lang] = {"repos": len(members), "ndcg10": fmean(r["ndcg10"] for r in members)}
    by_category = {
        c: fmean(vals)
        for c in CATEGORIES
        if (vals := [r["by_category"][c] for r in repos.values() if c in r["by_category"]])
    }
    overall = fmean(r["ndcg10"] for r in repos.values()) if repos else 0.0
    return {
        "overall": overall,
        "by_category": by_category,
        "by_language": by_language,
        "repos": repos,
    }
