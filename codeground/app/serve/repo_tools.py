"""What codeground answers about a repository, as structured results every way in shares.

``RepositoryTools`` holds the four read-only operations (``search_code``, ``ask``, ``get_source``,
``find_symbol``) over one index and one query pipeline; ``codeground mcp`` exposes them as MCP tools
and ``codeground serve`` as ``/search/run`` and ``/ask/run``, so both return the same JSON. Every
question goes through one ``EnginePool``, which opens the index's live generation between questions:
a server started before ``codeground index`` answers from the new generation on its next call, never
mid-answer. ``get_source`` reads only files the index holds, inside the repository.

Rule for ``k`` (how many sources a search returns): an integer from 1 to :data:`MAX_K`, defined here
once for every way in (the MCP schema, ``POST /search/run``'s schema, the CLI's ``search -k``);
``check_k`` refuses anything else (a bool, a float, infinity, a string) with one line.

Usage:
```python
from pathlib import Path
from codeground.app.serve.repo_tools import RepositoryTools

tools = RepositoryTools(Path(".codeground"), Path("pipelines/query.yaml"))
# tools.search_code("What does Trainer.fit return?", k=3).sources[0].path
```
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from codeground.app.errors import CodegroundError
from codeground.components.secret_files import is_secret_file
from codeground.components.secret_scan import redact

MAX_SOURCE_LINES = 400
MAX_K = 50  # the most sources one search returns (see the module docstring)


def check_k(k: object) -> int:
    """``k`` if it is an integer from 1 to ``MAX_K``; a one-line ``CodegroundError`` otherwise."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise CodegroundError(f"k must be a whole number between 1 and {MAX_K}, got {k!r}")
    if not 1 <= k <= MAX_K:
        raise CodegroundError(f"k must be between 1 and {MAX_K}, got {k}")
    return k


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
    repaired: list[str] = Field(
        default_factory=list, description="names a first answer invented; it was asked for again without them"
    )
    withheld: str | None = Field(
        None,
        description="the model's answer, not given as the answer: asked for again, it still named what the "
        "repository lacks (the answer field then says the material does not answer)",
    )
    notices: list[str]


class SourceLines(BaseModel):
    path: str
    start_line: int
    end_line: int
    text: str = Field(description="the lines as the file holds them now (keys in it overwritten)")
    changed_since_index: bool = Field(
        False,
        description="the file differs from the one indexed: line numbers from a search may have moved "
        "(run `codeground index` to update)",
    )


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


def answer_of(question: str, result: Any) -> Answer:
    """The ``Answer`` of a ``QueryResult``: what every client of ``ask`` gets."""
    sources = [_source(d) for d in result.documents]
    return Answer(
        question=question,
        answer=result.answer,
        citations=[f"{s.path}:{s.start_line}-{s.end_line}" for s in sources],
        sources=sources,
        unknown_identifiers=list((result.grounding or {}).get("unknown", [])),
        repaired=list(result.repaired),
        withheld=result.withheld,
        notices=list(result.notices),
    )


class RepositoryTools:
    """The tools' logic, independent of the transport (tested directly and through a real client)."""

    def __init__(self, index_dir: Path, pipeline: Path) -> None:
        from codeground.app.query.engine_pool import EnginePool

        self.index_dir = Path(index_dir)
        self.pipeline = Path(pipeline)
        self.pool = EnginePool(self.index_dir)
        # (generation, root, its files' sha256 as indexed)
        self._files: tuple[Path, str, dict[str, str]] | None = None

    def _indexed_files(self) -> tuple[str, dict[str, str]]:
        """The live generation's repository root and its files' digests. Its manifest is read on every call
        (a new generation is seen at once), its file list (``files.json``: 0.2 s on a 350k-record
        index) only when the generation has changed: a live generation is never rewritten."""
        from codeground.app.index.live import open_index, open_index_with_files

        gen, _ = open_index(self.index_dir)
        kept = self._files
        if kept is None or kept[0] != gen:
            gen, manifest = open_index_with_files(self.index_dir)
            digests = {path: entry.sha256 for path, entry in manifest.files.items()}
            kept = self._files = (gen, manifest.root, digests)
        return kept[1], kept[2]

    def _engine(self):
        return self.pool.get(self.pipeline)

    def search_code(self, question: str, k: int = 8) -> SearchResult:
        check_k(k)
        result = self._engine().search(question, k=k)
        return SearchResult(
            question=question,
            searched_as=result.query,
            sources=[_source(d) for d in result.documents],
            notices=list(result.notices),
        )

    def ask(self, question: str) -> Answer:
        """The grounded answer, repaired once when it named what the repository lacks."""
        return answer_of(question, self._engine().answer(question))

    def get_source(self, path: str, start_line: int, end_line: int) -> SourceLines:
        indexed_root, digests = self._indexed_files()
        rel = PurePosixPath(path.replace("\\", "/"))
        if rel.is_absolute() or ".." in rel.parts or rel.as_posix() not in digests:
            raise CodegroundError(
                f"{path}: not a file of the indexed repository (give a path as search returns it)"
            )
        root = Path(indexed_root).resolve()
        file = (root / rel).resolve()
        if root not in file.parents:
            raise CodegroundError(f"{path}: outside the repository")
        if start_line < 1 or end_line < start_line:
            raise CodegroundError(f"bad line range {start_line}-{end_line}: lines start at 1, end ≥ start")
        if end_line - start_line + 1 > MAX_SOURCE_LINES:
            raise CodegroundError(
                f"at most {MAX_SOURCE_LINES} lines at a time, asked for {end_line - start_line + 1}"
            )
        if is_secret_file(rel.as_posix()):  # an index built before the rule may still list it
            raise CodegroundError(f"{path}: a secret file by its name; never served")
        try:
            data = file.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CodegroundError(f"{path}: cannot be read ({type(exc).__name__})") from exc
        # served as the index read it: keys overwritten in place (lines and offsets unchanged)
        lines = redact(text).text.splitlines(keepends=True)
        changed = hashlib.sha256(data).hexdigest() != digests.get(rel.as_posix())
        if start_line > len(lines):
            raise CodegroundError(f"{path} has {len(lines)} lines; asked for {start_line}-{end_line}")
        end = min(end_line, len(lines))
        return SourceLines(
            path=rel.as_posix(),
            start_line=start_line,
            end_line=end,
            text="".join(lines[start_line - 1 : end]),
            changed_since_index=changed,
        )

    def find_symbol(self, name: str) -> SymbolRecords:
        from codeground.components.identifiers import dotted

        wanted = dotted(name.strip().strip("`").removesuffix("()"))
        if not wanted:
            raise CodegroundError("the symbol name is empty")
        store = self._engine().symbol_store()  # whichever store the query YAML reads
        rows = store.records_by_symbol([wanted, wanted.rsplit(".", 1)[-1]], ["file_path", "start_line"])
        exact = [r for r in rows if r[1] == wanted or r[1].endswith(f".{wanted}")]
        ids = [r[0] for r in (exact or rows)][:20]
        found = (
            {d.id: d for d in store.filter_documents({"field": "id", "operator": "in", "value": ids})}
            if ids
            else {}
        )
        return SymbolRecords(name=name, records=[_source(found[i]) for i in ids if i in found])
