"""`codeground mcp`: the repository as MCP tools, over stdio, for editors and agents that spawn it.

Built on the ``mcp`` package's FastMCP. Four read-only tools, each returning structured JSON:

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
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from codeground.app.errors import CodegroundError

MAX_SOURCE_LINES = 400
T = TypeVar("T")


class Source(BaseModel):
    """One indexed record: where it is and what it says."""

    path: str = Field(description="file path relative to the repository root")
    start_line: int = Field(description="first line, 1-based")
    end_line: int = Field(description="last line, inclusive")
    symbol: str = Field(description="Class.method, a heading path, or the module")
    type: str = Field(description="api | impl | module | docs | notebook | text")
    score: float | None = Field(default=None, description="retrieval score (higher is better)")
    text: str = Field(description="the record's exact text")


class SearchResult(BaseModel):
    question: str
    searched_as: str = Field(description="the question as searched (a follow-up may be rewritten)")
    sources: list[Source]
    notices: list[str] = Field(description="what the pipeline had to say, e.g. a reranker it could not load")


class Answer(BaseModel):
    question: str
    answer: str | None = Field(description="the grounded answer (None when the LLM could not answer)")
    citations: list[str] = Field(description="path:start-end of every source the model was given")
    sources: list[Source]
    unknown_identifiers: list[str] = Field(description="names in the answer found nowhere in the repository")
    notices: list[str]


class SourceLines(BaseModel):
    path: str
    start_line: int
    end_line: int
    text: str = Field(description="the lines, exactly as in the indexed file")


class SymbolRecords(BaseModel):
    name: str
    records: list[Source]


def _source(doc: Any) -> Source:
    meta = doc.meta
    return Source(
        path=meta["file_path"],
        start_line=meta["start_line"],
        end_line=meta["end_line"],
        symbol=str(meta.get("symbol", "")),
        type=str(meta.get("source_type", "")),
        score=doc.score,
        text=doc.content or "",
    )


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While a tool runs, anything printed goes to stderr: stdout carries the protocol."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


class CodegroundTools:
    """The tools' logic, independent of the transport (tested directly and through a real client)."""

    def __init__(self, index_dir: Path, pipeline: Path) -> None:
        from codeground.app.ui import EnginePool

        self.index_dir = Path(index_dir)
        self.pipeline = Path(pipeline)
        self.pool = EnginePool(self.index_dir)

    def _engine(self):
        return self.pool.get(self.pipeline)

    def search_code(self, question: str, k: int = 8) -> SearchResult:
        if not 1 <= k <= 50:
            raise CodegroundError(f"k must be between 1 and 50, got {k}")
        result = self._engine().search(question, k=k)
        return SearchResult(
            question=question,
            searched_as=result.query,
            sources=[_source(d) for d in result.documents],
            notices=list(result.notices),
        )

    def ask(self, question: str) -> Answer:
        result = self._engine().answer(question)
        sources = [_source(d) for d in result.documents]
        return Answer(
            question=question,
            answer=result.answer,
            citations=[f"{s.path}:{s.start_line}-{s.end_line}" for s in sources],
            sources=sources,
            unknown_identifiers=list((result.grounding or {}).get("unknown", [])),
            notices=list(result.notices),
        )

    def get_source(self, path: str, start_line: int, end_line: int) -> SourceLines:
        from codeground.app.query import open_index

        _, manifest = open_index(self.index_dir)
        rel = PurePosixPath(path.replace("\\", "/"))
        if rel.is_absolute() or ".." in rel.parts or rel.as_posix() not in manifest.files:
            raise CodegroundError(
                f"{path}: not a file of the indexed repository (give a path as search returns it)"
            )
        root = Path(manifest.root).resolve()
        file = (root / rel).resolve()
        if root not in file.parents:
            raise CodegroundError(f"{path}: outside the repository")
        if start_line < 1 or end_line < start_line:
            raise CodegroundError(f"bad line range {start_line}-{end_line}: lines start at 1, end ≥ start")
        if end_line - start_line + 1 > MAX_SOURCE_LINES:
            raise CodegroundError(
                f"at most {MAX_SOURCE_LINES} lines at a time, asked for {end_line - start_line + 1}"
            )
        try:
            lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
        except (OSError, UnicodeDecodeError) as exc:
            raise CodegroundError(f"{path}: cannot be read ({type(exc).__name__})") from exc
        if start_line > len(lines):
            raise CodegroundError(f"{path} has {len(lines)} lines; asked for {start_line}-{end_line}")
        end = min(end_line, len(lines))
        return SourceLines(
            path=rel.as_posix(),
            start_line=start_line,
            end_line=end,
            text="".join(lines[start_line - 1 : end]),
        )

    def find_symbol(self, name: str) -> SymbolRecords:
        from codeground.app.query import open_index
        from codeground.components.identifiers import dotted
        from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

        wanted = dotted(name.strip().strip("`").removesuffix("()"))
        if not wanted:
            raise CodegroundError("the symbol name is empty")
        gen, _ = open_index(self.index_dir)
        store = SQLiteBM25DocumentStore(persist_path=str(gen / "bm25.sqlite3"))
        rows = store.records_by_symbol([wanted, wanted.rsplit(".", 1)[-1]], ["file_path", "start_line"])
        exact = [r for r in rows if r[1] == wanted or r[1].endswith(f".{wanted}")]
        ids = [r[0] for r in (exact or rows)][:20]
        found = (
            {d.id: d for d in store.filter_documents({"field": "id", "operator": "in", "value": ids})}
            if ids
            else {}
        )
        return SymbolRecords(name=name, records=[_source(found[i]) for i in ids if i in found])


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

    tools = CodegroundTools(index_dir, pipeline)
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
    """Check the index (one line if unusable), then serve over stdio until the client hangs up."""
    from codeground.app.query import open_index

    open_index(index_dir)  # no index: the one-line error, before any model loads
    build_server(index_dir, pipeline).run("stdio")
