"""`codeground mcp`: the repository as MCP tools, over stdio, for editors and agents that spawn it.

Built on the ``mcp`` package's FastMCP. Four read-only tools (``codeground.app.serve.repo_tools``), each
returning structured JSON:

* ``search_code(question, k)``: ranked sources (path, lines, symbol, type, score, text) and notices;
* ``ask(question)``: the grounded answer, the ``path:start-end`` it cites, the sources it was given,
  the identifiers the grounding check found nowhere in the repository, and the notices;
* ``get_source(path, start_line, end_line)``: exact lines of a file the index holds (paths outside
  the repository, or not indexed, are refused: no tool reads anything else);
* ``find_symbol(name)``: the records of a symbol (``Class.method``, ``Type::method``, a bare name).

Rules:
- Parameters: every tool's input schema describes each parameter and carries its bounds (``k``: an
  integer from 1 to ``repo_tools.MAX_K``, strictly: no bool, float or string; lines from 1;
  non-empty strings), so a client sees them when it lists the tools and a call that breaks one is
  refused before anything runs.
- Results: ``structuredContent`` carries the exact values (a path as the index holds it, for
  ``get_source``). The text content (what many clients show, or give a model) is the same JSON with
  every one-line field (path, symbol, type, citation, notice, name) through ``escaping.one_line``
  and the multi-line ones (a record's text, the answer) through ``escaping.for_terminal``: a file
  name cannot split a line or reorder what the reader sees. A tool error is one line, ``one_line``.

Nothing writes, deploys or runs code. Every question goes through one ``EnginePool``, which opens the
index's live generation between questions, so a server started before ``codeground index`` answers
from the new generation on its next call (never mid-answer). The protocol owns stdout: whatever the
pipeline prints while a tool runs goes to stderr.

Usage (what an MCP client configuration runs): ``codeground mcp --repo PATH`` or
``codeground mcp --index-dir DIR [--pipeline YAML]``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from codeground.app.errors import CodegroundError
from codeground.app.query.engine import MAX_QUESTION_CHARS
from codeground.app.serve.repo_tools import (
    MAX_K,
    MAX_SOURCE_LINES,
    Answer,
    RepositoryTools,
    SearchResult,
    SourceLines,
    SymbolRecords,
)
from codeground.components.escaping import for_terminal, one_line

MULTI_LINE_FIELDS = frozenset({"text", "answer", "withheld"})
Question = Annotated[
    str,
    Field(
        description="the question or what to look for, in words or by name (Class.method)",
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
    ),
]


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While a tool runs, anything printed goes to stderr: stdout carries the protocol."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def readable(value: Any, key: str | None = None) -> Any:
    """``value`` (a result's JSON) with its strings escaped for reading (see the module docstring)."""
    if isinstance(value, dict):
        return {k: readable(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v, key) for v in value]
    if isinstance(value, str):
        return for_terminal(value) if key in MULTI_LINE_FIELDS else one_line(value)
    return value


def _tool(call: Callable[..., BaseModel]) -> Callable[..., Any]:
    """A tool body: its result as exact ``structuredContent`` and readable text; its one-line
    ``CodegroundError`` becomes the MCP tool error the client sees."""
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import TextContent

    def run(*args: Any, **kwargs: Any) -> CallToolResult:
        with _stdout_to_stderr():
            try:
                result = call(*args, **kwargs).model_dump(mode="json")
            except CodegroundError as exc:
                raise ToolError(one_line(exc)) from None
        text = json.dumps(readable(result), indent=2, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structuredContent=result)

    return run


def _param(description: str, **bounds: Any) -> Any:
    return Field(description=description, **bounds)


def build_server(index_dir: Path, pipeline: Path, tools: RepositoryTools | None = None):
    """The FastMCP server over ``index_dir`` answering with ``pipeline`` (through ``tools`` if given)."""
    from mcp.server.fastmcp import FastMCP

    tools = tools or RepositoryTools(index_dir, pipeline)
    server = FastMCP(
        "codeground",
        instructions=(
            "Answers about one code repository from its own source and docs. Use search_code to find "
            "where something is defined or explained, find_symbol for a named class/function/method, "
            "get_source to read exact lines, and ask for a grounded answer with citations."
        ),
    )

    @server.tool()
    def search_code(
        question: Question,
        k: Annotated[int, _param("how many sources to return", ge=1, le=MAX_K, strict=True)] = 8,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the repository (BM25 + embeddings + exact symbol lookup, fused and reranked) and
        return the k best sources with their path, line span, symbol, type, score and text."""
        return _tool(tools.search_code)(question, k)

    @server.tool()
    def ask(question: Question) -> Annotated[CallToolResult, Answer]:
        """Answer a question from the repository only, citing path:start-end for every source used;
        lists any identifier in the answer that the repository does not define."""
        return _tool(tools.ask)(question)

    @server.tool()
    def get_source(
        path: Annotated[
            str, _param("file path relative to the repository root, as search_code returns it", min_length=1)
        ],
        start_line: Annotated[int, _param("first line, 1-based", ge=1, strict=True)],
        end_line: Annotated[
            int,
            _param(f"last line, inclusive (at most {MAX_SOURCE_LINES} lines at a time)", ge=1, strict=True),
        ],
    ) -> Annotated[CallToolResult, SourceLines]:
        """Exact lines start_line..end_line (1-based, inclusive, at most 400) of an indexed file of
        the repository, path relative to its root as search_code returns it."""
        return _tool(tools.get_source)(path, start_line, end_line)

    @server.tool()
    def find_symbol(
        name: Annotated[
            str,
            _param("Class.method, a dotted path, Type::method, or a bare name", min_length=1, max_length=500),
        ],
    ) -> Annotated[CallToolResult, SymbolRecords]:
        """The indexed records of a symbol: Class.method, a dotted path, Type::method, or a bare name."""
        return _tool(tools.find_symbol)(name)

    return server


def serve_stdio(index_dir: Path, pipeline: Path) -> None:
    """Check the index and the YAML (one line if unusable), then serve over stdio until the client
    hangs up."""
    from codeground.app.query.engine import check_query

    check_query(index_dir, pipeline)  # no index, a bad YAML: the one-line error, before any model loads
    build_server(index_dir, pipeline).run("stdio")
