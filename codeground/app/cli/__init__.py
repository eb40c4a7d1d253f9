"""The ``codeground`` command line (Typer): ``cli`` and ``main`` (the console script's entry point).

``root`` holds the app, the shared options and helpers; each command lives in the module of its group
(``index_cmd``, ``search``, ``query``, ``evaluate``, ``bench``, ``serve``, ``admin``) and is registered
here, in the order ``codeground --help`` lists them. Heavy imports stay inside the commands, so
``--help`` is instant.
"""

from codeground.app.cli import admin, bench, evaluate, index_cmd, query, search, serve
from codeground.app.cli.root import cli, main

cli.command()(index_cmd.index)
cli.command()(search.search)
cli.command("search-file")(evaluate.search_file)
cli.command("eval")(evaluate.eval_)
cli.command()(evaluate.compare)
cli.command()(query.query)
cli.command("eval-answers")(evaluate.eval_answers)
cli.command("fetch-model")(admin.fetch_model)
cli.command()(serve.chat)
cli.command()(bench.bench)
cli.command()(serve.serve)
cli.command()(serve.mcp)
cli.command()(admin.doctor)
cli.add_typer(admin.pipeline_cli, name="pipeline")
cli.add_typer(admin.embedder_cli, name="embedder")
cli.add_typer(admin.reranker_cli, name="reranker")
cli.add_typer(admin.cache_cli, name="cache")
cli.add_typer(serve.ollama_cli, name="ollama")

__all__ = ["cli", "main"]
