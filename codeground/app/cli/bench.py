"""``codeground bench``: the vLLM benchmark, ``--languages``, ``--semble`` and ``--answers`` (the
reports are printed by ``bench_report``)."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from codeground.app.cli.bench_report import _print_answer_bench, _print_bench
from codeground.app.cli.evaluate import _recall_table
from codeground.app.cli.root import _answer_pipeline, _fail, _index_pipeline_option, _pipeline_files
from codeground.app.errors import CodegroundError


def bench(
    repo: Path | None = typer.Option(
        None, "--repo", help="Corpus (default: vLLM 0.10.1 from PyPI, fetched once)."
    ),
    gold_dir: Path | None = typer.Option(
        None, "--gold-dir", help="Folder with docs.json / code.json (default: ../shared/bench-data/vllm/dev)."
    ),
    work_dir: Path | None = typer.Option(
        None, "--work-dir", help="Cache for the corpus, index and report (default: ~/.cache/codeground)."
    ),
    pipeline: list[Path] | None = typer.Option(
        None, "--pipeline", callback=_pipeline_files, help="Query YAMLs (default: every variant)."
    ),
    skip_index: bool = typer.Option(
        False, "--skip-index", help="Reuse the benchmark index from a previous run."
    ),
    index_pipeline: Path | None = _index_pipeline_option("--index-pipeline"),
    reranker: bool = typer.Option(
        False,
        "--reranker",
        help="Also build codeground's own reranker (about 25 min) and measure recall with it.",
    ),
    languages: bool = typer.Option(
        False,
        "--languages",
        help="Instead of vLLM: index the TS/Go/Rust/Java corpora and a Python library with notebooks, "
        "and measure recall on their question sets.",
    ),
    language: list[str] | None = typer.Option(
        None,
        "--language",
        help="With --languages: only this language (typescript, go, rust, java, python); with --semble: "
        "only repositories of this language (repos.json's names).",
    ),
    qdrant: bool = typer.Option(
        False,
        "--qdrant",
        help="Also measure index_qdrant.yaml + query_qdrant.yaml (local mode) in the same run, and a "
        "scale simulation (the collection copied 10×).",
    ),
    semble: Path | None = typer.Option(
        None,
        "--semble",
        help="Instead of vLLM: semble's code-search benchmark in DIR (../shared/bench-data/semble's "
        "layout): NDCG@10 per repository, language and category beside semble's published figures "
        "(--pipeline default: query.yaml; --work-dir default: ~/.cache/codeground/semble-bench).",
    ),
    side_by_side: Path | None = typer.Option(
        None,
        "--side-by-side",
        help="With --semble: also score another system's ranked results (the JSON of "
        "benchmarks/semble_side_by_side.py) with the same scorer.",
    ),
    repo_name: list[str] | None = typer.Option(
        None, "--repo-name", help="With --semble: only this repository (repos.json's name)."
    ),
    reindex: bool = typer.Option(
        False, "--reindex", help="With --semble: index each repository from scratch, not incrementally."
    ),
    json_out: Path | None = typer.Option(
        None,
        "--json",
        help="With --semble or --answers: write the report here (default: <work-dir>/report.json, "
        "with --answers <work-dir>/bench/answers.json).",
    ),
    answers: bool = typer.Option(
        False,
        "--answers",
        help="Instead of recall: answers on a fixed list of dev and unanswerable questions, the model "
        "loaded once (time to first token, answer time, load, invented names shown, refusals, "
        "correctness) per --pipeline (default: the model `query` would choose here).",
    ),
    limit: int = typer.Option(
        16, "--limit", help="With --answers: the first N questions of each set (code, docs, unanswerable)."
    ),
    unanswerable: Path | None = typer.Option(
        None,
        "--unanswerable",
        help="With --answers: questions the repository cannot answer (default: vLLM's 20 of "
        "codeground/app/assets/vllm_unanswerable.json).",
    ),
) -> None:
    """Benchmark: full + incremental index, recall and latency per variant, cold start; JSON report."""
    import json

    if answers:
        _bench_answers(
            repo, gold_dir, work_dir, pipeline, skip_index, index_pipeline, limit, unanswerable, json_out
        )
        return
    if semble is not None:
        _bench_semble(
            semble, work_dir, index_pipeline, pipeline, language, repo_name, side_by_side, reindex, json_out
        )
        return

    if languages or language:
        _bench_languages(work_dir, index_pipeline, pipeline, language)
        return

    from codeground.app.bench.corpora import vllm_corpus
    from codeground.app.bench.eval_runner import default_variants
    from codeground.app.bench.runner import DEFAULT_CACHE, check_inputs, run_bench
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR

    cache = work_dir or DEFAULT_CACHE
    gold = gold_dir or PIPELINES_DIR.parent.parent / "shared" / "bench-data" / "vllm" / "dev"
    index_dir = cache / "bench" / "index"
    try:
        index_yaml = index_pipeline or DEFAULT_INDEX_PIPELINE
        variants = pipeline or default_variants(index_yaml)
        # before the corpus is fetched (run_bench checks the same for callers from Python; not again here)
        check_inputs(
            gold,
            index_yaml,
            variants,
            repo=repo,
            index_dir=index_dir if skip_index else None,
            cache=cache,
            need_code=qdrant,
        )
        corpus = repo or vllm_corpus(cache)
        report = run_bench(
            corpus,
            gold,
            index_dir,
            index_yaml,
            variants,
            skip_index=skip_index,
            cache=cache,
            reranker=_default_reranker_settings() if reranker else None,
            on_stage=lambda stage: typer.echo(f"[{time.strftime('%H:%M:%S')}] {stage}", err=True),
            checked=True,  # above, before the corpus was fetched
        )
        if qdrant:
            report["qdrant"] = _bench_qdrant(corpus, gold, cache)
    except CodegroundError as exc:
        _fail(str(exc))
    out = cache / "bench" / "report.json"
    out.write_text(json.dumps(report, indent=2))
    _print_bench(report)
    typer.echo(f"report: {out}")


def _bench_qdrant(corpus: Path, gold: Path, cache: Path) -> dict:
    from codeground.app.bench.evaluation import load_questions
    from codeground.app.bench.qdrant_bench import qdrant_side_by_side, scale

    def stage(text: str) -> None:
        typer.echo(f"[{time.strftime('%H:%M:%S')}] {text}", err=True)

    report = qdrant_side_by_side(corpus, gold, cache, on_stage=stage)
    questions = [q.question for q in load_questions(gold / "code.json", require_sources=False)]
    report["scale"] = scale(cache / "bench" / "qdrant-index", questions, on_stage=stage)
    return report


def _bench_languages(
    work_dir: Path | None, index_pipeline: Path | None, pipeline: list[Path] | None, only: list[str] | None
) -> None:
    import json

    from codeground.app.bench.corpora import LANGUAGE_CORPORA
    from codeground.app.bench.language_bench import run_language_bench
    from codeground.app.bench.runner import DEFAULT_CACHE, check_inputs
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
    from codeground.components.cpu import machine

    unknown = sorted(set(only or ()) - set(LANGUAGE_CORPORA))
    if unknown:
        _fail(f"unknown language {', '.join(unknown)}: choose from {', '.join(LANGUAGE_CORPORA)}")
    cache = work_dir or DEFAULT_CACHE
    pipelines = pipeline or [PIPELINES_DIR / "query.yaml", PIPELINES_DIR / "bm25.yaml"]
    try:
        # before any corpus is fetched or index deleted; each language brings its own questions
        check_inputs(None, index_pipeline or DEFAULT_INDEX_PIPELINE, pipelines, cache=cache)
        results = run_language_bench(
            cache,
            index_pipeline or DEFAULT_INDEX_PIPELINE,
            pipelines,
            languages=only,
            on_stage=lambda stage: typer.echo(f"[{time.strftime('%H:%M:%S')}] {stage}", err=True),
        )
    except CodegroundError as exc:
        _fail(str(exc))
    from rich.console import Console

    console = Console()
    for name, result in results.items():
        idx = result["index"]
        console.print(
            f"{name} ({result['corpus']}): {idx['files_by_language']} files of the language, "
            f"{idx['records']} records {idx['records_by_type']}, {idx['symbols']['all']} symbols, "
            f"unparsed {idx['unparsed'] or 0}, {idx['wall_s']} s wall"
        )
        console.print(_recall_table(name, result["retrieval"]))
    out = cache / "bench" / "languages" / "report.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine(), "languages": results}, indent=2))
    typer.echo(f"report: {out}")


def _bench_answers(
    repo: Path | None,
    gold_dir: Path | None,
    work_dir: Path | None,
    pipeline: list[Path] | None,
    skip_index: bool,
    index_pipeline: Path | None,
    limit: int,
    unanswerable: Path | None,
    json_out: Path | None,
) -> None:
    import json

    from codeground.app.bench.answer_bench import question_sets, run_answer_bench
    from codeground.app.bench.corpora import vllm_corpus
    from codeground.app.bench.runner import DEFAULT_CACHE
    from codeground.app.output_paths import check_output_file
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR

    if limit < 1:
        _fail(f"--limit must be positive, got {limit}")
    cache = work_dir or DEFAULT_CACHE
    gold = gold_dir or PIPELINES_DIR.parent.parent / "shared" / "bench-data" / "vllm" / "dev"
    index_dir = cache / "bench" / "index"
    out = json_out or cache / "bench" / "answers.json"

    def stage(text: str) -> None:
        typer.echo(f"[{time.strftime('%H:%M:%S')}] {text}", err=True)

    try:
        check_output_file(out)
        if repo is not None and not repo.is_dir():
            raise CodegroundError(f"--repo {repo} is not a folder")
        assets = Path(__file__).parent.parent / "assets" / "vllm_unanswerable.json"
        sets = question_sets(gold, unanswerable or (assets if gold_dir is None else None), limit)
        pipelines = [_answer_pipeline(p) for p in pipeline or [None]]  # a model not fetched is fetched
        if not (skip_index and (index_dir / "CURRENT").is_file()):
            from codeground.app.index.indexing import run_index

            corpus = repo or vllm_corpus(cache)
            stage(f"indexing {corpus} (incremental)")
            run_index(corpus, index_dir, index_pipeline or DEFAULT_INDEX_PIPELINE)
        from codeground.app.index import revote_fill

        if revote_fill.needed(index_dir):  # a user's index has them: `codeground index` fills them
            stage("the re-vote's vectors for every record (what `codeground index` fills in the background)")
            revote_fill.fill(index_dir, pipelines[0])
        report = run_answer_bench(index_dir, sets, pipelines, on_stage=stage)
    except CodegroundError as exc:
        _fail(str(exc))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    _print_answer_bench(report)
    typer.echo(f"report: {out}")


def _bench_semble(
    data_dir: Path,
    work_dir: Path | None,
    index_pipeline: Path | None,
    pipeline: list[Path] | None,
    language: list[str] | None,
    repo_name: list[str] | None,
    side_by_side: Path | None,
    reindex: bool,
    json_out: Path | None,
) -> None:
    import json

    from codeground.app.bench.runner import DEFAULT_CACHE
    from codeground.app.bench.semble_bench import report_lines, run_semble_bench
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR

    work = work_dir or DEFAULT_CACHE / "semble-bench"
    if side_by_side is not None and not side_by_side.is_file():
        _fail(f"no such file: {side_by_side}")
    try:
        report = run_semble_bench(
            data_dir,
            work,
            index_pipeline or DEFAULT_INDEX_PIPELINE,
            pipeline or [PIPELINES_DIR / "query.yaml"],
            languages=language,
            names=repo_name,
            side_by_side=side_by_side,
            reindex=reindex,
            on_stage=lambda stage: typer.echo(f"[{time.strftime('%H:%M:%S')}] {stage}", err=True),
        )
    except CodegroundError as exc:
        _fail(str(exc))
    out = json_out or work / "report.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    for line in report_lines(report):
        typer.echo(line)
    typer.echo(f"report: {out}")


def _default_reranker_settings():
    from codeground.reranker.build import BuildSettings

    return BuildSettings()
