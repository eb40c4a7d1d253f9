"""Grounding check: is every identifier the answer names in the excerpts, or at least in the repository?"""

from __future__ import annotations

import re
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage

from codeground.components.grounding.extract import extract_identifiers
from codeground.components.grounding.vocabulary import RepositoryVocabulary, vocabulary_of
from codeground.components.languages import Language, language_for
from codeground.components.notices import UNKNOWN_IDENTIFIERS, Notice


@component
class GroundingChecker:
    """Classify every identifier an answer names as grounded, known elsewhere, or unknown.

    Rules:
    - The identifiers are those of ``components.grounding.extract.extract_identifiers`` (code and
      code-looking prose; Python keywords, builtins and common standard-library names are ignored,
      as are the extra ``allowlist`` names). For each other language the repository or the excerpts
      are written in (JS/TS, Go, Rust, Java: ``components.languages``), that language's standard
      names are ignored too (``Vec::with_capacity``, ``http.HandleFunc``, ``console.log``); a
      Python-only repository's answers are checked exactly as before.
    - **grounded**: it appears verbatim (word boundaries, case kept) in the content or meta ``impl`` of
      a document given to the model. A dotted name is tested whole, then by its last part
      (``llm.generate`` is grounded by an excerpt defining ``generate``).
    - **known_not_in_excerpts**: not grounded, but in the repository vocabulary. A dotted name is known
      when the whole is a symbol or module, or its last part is known.
    - **unknown** otherwise (likely invented): ``Trainer.fit_fast``, a ``trust_remote=`` keyword.
    - The vocabulary is ``components.grounding.vocabulary``'s, read once from every record of
      ``document_store`` (each ``meta["symbol"]`` and its dotted parts, the module names of Python
      files, every raw identifier in ``content`` and ``meta["impl"]``) and shared with every other
      component reading the same store file. The BM25 vocabulary of the store
      cannot decide this: its tokens are lowercased and split (``trust_remote_code`` also yields
      ``trust``, ``remote``), so an invented ``trust_remote`` or ``llmengine`` would look known.
      Without a store the vocabulary is empty: whatever the excerpts lack is unknown.
    - ``notices``: ``["not found in this repository: a, b"]`` when something is unknown, else ``[]``.
      No reply, or an empty one, gives an empty report and no notice. Inputs are never mutated.

    Usage:
    ```python
    from haystack import Document
    from haystack.dataclasses import ChatMessage
    from codeground.components.grounding.checker import GroundingChecker
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    source = Document(content="class Trainer:\\n    def fit(self, data): ...", meta={"symbol": "Trainer"})
    store.write_documents([source])
    checker = GroundingChecker(document_store=store)
    checker.warm_up()
    reply = ChatMessage.from_assistant("Call `Trainer.fit(data)`, or `Trainer.fit_fast(data)`.")
    out = checker.run(replies=[reply], documents=[source])
    assert out["grounding"]["unknown"] == ["Trainer.fit_fast"] and out["notices"]
    ```
    """

    def __init__(self, *, document_store: Any = None, allowlist: list[str] | None = None) -> None:
        """
        :param document_store: the store holding every record (the BM25 store); it gives the vocabulary.
        :param allowlist: names to ignore on top of the built-in allowlist (``["torch", "np"]``).
        """
        self.document_store = document_store
        self.allowlist = allowlist
        self._names: RepositoryVocabulary | None = None

    def warm_up(self) -> None:
        """Read the known vocabulary from the store once."""
        if self._names is None:
            self._names = vocabulary_of(self.document_store)

    def is_known(self, identifier: str) -> bool:
        """Whether the repository has ``identifier`` anywhere (see the class rules)."""
        self.warm_up()
        assert self._names is not None
        return self._names.is_known(identifier)

    @component.output_types(grounding=dict, notices=list[str])
    def run(self, replies: list[ChatMessage], documents: list[Document]) -> dict[str, Any]:
        """Classify the identifiers of the first reply against ``documents`` and the repository."""
        report: dict[str, list[str]] = {
            "identifiers": [],
            "grounded": [],
            "known_not_in_excerpts": [],
            "unknown": [],
        }
        text = (replies[0].text or "") if replies else ""
        self.warm_up()
        identifiers = extract_identifiers(text, allowlist=self._allowed(documents))
        if not identifiers:
            return {"grounding": report, "notices": []}
        excerpts = "\n".join(
            part
            for doc in documents
            for part in (doc.content, (doc.meta or {}).get("impl"))
            if isinstance(part, str) and part
        )
        report["identifiers"] = identifiers
        for identifier in identifiers:
            if self._in_excerpts(identifier, excerpts):
                report["grounded"].append(identifier)
            elif self.is_known(identifier):
                report["known_not_in_excerpts"].append(identifier)
            else:
                report["unknown"].append(identifier)
        unknown = report["unknown"]
        notices = (
            [Notice(UNKNOWN_IDENTIFIERS, f"not found in this repository: {', '.join(unknown)}")]
            if unknown
            else []
        )
        return {"grounding": report, "notices": notices}

    def _allowed(self, documents: list[Document]) -> frozenset[str]:
        """The extra allowlist plus the standard names of the other languages in play."""
        self.warm_up()
        assert self._names is not None
        languages: set[Language | None] = set(self._names.languages)
        languages.update(language_for(str((d.meta or {}).get("file_path", ""))) for d in documents)
        languages.discard(None)
        return frozenset(self.allowlist or ()).union(*(lang.stdlib for lang in languages))

    @staticmethod
    def _in_excerpts(identifier: str, excerpts: str) -> bool:
        names = [identifier]
        if "." in identifier:
            names.append(identifier.rsplit(".", 1)[-1])
        return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", excerpts) for name in names)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store, allowlist=self.allowlist)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroundingChecker:
        return default_from_dict(cls, data)
