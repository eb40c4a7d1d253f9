"""A question naming a major version: the candidates under that version's folder come first."""

from __future__ import annotations

import re
from typing import Any

from haystack import Document, component

from codeground.components.rankers.rescale import checked_boost, rescaled

# "v3", "V1", "version 4", or a capitalised name and a bare major number ("Zod 3", "Zod 4.x")
_ASKED = re.compile(r"\b[vV](\d+)\b|\b[Vv]ersion\s+(\d+)\b|\b[A-Z][\w-]*\s+(\d+)(?:\.x)?(?![\w.])")
_VERSION_FOLDER = re.compile(r"v(\d+)", re.IGNORECASE)


def asked_versions(question: str) -> set[str]:
    """The major versions a question names, as folder names: ``{"v3"}`` for "In Zod 3, …" or
    "the v3 API"; ``{"v1"}`` for "vLLM V1". A number after a name only counts where some candidate
    lies under that version's folder (``AskedVersionPrior``), so "Llama 3" asks nothing of vLLM."""
    found = set()
    for match in _ASKED.finditer(question or ""):
        number = next(g for g in match.groups() if g is not None)
        found.add(f"v{int(number)}")
    return found


def version_folders(path: str) -> set[str]:
    """The ``vN`` folders a path lies under (``src/v4/core/api.ts`` → ``{"v4"}``), lowercased."""
    folders = (path or "").replace("\\", "/").split("/")[:-1]
    return {f"v{int(m.group(1))}" for f in folders if (m := _VERSION_FOLDER.fullmatch(f))}


@component
class AskedVersionPrior:
    """Rule: where a repository keeps major versions side by side in ``vN`` folders (zod's
    ``src/v3/`` and ``src/v4/``, vLLM's ``v1/`` beside the older engine), a question that names one
    of them ("In Zod 3, …", "the v3 API", "vLLM V1") asks about that copy. When some candidate lies
    under a folder named for an asked version, every candidate under such a folder has its score
    multiplied by ``boost`` and every candidate under another version's folder divided by it;
    candidates outside version folders keep their scores, and the list is sorted again (stably).

    A question naming no version, or one whose version no candidate's path has ("Llama 3" over
    vLLM, which has no ``v3/``), changes nothing. The folders are the repository's own layout; no
    per-repository setting.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.rankers.asked_version import AskedVersionPrior

    fused = [
        Document(id="v4", content="…", meta={"file_path": "src/v4/core/errors.ts"}, score=1.4),
        Document(id="readme", content="…", meta={"file_path": "README.md"}, score=1.3),
        Document(id="v3", content="…", meta={"file_path": "src/v3/ZodError.ts"}, score=1.2),
    ]
    prior = AskedVersionPrior(boost=1.5)
    out = prior.run(query="In Zod 3, what is the error map order?", documents=fused)["documents"]
    assert [d.id for d in out] == ["v3", "readme", "v4"]
    out = prior.run(query="In Zod 5, what is the error map order?", documents=fused)["documents"]
    assert [d.id for d in out] == ["v4", "readme", "v3"]  # no candidate lies under a v5 folder
    ```
    """

    def __init__(self, *, boost: float = 1.5) -> None:
        """
        :param boost: the factor on the score of a candidate under an asked version's folder, and
            the divisor of one under another version's (> 1 favours the asked copy; 1 turns it off).
        """
        self.boost = checked_boost(boost)

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """``documents`` (best first) with the rule applied; the inputs are not changed."""
        asked = asked_versions(query)
        if not asked or self.boost == 1 or not documents:
            return {"documents": list(documents)}
        folders = [version_folders(d.meta.get("file_path", "")) for d in documents]
        if not any(f & asked for f in folders):
            return {"documents": list(documents)}
        factors = [(self.boost if f & asked else 1 / self.boost) if f else 1.0 for f in folders]
        return {"documents": rescaled(documents, factors)}
