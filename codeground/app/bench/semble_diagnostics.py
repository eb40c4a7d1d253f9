"""Per-query diagnostics of a semble-benchmark run, for the ranking work that follows it.

For each query: its top-10 results (path and lines), its targets, the rank each was found at and its
NDCG@10. Summed over a system's queries (``diagnostic_summary``):

- ``symbol_first_file``: of the ``symbol`` queries, the share whose first result is in a file of a
  ``relevant`` target (the defining file first); ``symbol_first_hit`` the share whose first result
  covers a relevant target (its lines too, where the target has lines);
- ``distinct_files_top10``: the mean number of distinct files among the top 10;
- ``docs_share_top10`` / ``tests_share_top10``: over the queries whose targets are all code files
  (no Markdown/reStructuredText/text target), the share of top-10 results that are documentation
  files / test files (``is_doc`` / ``is_test``);
- ``missed``: the share of queries that found no target in their top 10.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from statistics import fmean
from typing import Any

from codeground.app.bench.semble_score import Hit, K, covers, path_matches

DOC_SUFFIXES = {".md", ".mdx", ".rst", ".txt", ".adoc"}
_TEST_DIRS = {"test", "tests", "__tests__", "testing", "spec", "specs", "testdata"}
_TEST_NAME = re.compile(
    r"(^test_.*\.py$)|(_test\.(py|go|rs)$)|(\.(test|spec)\.[cm]?[jt]sx?$)|(Tests?\.java$)|(^tests?\.rs$)"
)


def is_doc(path: str) -> bool:
    """A documentation file: Markdown, reStructuredText, AsciiDoc or plain text."""
    return PurePosixPath(path).suffix.lower() in DOC_SUFFIXES


def is_test(path: str) -> bool:
    """A test file: under a test folder, or named as tests are (``test_x.py``, ``x_test.go``,
    ``x.test.ts``, ``XTest.java``)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return bool(_TEST_DIRS.intersection(p.lower() for p in parts[:-1])) or bool(_TEST_NAME.search(parts[-1]))


def query_rows(repo: Any, ranked: Sequence[Sequence[Hit]], scored: Sequence[dict[str, Any]]) -> list[dict]:
    """One row per query of ``repo`` (a ``semble_bench.Repo``): top-10, targets, ranks, NDCG@10."""
    rows = []
    for q, hits, score in zip(repo.queries, ranked, scored, strict=True):
        rows.append(
            {
                "repo": repo.name,
                "language": repo.language,
                "query": q.query,
                "category": q.category,
                "ndcg10": round(score["ndcg"], 4),
                "top10": [f"{h.file_path}:{h.start_line}-{h.end_line}" for h in hits[:K]],
                "targets": [
                    {"target": t.label(), "relevant": i < len(q.relevant), "rank": rank}
                    for i, (t, rank) in enumerate(zip(q.targets, score["ranks"], strict=True))
                ],
            }
        )
    return rows


def _mean(values: list[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def diagnostic_summary(repos: Sequence[Any], results: dict[str, Any]) -> dict[str, Any]:
    """The module docstring's sums over every query of ``repos`` that ``results`` ranked."""
    first_file, first_hit, distinct, docs, tests, missed = [], [], [], [], [], []
    for repo in repos:
        if repo.name not in results:
            continue
        for q, hits in zip(repo.queries, results[repo.name]["ranked"], strict=True):
            top = list(hits[:K])
            distinct.append(len({h.file_path for h in top}))
            missed.append(float(not any(covers(h, t) for h in top for t in q.targets)))
            if q.category == "symbol":
                first = top[0] if top else None
                first_file.append(
                    float(
                        first is not None and any(path_matches(first.file_path, t.path) for t in q.relevant)
                    )
                )
                first_hit.append(float(first is not None and any(covers(first, t) for t in q.relevant)))
            if top and not any(is_doc(t.path) for t in q.targets):
                docs.append(sum(is_doc(h.file_path) for h in top) / len(top))
                tests.append(sum(is_test(h.file_path) for h in top) / len(top))
    return {
        "queries": len(distinct),
        "symbol_queries": len(first_file),
        "symbol_first_file": _mean(first_file),
        "symbol_first_hit": _mean(first_hit),
        "distinct_files_top10": _mean(distinct),
        "code_queries": len(docs),
        "docs_share_top10": _mean(docs),
        "tests_share_top10": _mean(tests),
        "missed": _mean(missed),
    }
