"""Measuring retrieval and answers from the command line: ``search-file``, ``eval``, ``compare`` and
``eval-answers``, and the recall table they (and ``bench``) print."""

from __future__ import annotations

from pathlib import Path

import typer

from codeground.app.cli.root import (
    INDEX_DIR_OPTION,
    JSON_REPORT_OPTION,
    PIPELINE_OPTION,
    PREFIX_OPTION,
    REPO_OPTION,
    SYSTEM_PROMPT_OPTION,
    _check_k,
    _engine,
    _fail,
    _index_dir,
    _pipeline_files,
    _use_system_prompt,
)
from codeground.app.errors import CodegroundError


def search_file(
    questions: Path = typer.Argument(..., help="Dataset JSON ({'rag_questions': [...]})."),
    out: Path = typer.Option(..., "--out", help="Where to write the search_results JSON."),
    k: int = typer.Option(10, "-k", help="Sources per question."),
    pipeline: Path | None = PIPELINE_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    repo: Path | None = REPO_OPTION,
    path_prefix: str | None = typer.Option(
        None, "--path-prefix", help="Prefix for written paths (default: guessed from the dataset)."
    ),
) -> None:
    """Search every question of a dataset file in one process; write the search_results format."""
    from codeground.app.bench.eval_runner import guess_prefix, search_all
    from codeground.app.bench.evaluation import load_questions, write_search_results
    from codeground.app.output_paths import check_output_file

    _check_k(k)
    try:
        check_output_file(out)
        qs = load_questions(questions, require_sources=False)
        engine = _engine(index_dir, repo, pipeline)
        prefix = path_prefix if path_prefix is not None else guess_prefix(qs, engine.manifest)
        results, _ = search_all(engine, qs, k)
        write_search_results(out, qs, results, k, path_prefix=prefix)
    except CodegroundError as exc:
        _fail(str(exc))
    typer.echo(f"wrote {len(qs)} results to {out}")


def eval_(
    gold: Path = typer.Argument(..., help="Dataset JSON with gold sources."),
    pipeline: list[Path] | None = typer.Option(
        None, "--pipeline", callback=_pipeline_files, help="Pipeline YAML; repeat to compare."
    ),
    index_dir: Path | None = INDEX_DIR_OPTION,
    repo: Path | None = REPO_OPTION,
    path_prefix: str | None = PREFIX_OPTION,
    as_json: Path | None = JSON_REPORT_OPTION,
) -> None:
    """Recall@1/3/5/10 (IoU > 0.05, sources <= 2000 chars) and latency, one row per pipeline."""
    _evaluate(gold, pipeline, index_dir, repo, path_prefix, as_json)


def compare(
    gold: Path = typer.Argument(..., help="Dataset JSON with gold sources."),
    pipeline: list[Path] | None = typer.Option(
        None,
        "--pipeline",
        callback=_pipeline_files,
        help="Pipeline YAMLs (default: every query YAML in pipelines/).",
    ),
    index_dir: Path | None = INDEX_DIR_OPTION,
    repo: Path | None = REPO_OPTION,
    path_prefix: str | None = PREFIX_OPTION,
    as_json: Path | None = JSON_REPORT_OPTION,
) -> None:
    """Compare pipeline YAMLs on the same questions in the same run: one table row per YAML."""
    from codeground.app.bench.eval_runner import default_variants

    _evaluate(gold, pipeline or default_variants(), index_dir, repo, path_prefix, as_json)


def _recall_table(title: str, rows: list[dict]):
    """One row per pipeline: recall@1/3/5/10, warm latency p50/p95, sources over 2,000 chars.

    A pipeline whose reranker had no opinion (model missing, LLM unreachable…) is starred and the
    caption says on how many questions: its figures are the fused order's, not a reranker's.
    """
    from rich.table import Table

    unranked = [
        f"{row['pipeline']}: reranker had no opinion on "
        f"{row['reranker_no_opinion']}/{row['questions']} questions"
        for row in rows
        if row.get("reranker_no_opinion")
    ]
    caption = f"* {'; '.join(unranked)} (those figures are the fused order's)" if unranked else None
    table = Table(title=f"{title}: recall@k (IoU > 0.05), warm retrieval latency", caption=caption)
    table.add_column("pipeline", no_wrap=True)
    for col in ("R@1", "R@3", "R@5", "R@10", "p50 ms", "p95 ms", ">2000 chars"):
        table.add_column(col, justify="right")
    for row in rows:
        r, lat = row["recall"], row["latency"]
        table.add_row(
            row["pipeline"] + ("*" if row.get("reranker_no_opinion") else ""),
            *(f"{r[k]:.3f}" for k in (1, 3, 5, 10)),
            f"{lat['p50']:.0f}",
            f"{lat['p95']:.0f}",
            str(row["oversize_sources"]),
        )
    return table


def _evaluate(gold, pipelines, index_dir, repo, path_prefix, as_json) -> None:
    import json

    from rich.console import Console

    from codeground.app.bench.eval_runner import evaluate_pipelines
    from codeground.app.output_paths import check_output_file
    from codeground.app.pipeline.loader import PIPELINES_DIR

    try:
        check_output_file(as_json)
        rows = evaluate_pipelines(
            gold,
            pipelines or [PIPELINES_DIR / "query.yaml"],
            _index_dir(index_dir, repo),
            path_prefix=path_prefix,
        )
    except CodegroundError as exc:
        _fail(str(exc))
    console = Console()
    console.print(_recall_table(f"{gold.name} ({rows[0]['questions']} questions)", rows))
    for row in rows:
        for notice in row["notices"]:
            console.print(f"{row['pipeline']}: {notice}", soft_wrap=True)
    if as_json:
        as_json.write_text(json.dumps(rows, indent=2))


def eval_answers(
    gold: Path = typer.Argument(..., help="Dataset JSON of questions the repository answers."),
    unanswerable: Path | None = typer.Option(
        None, "--unanswerable", help="Dataset JSON of questions the repository cannot answer."
    ),
    pipeline: Path | None = PIPELINE_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    repo: Path | None = REPO_OPTION,
    limit: int | None = typer.Option(None, "--limit", help="Only the first N questions of each file."),
    as_json: Path | None = JSON_REPORT_OPTION,
    system_prompt: Path | None = SYSTEM_PROMPT_OPTION,
    log: Path | None = typer.Option(
        None, "--log", help="Append each answer here (JSON lines); a rerun skips the questions in it."
    ),
) -> None:
    """Answers with the full pipeline: share naming invented identifiers (after and before a repair),
    repairs, refusals (and how many the evidence judge made without asking the model), LLM failures,
    latency. With --log an interrupted run resumes."""
    import json

    from rich.console import Console
    from rich.table import Table

    from codeground.app.bench.eval_runner import evaluate_answers
    from codeground.app.bench.evaluation import load_questions
    from codeground.app.output_paths import check_output_file
    from codeground.app.pipeline.loader import PIPELINES_DIR

    if limit is not None and limit < 1:
        _fail(f"--limit must be positive, got {limit}")
    sets = [("answerable", gold)] + ([("unanswerable", unanswerable)] if unanswerable else [])
    rows = []
    try:
        check_output_file(as_json)
        check_output_file(log)
        _use_system_prompt(system_prompt)
        for name, path in sets:
            questions = load_questions(path, require_sources=False)[:limit]
            row = evaluate_answers(
                questions, pipeline or PIPELINES_DIR / "query.yaml", _index_dir(index_dir, repo), log=log
            )
            rows.append({"set": name, "file": str(path), **row})
    except CodegroundError as exc:
        _fail(str(exc))
    table = Table(title="answers: invented identifiers, refusals, correctness, latency")
    columns = ("set", "questions", "LLM failed", "≥1 unknown", "first ≥1 unknown", "repaired", "mean unknown")
    late = ("correct", "fact recall", "first token p50/p95 s", "load s")
    for col in (*columns, "refused", "not asked", "p50 s", "p95 s", *late):
        table.add_column(col, justify="right" if col != "set" else "left")
    for r in rows:
        lat, first = r["latency"], r["first_token"]
        table.add_row(
            r["set"],
            str(r["questions"]),
            str(r["llm_failures"]),
            f"{r['with_unknown']:.2f}",
            f"{r['first_with_unknown']:.2f}",
            str(r["repaired"]),
            f"{r['mean_unknown']:.2f}",
            f"{r['refused']}/{r['answered']}",
            str(r["not_asked"]),
            f"{(lat['p50'] or 0) / 1000:.1f}",
            f"{(lat['p95'] or 0) / 1000:.1f}",
            f"{r['correct']:.2f} of {r['with_facts']}",
            f"{r['fact_recall']:.2f}",
            f"{(first['p50'] or 0) / 1000:.1f}/{(first['p95'] or 0) / 1000:.1f}",
            f"{r['load_s'] or 0:.1f}",
        )
    Console().print(table)
    if as_json:
        as_json.write_text(json.dumps(rows, indent=2))
