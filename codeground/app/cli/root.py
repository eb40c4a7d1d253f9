"""The root of the ``codeground`` command line (Typer): the ``cli`` app, ``main`` (the console script),
the options and helpers every command group shares (``_fail``, ``_index_dir``, ``_engine``,
``_answer_pipeline``, ``_use_system_prompt``…). The commands live one module per group beside it and
are registered, in the order ``--help`` lists them, by ``codeground.app.cli``.

Heavy imports (haystack, torch, chromadb) happen inside commands, so ``--help`` is instant.
Every failure a user can cause ends in one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import sys
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
