"""The record that defines the symbol a question names comes first."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from haystack import Document, component

from codeground.components.identifiers import backticked_names, code_names, is_snake
from codeground.components.query_shape import is_question, is_symbol_query

_SEPARATORS = re.compile(r"::|\\|->|\.|#")
# records that define code (not a heading or a page that mentions the name)
_NOT_DEFINITIONS = frozenset({"docs", "notebook", "text"})


def _last(name: str) -> str:
    return _SEPARATORS.split(name)[-1]


def names_code_in_a_sentence(query: str) -> bool:
    """A sentence that names code (``How does `fit` stop?``, "the z parameter of selective_state_update"):
    it asks about that code's own record, so the file-level rules leave the order to the record
    rankers. A question that is one identifier is a symbol query instead.

    A search phrase (``query_shape.is_question`` false) names a record only through a member: a
    snake_case or dotted name or one in backticks (``z.transform and z.pipe``). A CamelCase word in a
    phrase ("security and OAuth2 authentication", "ZodError structure and issue formatting") names a
    type or a product, whose file is the answer: the file rules apply (semble's benchmark 0.826 ->
    0.839; a question keeps the wider rule: vLLM docs R@1 0.638 -> 0.511 with the narrow one)."""
    if is_symbol_query(query):
        return False
    names = code_names(query)
    if is_question(query):
        return bool(names)
    quoted = backticked_names(query)
    return any(is_snake(n) or "." in n or n in quoted for n in names)


def symbol_names(query: str) -> tuple[str, str]:
    """The symbol a one-identifier question asks, written with dots (``serde::de::Deserializer`` →
    ``serde.de.Deserializer``), and its last part (``Deserializer``)."""
    asked = query.strip().strip("`").removesuffix("()")
    return _SEPARATORS.sub(".", asked), _last(asked)


def _stem_is(path: str, name: str) -> bool:
    """``http_adapter.py``, ``HttpAdapter.java``, ``adapters.py``: named after the symbol."""
    stem = PurePosixPath(path).stem.lower().replace("_", "").replace("-", "")
    want = name.lower()
    return stem == want or stem.rstrip("s") == want.rstrip("s")


@component
class NamedDefinitionPrior:
    """Add ``boost × best score`` to each record that defines the symbol the question names (× 1.5
    when its file is named after it), when the question is that symbol.

    Rule: a question that is a symbol (``HTTPAdapter``, ``Flask``, ``serde::Deserializer``,
    ``Router.route``) asks where it is defined: a code record whose symbol is that name (its last
    part: ``HTTPAdapter`` defines ``HTTPAdapter.send``'s class; the qualified form when given) goes
    first, before the records that only mention it, and first of all the one in the file named after
    it. A sentence moves nothing: one that names code (``snake_case``, a dotted path, backticks,
    ``StateManager``) asks about that code's own record, which the symbol lookup and re-seating
    before this rule placed (measured: a half boost for such names cost the vLLM dev code questions
    R@3 0.19, docs/measurements/semble.md). Documentation, notebook
    and plain-text records never count as definitions. Order: by the new scores, ties as they came;
    the documents are copies.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.file_ranking.named_definition import NamedDefinitionPrior

    meta = lambda path, symbol, kind="api": {"file_path": path, "symbol": symbol, "source_type": kind}
    docs = [Document(id="use", content="x", score=0.5, meta=meta("requests/sessions.py", "Session.send")),
            Document(id="def", content="x", score=0.4, meta=meta("requests/adapters.py", "HTTPAdapter"))]
    out = NamedDefinitionPrior(boost=3.0).run(query="HTTPAdapter", documents=docs)["documents"]
    assert [d.id for d in out] == ["def", "use"]
    ```
    """

    def __init__(self, *, boost: float = 3.0, stem_factor: float = 1.5) -> None:
        """
        :param boost: the share of the best score a defining record gets.
        :param stem_factor: the extra factor when the record's file is named after the symbol.
        """
        self.boost = boost
        self.stem_factor = stem_factor

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """The documents re-scored by the rule, best first."""
        if not documents or not is_symbol_query(query):
            # a sentence: the record rankers (symbol lookup, re-seating) decide
            return {"documents": list(documents)}
        names = set(symbol_names(query))
        best = max(d.score or 0.0 for d in documents)
        out = []
        for doc in documents:
            score = doc.score or 0.0
            symbol = str(doc.meta.get("symbol") or "")
            if doc.meta.get("source_type") not in _NOT_DEFINITIONS and symbol:
                dotted = _SEPARATORS.sub(".", symbol)
                hit = {_last(symbol), dotted} & names
                if hit:
                    stem = any(_stem_is(doc.meta.get("file_path", ""), _last(n)) for n in hit)
                    score += self.boost * best * (self.stem_factor if stem else 1.0)
            out.append(replace(doc, score=score))
        order = sorted(range(len(out)), key=lambda i: (-(out[i].score or 0.0), i))
        return {"documents": [out[i] for i in order]}
