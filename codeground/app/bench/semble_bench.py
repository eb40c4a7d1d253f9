"""`codeground bench --semble DIR`: semble's code-search benchmark, run in-process.

``DIR`` is laid out as ``../shared/bench-data/semble`` is (its README): ``repos.json``,
``annotations/<name>.json``, ``repos/<name>/<benchmark_root>/`` and ``published.json``. Each benchmark
root is indexed with the index pipeline into ``<work_dir>/<name>/index`` (incrementally: an
up-to-date index is reused, unless ``reindex``), every annotated query is searched with one
``QueryEngine`` per repository and query pipeline, and the ranked results are scored by
``codeground.app.bench.semble_score`` beside semble's published figure. The annotations' paths are relative
to the checkout (``lib/application.js`` where the root is ``lib``), so results found under the root
are prefixed with it before they are scored (semble's own scorer gets there by also accepting a
target that ends with ``/`` + the result's path). Results of another system (semble
run on this machine, ``benchmarks/semble_side_by_side.py``) are scored by the same function.

Per repository the report also keeps the index run's in-process seconds and the warm search
latency (p50/p95 over every search after the first of that engine).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeground.app.bench.semble_score import Hit, Target, parse_target, score_query, summarise
from codeground.app.errors import CodegroundError

# the languages codeground indexes as code; the target of issue 56 is measured on their repositories
SIX_LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")


@dataclass(frozen=True)
class Query:
    query: str
    category: str
    relevant: tuple[Target, ...]
    secondary: tuple[Target, ...]

    @property
    def targets(self) -> tuple[Target, ...]:
        return self.relevant + self.secondary


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    root: Path
    queries: tuple[Query, ...]
    prefix: str = ""  # the benchmark root inside the checkout ("" = the whole checkout)

    def hit(self, file_path: str, start_line: int, end_line: int) -> Hit:
        """A result found under ``root`` as a hit relative to the checkout, as the targets are."""
        path = file_path.replace("\\", "/")
        return Hit(f"{self.prefix}/{path}" if self.prefix else path, start_line, end_line)


def load_benchmark(
    data_dir: Path, *, languages: Sequence[str] | None = None, names: Sequence[str] | None = None
) -> list[Repo]:
    """The repositories of ``data_dir/repos.json`` (in its order) with their annotated queries,
    filtered to ``languages`` and ``names`` when given. A missing file or unknown filter value is a
    ``CodegroundError``."""
    listing = data_dir / "repos.json"
    if not listing.is_file():
        raise CodegroundError(f"no repos.json in {data_dir} (expected semble's benchmark layout)")
    specs = json.loads(listing.read_text())
    known_langs, known_names = {s["language"] for s in specs}, {s["name"] for s in specs}
    for given, known, what in ((languages, known_langs, "language"), (names, known_names, "repository")):
        unknown = sorted(set(given or ()) - known)
        if unknown:
            raise CodegroundError(
                f"unknown {what} {', '.join(unknown)}: choose from {', '.join(sorted(known))}"
            )
    repos = []
    for spec in specs:
        if (languages and spec["language"] not in languages) or (names and spec["name"] not in names):
            continue
        notes = data_dir / "annotations" / f"{spec['name']}.json"
        root = data_dir / "repos" / spec["name"] / (spec.get("benchmark_root") or "")
        if not notes.is_file() or not root.is_dir():
            raise CodegroundError(f"{spec['name']}: missing {notes if not notes.is_file() else root}")
        queries = tuple(
            Query(
                q["query"],
                q.get("category") or "semantic",
                tuple(parse_target(t) for t in q.get("relevant", [])),
                tuple(parse_target(t) for t in q.get("secondary", [])),
            )
            for q in json.loads(notes.read_text())
        )
        prefix = (spec.get("benchmark_root") or "").strip("/")
        repos.append(Repo(spec["name"], spec["language"], root, queries, prefix))
    return repos


def published_figures(data_dir: Path) -> dict[str, Any]:
    """semble's published per-repository figures (``published.json``'s ``repos``), or {}."""
    path = data_dir / "published.json"
    return json.loads(path.read_text()).get("repos", {}) if path.is_file() else {}


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q`` percentile (0 < q ≤ 100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 100)) - 1))]


def latency(seconds: Sequence[float]) -> dict[str, Any]:
    """Warm latency in ms: every search after the first."""
    warm = [s * 1000 for s in seconds[1:]]
    return {
        "searches": len(warm),
        "p50_ms": _round(percentile(warm, 50)),
        "p95_ms": _round(percentile(warm, 95)),
    }


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def index_repo(repo: Repo, index_dir: Path, index_pipeline: Path, *, reindex: bool = False) -> dict[str, Any]:
    """Index ``repo.root`` into ``index_dir`` (incremental unless ``reindex``): seconds and counts."""
    from codeground.app.index.indexing import run_index

    t0 = time.perf_counter()
    result = run_index(repo.root, index_dir, index_pipeline, full=reindex)
    return {
        "index_s": round(time.perf_counter() - t0, 2),
        "full": result.full,
        "up_to_date": result.up_to_date,
        "records": result.chunk_count,
        "records_by_type": result.records_by_type,
        "files_indexed": result.walk.get("indexed"),
    }


def hits_of(repo: Repo, documents: Sequence[Any]) -> list[Hit]:
    """Ranked documents (``meta`` file_path / start_line / end_line, relative to ``repo.root``) as hits."""
    return [
        repo.hit(d.meta["file_path"], int(d.meta.get("start_line") or 1), int(d.meta.get("end_line") or 0))
        for d in documents
    ]


def search_repo(engine: Any, repo: Repo, k: int = 10) -> tuple[list[list[Hit]], list[float]]:
    """Every query of ``repo`` searched once with ``engine``: ranked hits and wall seconds each."""
    ranked, seconds = [], []
    for q in repo.queries:
        t0 = time.perf_counter()
        result = engine.search(q.query, k=k)
        seconds.append(time.perf_counter() - t0)
        ranked.append(hits_of(repo, result.documents))
    return ranked, seconds


def run_codeground(
    repos: Sequence[Repo],
    work_dir: Path,
    index_pipeline: Path,
    pipelines: Sequence[Path],
    *,
    reindex: bool = False,
    on_stage: Callable[[str], None] = lambda stage: None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Index each repository and search its queries with each query pipeline.

    Returns the index runs by repository, and by pipeline name ``{repo: {"ranked", "latency"}}``.
    A repository whose index or engine fails is recorded with its error and empty results (all its
    queries score 0), so one unreadable language does not end the run.
    """
    from codeground.app.query.engine import QueryEngine

    indexes: dict[str, Any] = {}
    systems: dict[str, dict[str, Any]] = {p.name: {} for p in pipelines}
    for repo in repos:
        index_dir = work_dir / repo.name / "index"
        on_stage(f"{repo.name} ({repo.language}): index {repo.root}")
        try:
            indexes[repo.name] = index_repo(repo, index_dir, index_pipeline, reindex=reindex)
        except CodegroundError as exc:
            indexes[repo.name] = {"error": str(exc)}
        for pipeline in pipelines:
            empty = {"ranked": [[] for _ in repo.queries], "latency": latency([])}
            if "error" in indexes[repo.name]:
                systems[pipeline.name][repo.name] = empty
                continue
            on_stage(f"{repo.name}: {len(repo.queries)} queries with {pipeline.name}")
            try:
                ranked, seconds = search_repo(QueryEngine(index_dir, pipeline), repo)
            except CodegroundError as exc:
                systems[pipeline.name][repo.name] = {**empty, "error": str(exc)}
                continue
            systems[pipeline.name][repo.name] = {"ranked": ranked, "latency": latency(seconds)}
    return indexes, systems


def load_side_by_side(path: Path, repos: Sequence[Repo]) -> dict[str, Any]:
    """Another system's ranked results (``benchmarks/semble_side_by_side.py``'s JSON) for ``repos``.

    Queries are matched by position and checked by text; a repository the file lacks is left out.
    """
    data = json.loads(path.read_text())
    out: dict[str, Any] = {}
    for repo in repos:
        got = data.get("repos", {}).get(repo.name)
        if got is None:
            continue
        queries = got.get("queries", [])
        if [q["query"] for q in queries] != [q.query for q in repo.queries]:
            raise CodegroundError(f"{path}: the queries of {repo.name} differ from the annotations")
        out[repo.name] = {
            "ranked": [
                [repo.hit(h["file_path"], h["start_line"], h["end_line"]) for h in q["results"]]
                for q in queries
            ],
            "latency": got.get("latency", {}),
            "index_s": got.get("index_s"),
            "chunks": got.get("chunks"),
        }
    return out


def score_system(repos: Sequence[Repo], results: dict[str, Any]) -> dict[str, Any]:
    """One system's summary (``semble_score.summarise``) over the repositories it has results for,
    plus the mean over those in the six languages, and its per-query rows for the diagnostics."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for repo in repos:
        if repo.name not in results:
            continue
        ranked = results[repo.name]["ranked"]
        rows[repo.name] = [
            {"query": q.query, "category": q.category, **score_query(hits, q.targets)}
            for q, hits in zip(repo.queries, ranked, strict=True)
        ]
    summary = summarise(rows, {r.name: r.language for r in repos})
    six = [v["ndcg10"] for v in summary["repos"].values() if v["language"] in SIX_LANGUAGES]
    summary["six_languages"] = {"repos": len(six), "ndcg10": sum(six) / len(six) if six else None}
    for name, row in summary["repos"].items():
        row["latency"] = results[name].get("latency")
        if "error" in results[name]:
            row["error"] = results[name]["error"]
    return {"summary": summary, "rows": rows}


def published_summary(repos: Sequence[Repo], published: dict[str, Any]) -> dict[str, Any]:
    """semble's published figures over ``repos``, aggregated as ours are (same means)."""
    from statistics import fmean

    have = [r for r in repos if r.name in published]
    summary: dict[str, Any] = {"repos": {}, "by_language": {}, "by_category": {}}
    for r in have:
        pub = published[r.name]
        summary["repos"][r.name] = {
            "language": r.language,
            "ndcg10": pub["semble"],
            "by_category": pub.get("semble_by_category", {}),
            "chunks": pub.get("chunks"),
            "index_ms": pub.get("semble_index_ms"),
        }
    rows = summary["repos"].values()
    for lang in sorted({r["language"] for r in rows}):
        vals = [r["ndcg10"] for r in rows if r["language"] == lang]
        summary["by_language"][lang] = {"repos": len(vals), "ndcg10": fmean(vals)}
    for cat in ("architecture", "semantic", "symbol"):
        vals = [r["by_category"][cat] for r in rows if cat in r["by_category"]]
        if vals:
            summary["by_category"][cat] = fmean(vals)
    summary["overall"] = fmean(r["ndcg10"] for r in rows) if have else None
    six = [r["ndcg10"] for r in rows if r["language"] in SIX_LANGUAGES]
    summary["six_languages"] = {"repos": len(six), "ndcg10": fmean(six) if six else None}
    return summary


def run_semble_bench(
    data_dir: Path,
    work_dir: Path,
    index_pipeline: Path,
    pipelines: Sequence[Path],
    *,
    languages: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    side_by_side: Path | None = None,
    reindex: bool = False,
    on_stage: Callable[[str], None] = lambda stage: None,
) -> dict[str, Any]:
    """The whole run (module docstring): a report with one summary per system beside semble's
    published one; each system's per-query diagnostics are written to
    ``<work_dir>/diagnostics-<system>.json`` (their paths are in the report)."""
    from codeground.app.bench.semble_diagnostics import diagnostic_summary, query_rows
    from codeground.components.cpu import machine

    repos = load_benchmark(data_dir, languages=languages, names=names)
    if not repos:
        raise CodegroundError("no repository matches the filters")
    outside = load_side_by_side(side_by_side, repos) if side_by_side else None
    indexes, systems = run_codeground(
        repos, work_dir, index_pipeline, pipelines, reindex=reindex, on_stage=on_stage
    )
    if outside is not None:
        systems["semble-here"] = outside
    report: dict[str, Any] = {
        "machine": machine(),
        "data_dir": str(data_dir),
        "index_pipeline": str(index_pipeline),
        "pipelines": [str(p) for p in pipelines],
        "side_by_side": str(side_by_side) if side_by_side else None,
        "index": indexes,
        "systems": {},
        "published": published_summary(repos, published_figures(data_dir)),
    }
    work_dir.mkdir(parents=True, exist_ok=True)
    for name, results in systems.items():
        scored = score_system(repos, results)
        rows = [
            row
            for repo in repos
            if repo.name in scored["rows"]
            for row in query_rows(repo, results[repo.name]["ranked"], scored["rows"][repo.name])
        ]
        out = work_dir / f"diagnostics-{Path(name).stem}.json"
        out.write_text(json.dumps(rows, indent=1))
        summary = scored["summary"]
        summary["diagnostics"] = diagnostic_summary(repos, results)
        summary["diagnostics_file"] = str(out)
        report["systems"][name] = summary
    return report


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as a plain-text table: one NDCG@10 column per system and semble's published one,
    rows per repository, per language, per category, the six-language mean and overall."""
    names = list(report["systems"])
    cols = [*names, "published"]
    summaries = [*(report["systems"][n] for n in names), report["published"]]

    def cell(v: float | None) -> str:
        return f"{v:>12.3f}" if isinstance(v, float | int) else f"{'-':>12}"

    def get(s: dict, *path: str) -> float | None:
        for key in path:
            if not isinstance(s, dict) or key not in s:
                return None
            s = s[key]
        return s  # type: ignore[return-value]

    head = f"{'':<26}" + "".join(f"{c[:12]:>12}" for c in cols)
    lines = [head, "-" * len(head)]
    for name, idx in report["index"].items():
        lang = report["published"]["repos"].get(name, {}).get("language") or get(
            summaries[0], "repos", name, "language"
        )
        extra = (
            f"  index {idx['index_s']} s, {idx['records']} records"
            if "index_s" in idx
            else f"  {idx.get('error')}"
        )
        first = get(summaries[0], "repos", name, "latency") or {}
        if first.get("p50_ms") is not None:
            extra += f", warm p50/p95 {first['p50_ms']}/{first['p95_ms']} ms"
        lines.append(
            f"{name[:14]:<14} {str(lang)[:11]:<11}"
            + "".join(cell(get(s, "repos", name, "ndcg10")) for s in summaries)
            + extra
        )
    lines.append("")
    for lang in sorted({lang for s in summaries for lang in s["by_language"]}):
        lines.append(f"{lang:<26}" + "".join(cell(get(s, "by_language", lang, "ndcg10")) for s in summaries))
    lines.append("")
    for cat in ("architecture", "semantic", "symbol"):
        lines.append(f"{cat:<26}" + "".join(cell(get(s, "by_category", cat)) for s in summaries))
    six = get(summaries[0], "six_languages", "repos")
    lines.append(
        f"{f'six languages ({six} repos)':<26}"
        + "".join(cell(get(s, "six_languages", "ndcg10")) for s in summaries)
    )
    lines.append(f"{'overall':<26}" + "".join(cell(get(s, "overall")) for s in summaries))
    for name in names:
        d = report["systems"][name]["diagnostics"]
        lines.append(
            f"{name}: symbol queries with the defining file first {d['symbol_first_file']}, "
            f"{d['distinct_files_top10']} distinct files in the top 10, docs/tests share for code "
            f"questions {d['docs_share_top10']}/{d['tests_share_top10']}, none found {d['missed']}; "
            f"per query: {report['systems'][name]['diagnostics_file']}"
        )
    return lines
