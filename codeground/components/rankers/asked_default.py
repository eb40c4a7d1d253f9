"""A question asking for a default: the candidates that give the named name a value come first."""

from __future__ import annotations

import re
from typing import Any

from haystack import Document, component

from codeground.components.identifiers import code_names
from codeground.components.rankers.rescale import checked_boost, rescaled

_ASKS_DEFAULT = re.compile(r"\bdefaults?\b", re.IGNORECASE)


def asked_names(question: str) -> list[str]:
    """The names a question asks a default of: the code-like words it writes (``min_dynamic_patch``,
    ``FP8_MIN``, ``VLLM_RPC_TIMEOUT``, a backticked ``alpha``), when it asks for a default at all.
    Dotted paths name an owner (``MultiModalKwargs._try_stack``), not the value asked about."""
    if not _ASKS_DEFAULT.search(question or ""):
        return []
    return [w for w in dict.fromkeys(code_names(question)) if "." not in w]


def _value_patterns(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # name = … (self.name = … too), name: T = …, name=… in a signature, or ("name", default) /
    # {"name": …} as in getattr(obj, "name", False), os.getenv("NAME", "10"), kwargs.get("name", 1)
    return re.compile(
        rf"(?<!\w)(?:{alternatives})\s*(?::[^=\n,)]*)?=(?!=)|[\"'](?:{alternatives})[\"']\s*[,:]"
    )


@component
class AskedDefaultPrior:
    """Rule: a question that asks for a default (the word "default" or "defaults") and writes code
    names asks where those names get their value. A candidate whose text gives one of them a value —
    ``name=…`` or ``name: T = …`` in a signature, ``name = …`` or ``self.name = …`` in a body,
    ``("name", default)`` or ``{"name": …}`` as ``getattr``, ``os.getenv`` and ``dict.get`` take it
    — has its fused score multiplied by ``boost``, and the list is sorted again (stably: among equals
    fusion's order stays).
    Other questions, and candidates that only use the name, keep their scores; a keyword argument in
    a call (``f(name=x)``) reads like a signature's default and counts too. No per-repository
    setting: the patterns are Python's, which other languages' keyword and assignment forms share
    closely enough for ``name = value`` / ``name: value``.

    With fusion's reciprocal-rank scores (k = 10, BM25 ×16), ``boost: 1.5`` lets a record that gives
    the name its value pass the records up to about five places above it that only use the name.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.asked_default import AskedDefaultPrior

    fused = [
        Document(id="caller", content="if self.pp_locks is not None: wait(self.pp_locks)", score=1.45),
        Document(id="init", content="def _init_executor(self):\\n    self.pp_locks = None", score=1.23),
    ]
    prior = AskedDefaultPrior(boost=1.5)
    out = prior.run(query="What is the default value of pp_locks?", documents=fused)["documents"]
    assert [d.id for d in out] == ["init", "caller"]
    out = prior.run(query="Where is pp_locks used?", documents=fused)["documents"]
    assert [d.id for d in out] == ["caller", "init"]  # not a question about a default
    ```
    """

    def __init__(self, *, boost: float = 1.5) -> None:
        """
        :param boost: the factor on the score of a candidate that gives an asked-about name a value
            (> 1 favours them; 1 turns the rule off).
        """
        self.boost = checked_boost(boost)

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """``documents`` (best first) with the rule applied; the inputs are not changed."""
        names = asked_names(query)
        if not names or self.boost == 1 or not documents:
            return {"documents": list(documents)}
        pattern = _value_patterns(names)
        factors = [self.boost if pattern.search(doc.content or "") else 1.0 for doc in documents]
        return {"documents": rescaled(documents, factors)}
