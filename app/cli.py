"""The ``codeground`` command line (Typer).

Heavy imports (haystack, torch, chromadb) happen inside commands, so ``--help`` is instant.
Every failure a user can cause ends in one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import typer

import app  # noqa: F401 - sets telemetry env vars before anything else is imported
from app.errors import CodegroundError

cli = typer.Typer(
    name="codeground",
    help="Ask a code repository a question; get answers grounded in and cited from the repository.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

INDEX_DIR_HELP = "Index directory (default: <repo>/.codeground)."


@cli.callback()
def _root() -> None:
    """Ask a code repository a question; get answers grounded in and cited from the repository."""


def _fail(message: str, code: int = 1) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@cli.command()
def index(
    path: Path = typer.Argument(..., help="Repository checkout to index."),
    index_dir: Path | None = typer.Option(None, "--index-dir", help=INDEX_DIR_HELP),
    pipeline: Path | None = typer.Option(None, "--pipeline", help="Index pipeline YAML."),
    full: bool = typer.Option(False, "--full", help="Rebuild everything instead of only what changed."),
) -> None:
    """Index a repository: walk it, chunk it structurally, embed, and store (incremental)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from app.index_dir import default_index_dir
    from app.pipelines import DEFAULT_INDEX_PIPELINE

    console = Console(stderr=True)
    if not path.is_dir():
        _fail(f"not a directory: {path}")
    target = index_dir or default_index_dir(path)
    progress = Progress(TextColumn("[bold]indexing"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
                        TextColumn("{task.fields[records]} records"), TimeElapsedColumn(), console=console,
                        transient=True)
    task = None

    def on_walk(report: dict, n_todo: int) -> None:
        nonlocal task
        console.print(f"walked {report['seen']} files: {report['indexed']} to index, "
                      f"{sum(report['skipped'].values())} skipped; {n_todo} new or changed")
        task = progress.add_task("index", total=max(n_todo, 1), records=0)

    def on_progress(done: int, records: int) -> None:
        progress.update(task, completed=done, records=records)

    try:
        from app.indexing import run_index

        with progress:
            result = run_index(path, target, pipeline or DEFAULT_INDEX_PIPELINE, full=full,
                               on_walk=on_walk, on_progress=on_progress)
    except CodegroundError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted; the previous index is unchanged", code=130)
    _print_index_summary(result)


def _print_index_summary(result) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Console()
    walk = result.walk
    if result.up_to_date:
        out.print(f"index is up to date: {result.chunk_count} records in {result.index_dir}")
    else:
        mode = f"full rebuild ({result.reason})" if result.full else "incremental"
        out.print(f"{mode}: {result.processed_files} files processed, {result.deleted_files} deleted, "
                  f"{result.removed_records} records removed, {result.written_records} written")
    table = Table(title="index", show_header=False)
    table.add_row("files seen", str(walk["seen"]))
    table.add_row("files indexed", str(walk["indexed"]))
    for reason, count in sorted(walk["skipped"].items()):
        table.add_row(f"skipped: {reason}", str(count))
    for reason, count in sorted(walk.get("unparsed_counts", {}).items()):
        table.add_row(f"read, no records: {reason}", str(count))
    for stype, count in result.records_by_type.items():
        table.add_row(f"records: {stype}", str(count))
    table.add_row("records total", str(result.chunk_count))
    table.add_row("wall time", f"{result.seconds:.1f} s")
    table.add_row("peak memory", f"{_peak_rss_mb():.0f} MB")
    table.add_row("index dir", str(result.index_dir))
    out.print(table)


def main() -> None:
    """Console-script entry point."""
    try:
        cli()
    except CodegroundError as exc:  # pragma: no cover - commands catch their own
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
