"""The ``codeground`` command line (Typer): ``cli`` and ``main``, the console script's entry point."""

from codeground.app.cli.root import cli, main

__all__ = ["cli", "main"]
