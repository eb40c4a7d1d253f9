"""A question about an interface is answered by its definition, not by code that uses it."""

from __future__ import annotations

import re
from typing import Any

from haystack import Document, component

from codeground.components.layout import USAGE_FOLDERS, in_usage_area
from codeground.components.rankers.rescale import checked_boost, rescaled

# what something accepts (arguments, parameters, keyword arguments, a constructor, a signature), what
# it gives back or raises, its defaults and attributes, or what passing it something does
_INTERFACE = re.compile(
    r"\b(?:arguments?|args|parameters?|params|kwargs?|keyword arguments?|accepts?|constructors?|"
    r"signatures?|returns?|returned|return (?:value|type)s?|raises?|defaults?|default values?|"
    r"attributes?)\b"
    r"|\bif (?:i|you|we|one|someone|the user) pass(?:es)?\b",
    re.IGNORECASE,
)


# a question that names a usage area (the layout's own words for them) asks about that usage ("In the
# Node tutorial, how do I wrap a function that returns two outputs?"); "for example" only introduces
# an example of the question's own
_ABOUT_USAGE = re.compile(
    rf"(?<!\bfor )\b(?:{'|'.join(sorted(USAGE_FOLDERS, key=len, reverse=True))})\b", re.IGNORECASE
)


def asks_interface(question: str) -> bool:
    """Whether a question asks about an interface: what something accepts ("What arguments does
    ``Node``'s constructor accept?"), returns or raises, its defaults or attributes, or what
    happens "if I pass" it something — and names no usage area (``layout.USAGE_FOLDERS``: an
    example, tutorial, notebook, demo, sample, script, cookbook or recipe), which it would then be
    asking about. How-to and
    concept questions ("How do I train a model?") do not."""
    question = question or ""
    return _INTERFACE.search(question) is not None and _ABOUT_USAGE.search(question) is None


def _uses(doc: Document) -> bool:
    """A candidate that calls an interface rather than defining or documenting it: code or a
    notebook in a usage area (a docs page there, such as ``examples/README.md``, documents)."""
    return doc.meta.get("source_type") != "docs" and in_usage_area(doc.meta.get("file_path", ""))


@component
class AskedInterfacePrior:
    """Rule: a question about an interface (``asks_interface``) is answered where that interface is
    defined — a signature, a docstring, the body that reads an argument — not in the notebooks,
    examples and tutorials that call it, which repeat its name far more often and so outrank the
    definition in BM25. For such a question, every code or notebook candidate in a usage area of the
    repository (``layout.in_usage_area``: notebooks, ``examples/``, ``tutorials/``, ``demos/``,
    ``scripts/``, …) has its fused score multiplied by ``usage_factor`` and the list is sorted again
    (stably). Other questions keep the fused order: a how-to question is often answered by an
    example. Docs pages keep their scores wherever they lie (a docs table or an ``examples/README.md``
    answers many interface questions), and so do tests, which the fusion's path priors already
    weigh. No per-repository setting: the areas are read from paths.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.asked_interface import AskedInterfacePrior

    fused = [
        Document(id="tutorial", content="node = Node(net, ['x'], ['y'])",
                 meta={"file_path": "examples/tutorials/part_1.ipynb"}, score=1.45),
        Document(id="definition", content="def __init__(self, callable, input_keys, output_keys):",
                 meta={"file_path": "src/neuromancer/system.py"}, score=1.23),
    ]
    prior = AskedInterfacePrior(usage_factor=0.5)
    out = prior.run(query="What arguments does Node's constructor accept?", documents=fused)["documents"]
    assert [d.id for d in out] == ["definition", "tutorial"]
    out = prior.run(query="How do I wrap a network in a Node?", documents=fused)["documents"]
    assert [d.id for d in out] == ["tutorial", "definition"]  # how-to: the fused order stays
    ```
    """

    def __init__(self, *, usage_factor: float = 0.5) -> None:
        """
        :param usage_factor: the factor on the score of a candidate in a usage area when the question
            asks about an interface (< 1 puts definitions first; 1 turns the rule off).
        """
        self.usage_factor = checked_boost(usage_factor)

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """``documents`` (best first) with the rule applied; the inputs are not changed."""
        if self.usage_factor == 1 or not documents or not asks_interface(query):
            return {"documents": list(documents)}
        factors = [self.usage_factor if _uses(d) else 1.0 for d in documents]
        return {"documents": rescaled(documents, factors)}
