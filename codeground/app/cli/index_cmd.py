"""``codeground index``: the run with its progress bar (a line every 10 % in a log), the summary table,
the re-vote's background fill started after it, and which repository a bare ``codeground index``
updates (``indexed_repository``)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import typer

from codeground.app.cli.root import _fail, _index_pipeline_option
from codeground.app.errors import CodegroundError


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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

    from codeground.app.index.index_dir import default_index_dir
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


def indexed_repository(start: str | Path = ".", index_dir: str | Path | None = None) -> Path:
    """What ``codeground index`` without a path indexes: for ``--index-dir``, the repository its index
    was built from (its manifest's root); else the folder holding the index ``find_index_dir`` finds
    (from ``<repo>/src``, ``<repo>``, whose index a search there uses); else ``start``."""
    from codeground.app.index.index_dir import CURRENT, IndexDir, find_index_dir

    if index_dir is None:
        found = find_index_dir(start)
        # a CURRENT naming a lost generation still marks the repository's index, to be repaired there
        return found.parent if os.path.isfile(found / CURRENT) else Path(start).resolve()
    try:
        gen = IndexDir(index_dir).current()
    except OSError:  # unreadable: the run's own check of the folder says so in one line
        gen = None
    if gen is None:
        return Path(start).resolve()
    from codeground.app.index.manifest import Manifest

    manifest = Manifest.load(gen)
    root = Path(manifest.root) if manifest is not None else None
    if root is None or not root.is_dir():
        built = f"was built from {root}, which is not a folder now" if root else "does not say its repository"
        raise CodegroundError(
            f"the index in {index_dir} {built}: give the repository to index (codeground index PATH)"
        )
    return root
