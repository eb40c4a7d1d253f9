"""`codeground mcp`: the repository as MCP tools, over stdio, for editors and agents that spawn it.

Built on the ``mcp`` package's FastMCP. Four read-only tools (``codeground.app.repo_tools``), each
returning structured JSON:

* ``search_code(question, k)``: ranked sources (path, lines, symbol, type, score, text) and notices;
* ``ask(question)``: the grounded answer, the ``path:start-end`` it cites, the sources it was given,
  the identifiers the grounding check found nowhere in the repository, and the notices;
* ``get_source(path, start_line, end_line)``: exact lines of a file the index holds (paths outside
  the repository, or not indexed, are refused: no tool reads anything else);
* ``find_symbol(name)``: the records of a symbol (``Class.method``, ``Type::method``, a bare name).

Nothing writes, deploys or runs code. Every question goes through one ``EnginePool``, which opens the
index's live generation between questions, so a server started before ``codeground index`` answers
from the new generation on its next call (never mid-answer). The protocol owns stdout: whatever the
pipeline prints while a tool runs goes to stderr.

Usage (what an MCP client configuration runs): ``codeground mcp --repo PATH`` or
``codeground mcp --index-dir DIR [--pipeline YAML]``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from codeground.app.errors import CodegroundError
from codeground.app.repo_tools import Answer, RepositoryTools, SearchResult, SourceLines, SymbolRecords

T = TypeVar("T")


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While a tool runs, anything printed goes to stderr: stdout carries the protocol."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _tool(call: Callable[..., T]) -> Callable[..., T]:
    """A tool body: its one-line ``CodegroundError`` becomes the MCP tool error the client sees."""
    from mcp.server.fastmcp.exceptions import ToolError

    def run(*args: Any, **kwargs: Any) -> T:
        with _stdout_to_stderr():
            try:
                return call(*args, **kwargs)
            except CodegroundError as exc:
                raise ToolError(str(exc)) from None

    return run


def build_server(index_dir: Path, pipeline: Path):
    """The FastMCP server over ``index_dir`` answering with ``pipeline``."""
    from mcp.server.fastmcp import FastMCP

    tools = RepositoryTools(index_dir, pipeline)
    server = FastMCP(
        "codeground",
        instructions=(
            "Answers about one code repository from its own source and docs. Use search_code to find "
            "where something is defined or explained, find_symbol for a named class/function/method, "
            "get_source to read exact lines, and ask for a grounded answer with citations."
        ),
    )

    @server.tool()
    def search_code(question: str, k: int = 8) -> SearchResult:
        """Search the repository (BM25 + embeddings + exact symbol lookup, fused and reranked) and
        return the k best sources with their path, line span, symbol, type, score and text."""
        return _tool(tools.search_code)(question, k)

    @server.tool()
    def ask(question: str) -> Answer:
        """Answer a question from the repository only, citing path:start-end for every source used;
        lists any identifier in the answer that the repository does not define."""
        return _tool(tools.ask)(question)

    @server.tool()
    def get_source(path: str, start_line: int, end_line: int) -> SourceLines:
        """Exact lines start_line..end_line (1-based, inclusive, at most 400) of an indexed file of
        the repository, path relative to its root as search_code returns it."""
        return _tool(tools.get_source)(path, start_line, end_line)

    @server.tool()
    def find_symbol(name: str) -> SymbolRecords:
        """The indexed records of a symbol: Class.method, a dotted path, Type::method, or a bare name."""
        return _tool(tools.find_symbol)(name)

    return server


def serve_stdio(index_dir: Path, pipeline: Path) -> None:
    """Check the index and the YAML (one line if unusable), then serve over stdio until the client
    hangs up."""
    from codeground.app.query import check_query

    check_query(index_dir, pipeline)  # no index, a bad YAML: the one-line error, before any model loads
    build_server(index_dir, pipeline).run("stdio")
