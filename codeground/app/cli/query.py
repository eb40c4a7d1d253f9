"""``codeground query``: the streamed answer, then the cited files, then the notices."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from codeground.app.cli.root import (
    INDEX_DIR_OPTION,
    PIPELINE_OPTION,
    REPO_OPTION,
    SYSTEM_PROMPT_OPTION,
    _answer_pipeline,
    _check_question,
    _engine,
    _fail,
    _index_dir,
    _print_notices,
    _source_line,
)
from codeground.app.errors import CodegroundError


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
