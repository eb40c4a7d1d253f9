"""``codeground search``: ranked sources for a question, no LLM (``--json``: the search_results format)."""

from __future__ import annotations

from pathlib import Path

import typer

from codeground.app.cli.root import (
    INDEX_DIR_OPTION,
    PIPELINE_OPTION,
    REPO_OPTION,
    _check_k,
    _check_question,
    _engine,
    _fail,
    _print_notices,
    _source_line,
)
from codeground.app.errors import CodegroundError


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
