"""The servers: ``chat`` (Gradio), ``serve`` (HTTP on Hayhooks), ``mcp`` (stdio) and ``ollama serve``."""

from __future__ import annotations

from pathlib import Path

import typer

from codeground.app.cli.root import (
    INDEX_DIR_OPTION,
    PIPELINE_OPTION,
    REPO_OPTION,
    SYSTEM_PROMPT_OPTION,
    _answer_pipeline,
    _fail,
    _index_dir,
    _pipeline_files,
    _use_system_prompt,
)
from codeground.app.errors import CodegroundError


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


ollama_cli = typer.Typer(help="The local Ollama server codeground answers with.", no_args_is_help=True)


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
