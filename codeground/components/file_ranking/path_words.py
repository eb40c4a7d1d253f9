"""A question's words that name a file or its folder lift that file's records."""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from haystack import Document, component

from codeground.components.identifiers import code_names, tokenize
from codeground.components.query_shape import is_symbol_query

# words that name no file: a question's grammar
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how i if in is it its not of on or the this "
    "to was what when where which who why with".split()
)


def question_words(question: str) -> set[str]:
    """The content words of a question that may name a file (three letters or more, no grammar)."""
    return {w for w in tokenize(question) if len(w) > 2 and w not in STOPWORDS and not w.isdigit()}


def path_words(path: str) -> set[str]:
    """The words of a file's stem and of the folder holding it (``middleware/cors.py``: middleware,
    cors), split as identifiers (``web_exceptions`` also gives web, exceptions)."""
    p = PurePosixPath(path)
    words = set(tokenize(p.stem))
    if p.parent.name:
        words.update(tokenize(p.parent.name))
    return words


def _matches(word: str, names: set[str], min_prefix: int) -> bool:
    if word in names:
        return True
    for name in names:
        short, long = (word, name) if len(word) <= len(name) else (name, word)
        if len(short) < min_prefix:
            continue
        if long.startswith(short):  # route ~ router
            return True
        # a word's other ending (dependency ~ dependencies): all but its last letter, five or more
        if len(short) >= 5 and long.startswith(short[:-1]):
            return True
    return False


def path_share(words: set[str], names: set[str], *, min_prefix: int = 3) -> float:
    """The share of the question's ``words`` that meet one of a file's ``names`` (``path_words``)."""
    if not words:
        return 0.0
    return sum(_matches(w, names, min_prefix) for w in words) / len(words)


@component
class PathWordPrior:
    """Add ``boost × best score × share of the question's words`` to records of files whose name or
    folder spells those words.

    Rule: people name files after what they hold (``middleware/cors.py``, ``web_exceptions.py``,
    ``render/json.go``), so a question's content words that meet a file's stem or its folder's name
    are evidence for that file whatever its text says. A word meets a name when equal or when one
    is a prefix of the other of at least ``min_prefix`` letters ("route" meets ``router``), or
    when a word of five letters or more meets it but for its last letter ("dependency" meets
    ``dependencies``); grammar words and words under three letters never count. A file matching
    under ``min_share`` of the question's words gets nothing. A question that names code (one
    identifier, or a sentence naming one) is left to ``NamedDefinitionPrior`` and the record
    rankers. Order: by the new scores, ties as they came; the documents are copies.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.file_ranking.path_words import PathWordPrior

    docs = [Document(id="a", content="a", score=0.5, meta={"file_path": "docs/guide.md"}),
            Document(id="b", content="b", score=0.4, meta={"file_path": "aiohttp/web_exceptions.py"})]
    out = PathWordPrior(boost=1.0).run(query="Which HTTP exception types are there?", documents=docs)
    assert [d.id for d in out["documents"]] == ["b", "a"]
    ```
    """

    def __init__(self, *, boost: float = 1.0, min_share: float = 0.1, min_prefix: int = 3) -> None:
        """
        :param boost: the share of the best score a file matching every word of the question gets.
        :param min_share: the least share of the question's words a file must match.
        :param min_prefix: the shortest prefix that lets two words meet.
        """
        self.boost = boost
        self.min_share = min_share
        self.min_prefix = min_prefix

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """The documents re-scored by the rule, best first."""
        words = question_words(query)
        if not documents or not words or is_symbol_query(query) or code_names(query):
            return {"documents": list(documents)}
        best = max(d.score or 0.0 for d in documents)
        shares: dict[str, float] = {}
        out = []
        for doc in documents:
            path = doc.meta.get("file_path", "")
            if path not in shares:
                share = path_share(words, path_words(path), min_prefix=self.min_prefix)
                shares[path] = share if share >= self.min_share else 0.0
            out.append(replace(doc, score=(doc.score or 0.0) + self.boost * best * shares[path]))
        order = sorted(range(len(out)), key=lambda i: (-(out[i].score or 0.0), i))
        return {"documents": [out[i] for i in order]}
