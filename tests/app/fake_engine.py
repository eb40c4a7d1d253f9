"""A stand-in query engine over records whose paths and symbols a hostile repository could have
(markup, a newline, a bidi override), for the transports' escaping tests without building an index:
``tools_over(tmp_path, FakeEngine())`` is a real ``RepositoryTools`` whose real ``EnginePool``
builds this engine."""

from __future__ import annotations

from pathlib import Path

from haystack import Document

from codeground.app.errors import CodegroundError
from codeground.app.query.engine import QueryResult
from codeground.app.query.engine_pool import EnginePool
from codeground.app.serve.repo_tools import RepositoryTools

MARKUP_PATH = "<img src=x onerror=alert(1)>.py"
NEWLINE_PATH = "two\nlines.py"
BIDI_PATH = "rtl\u202eyp.txt"
ODD_SYMBOL = "<b>fit</b>\nInjected: line"


def odd_documents() -> list[Document]:
    return [
        Document(
            id=f"d{i}",
            content="def fit(data):\n    return data\n",
            meta={
                "file_path": path,
                "start_line": 1,
                "end_line": 2,
                "symbol": ODD_SYMBOL,
                "source_type": "impl",
            },
            score=1.0 - i / 10,
        )
        for i, path in enumerate((MARKUP_PATH, NEWLINE_PATH, BIDI_PATH))
    ]


class FakeEngine:
    """What ``EnginePool`` and ``stream_answer`` use of a ``QueryEngine``."""

    gen = None  # the "generation" of an index that does not exist: never rebuilt

    def __init__(self, reply: str = "Call `fit(data)`.", notices: tuple[str, ...] = ()) -> None:
        self.reply, self.notices = reply, notices

    def warm_up(self, *, with_answer: bool = False) -> None:
        pass

    def search(self, question: str, *, k: int = 10, history=None) -> QueryResult:
        if question.startswith("refuse"):  # an error that names what was asked
            raise CodegroundError(f"{question}: refused")
        return QueryResult(question=question, query=question, documents=odd_documents()[:k])

    def answer(
        self, question: str, *, history=None, on_token=None, repair=None, on_repair=None
    ) -> QueryResult:
        if on_token and self.reply:
            for word in self.reply.split(" "):
                on_token(word + " ")
        return QueryResult(
            question=question,
            query=question,
            documents=odd_documents(),
            answer=self.reply or None,
            notices=list(self.notices),
            grounding={"unknown": []},
        )


def tools_over(tmp_path: Path, engine: FakeEngine) -> RepositoryTools:
    tools = RepositoryTools(tmp_path / "idx", tmp_path / "query.yaml")
    tools.pool = EnginePool(tmp_path / "idx", factory=lambda index_dir, pipeline: engine)
    return tools
