"""Where a file sits says what it is for: tests, examples and legacy copies yield to the code itself."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from haystack import Document, component

from codeground.components.file_ranking.named_definition import symbol_names
from codeground.components.identifiers import tokenize
from codeground.components.languages import language_for
from codeground.components.query_shape import is_symbol_query

# folders whose code is kept for old callers, not the code a question is about
LEGACY_FOLDERS = frozenset({"compat", "legacy", "deprecated", "_compat", "backports"})
# files that gather a package's names for import: a re-export, rarely the definition
ENTRY_FILES = frozenset({"__init__.py", "index.js", "index.ts", "index.mjs", "mod.rs"})
# folders that show how to use the code; narrower than ``layout.USAGE_FOLDERS``: ``sample``,
# ``script`` and ``recipe`` also name code (vLLM's ``v1/sample/`` is its sampler)
EXAMPLE_FOLDERS = frozenset(
    {
        "example",
        "examples",
        "tutorial",
        "tutorials",
        "demo",
        "demos",
        "samples",
        "cookbook",
        "cookbooks",
        "notebooks",
    }
)
_TEST_FOLDERS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__", "testdata"})
_DEFINITIONS = frozenset({"api", "impl"})  # a definition in an entry file is a definition
_VERSION = re.compile(r"^v(\d+)$")
# question words that ask for the file kind a factor would push down (then it is not applied)
_ASKS_TESTS = frozenset({"test", "tests", "testing", "tested", "spec", "specs", "fixture", "fixtures"})
_ASKS_EXAMPLES = frozenset(
    {"example", "examples", "sample", "samples", "demo", "demos", "tutorial", "script"}
)


def is_test_path(path: str) -> bool:
    """A test file by its language's layout (``*_test.go``, ``*Spec.scala``…) or a test folder."""
    lang = language_for(path)
    if lang is not None and lang.is_test(path):
        return True
    p = PurePosixPath(path)
    return any(part.lower() in _TEST_FOLDERS for part in p.parts[:-1]) or p.name.startswith("test_")


def _superseded(paths: set[str]) -> set[str]:
    """Files under a ``vN`` folder whose parent also holds a higher ``vM`` among the candidates
    (``zod/src/v3/`` beside ``zod/src/v4/``): the older copy of an API that has a newer one."""
    versions: dict[PurePosixPath, set[int]] = {}
    located: dict[str, tuple[PurePosixPath, int]] = {}
    for path in paths:
        parts = PurePosixPath(path).parts[:-1]
        for i, part in enumerate(parts):
            m = _VERSION.match(part)
            if m:
                parent = PurePosixPath(*parts[:i]) if i else PurePosixPath(".")
                versions.setdefault(parent, set()).add(int(m.group(1)))
                located[path] = (parent, int(m.group(1)))
                break
    return {path for path, (parent, n) in located.items() if n < max(versions[parent])}


def _role_key(doc: Document) -> tuple[str, bool]:
    """``(file, module text?)``: what a record's factor depends on."""
    return doc.meta.get("file_path", ""), doc.meta.get("source_type") not in _DEFINITIONS


@component
class PathRolePrior:
    """Multiply each record's score by its file's role: tests, examples and legacy copies count less.

    Rule: a question about how something works asks for the code that does it. Records of a file
    the repository keeps for another purpose come after that code unless the question asks for
    them: a test (its language's test layout or a ``tests/``-like folder) × ``tests`` unless the
    question speaks of tests; an example, tutorial, demo or notebook (``EXAMPLE_FOLDERS``,
    ``.ipynb``) × ``examples`` unless it asks for one; a legacy copy (a ``compat``, ``legacy``
    or ``deprecated`` folder, or a ``vN`` folder beside a higher ``vM`` among the candidates)
    × ``legacy``; the module text of a
    package's entry file (``__init__.py``, ``index.ts``, ``mod.rs``: mostly imports and re-exports;
    a definition there is a definition) × ``entry``; a TypeScript
    declaration file (``.d.ts``) × ``declarations``. Documentation is never pushed down (a docs
    question's answer is there). A question that is one identifier found written only in such
    files (no candidate of the code itself contains it) has no code to yield to: the records that
    contain it keep their scores (a helper only a notebook or a test calls is found there first).
    Order: by the new scores, ties as they came; the documents are copies.

    Usage:
    ```python
    from haystack import Document
    from codeground.components.file_ranking.path_roles import PathRolePrior

    docs = [Document(id="t", content="t", score=0.5, meta={"file_path": "pkg/router_test.go"}),
            Document(id="r", content="r", score=0.4, meta={"file_path": "pkg/router.go"})]
    order = lambda q: [d.id for d in PathRolePrior().run(query=q, documents=docs)["documents"]]
    assert order("How are routes matched?") == ["r", "t"]
    assert order("How are routes tested?") == ["t", "r"]  # asked for
    ```
    """

    def __init__(
        self,
        *,
        tests: float = 0.3,
        examples: float = 0.3,
        legacy: float = 0.3,
        entry: float = 0.5,
        declarations: float = 0.7,
    ) -> None:
        """
        :param tests: the factor of a test file's records.
        :param examples: the factor of records of examples, tutorials, demos and notebooks.
        :param legacy: the factor of a legacy or superseded copy's records.
        :param entry: the factor of a package entry file's records.
        :param declarations: the factor of a ``.d.ts`` file's records.
        """
        for name, value in (
            ("tests", tests),
            ("examples", examples),
            ("legacy", legacy),
            ("entry", entry),
            ("declarations", declarations),
        ):
            if not 0 < value <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {value}")
        self.tests = tests
        self.examples = examples
        self.legacy = legacy
        self.entry = entry
        self.declarations = declarations

    def factor(
        self, path: str, *, asks_tests: bool, asks_examples: bool, superseded: bool, module_text: bool = True
    ) -> float:
        """The product of the factors that apply to the file at ``path``."""
        p = PurePosixPath(path)
        folders = {part.lower() for part in p.parts[:-1]}
        f = 1.0
        if not asks_tests and is_test_path(path):
            f *= self.tests
        if not asks_examples and (folders & EXAMPLE_FOLDERS or p.suffix == ".ipynb"):
            f *= self.examples
        if superseded or folders & LEGACY_FOLDERS:
            f *= self.legacy
        if p.name in ENTRY_FILES and module_text:
            f *= self.entry
        if p.name.endswith(".d.ts"):
            f *= self.declarations
        return f

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """The documents re-scored by the rule, best first."""
        words = set(tokenize(query))
        asks_tests, asks_examples = bool(words & _ASKS_TESTS), bool(words & _ASKS_EXAMPLES)
        paths = {d.meta.get("file_path", "") for d in documents}
        old = _superseded(paths)
        factors: dict[str, float] = {}
        for doc in documents:
            path = doc.meta.get("file_path", "")
            key = _role_key(doc)
            if doc.meta.get("source_type") != "docs" and key not in factors:
                factors[key] = self.factor(
                    path,
                    asks_tests=asks_tests,
                    asks_examples=asks_examples,
                    superseded=path in old,
                    module_text=key[1],
                )
        kept = self._only_written_there(query, documents, factors)
        out = []
        for doc in documents:
            if doc.meta.get("source_type") == "docs" or doc.id in kept:
                out.append(replace(doc))
            else:
                out.append(replace(doc, score=(doc.score or 0.0) * factors[_role_key(doc)]))
        order = sorted(range(len(out)), key=lambda i: (-(out[i].score or 0.0), i))
        return {"documents": [out[i] for i in order]}

    @staticmethod
    def _only_written_there(
        query: str, documents: list[Document], factors: dict[tuple[str, bool], float]
    ) -> set[str]:
        """Ids of the records that contain the one identifier the question is, when no record of
        the code itself (factor 1, not docs) contains it; empty otherwise."""
        if not is_symbol_query(query):
            return set()
        name = symbol_names(query)[1]
        holding = [d for d in documents if name in (d.content or "")]
        if any(d.meta.get("source_type") != "docs" and factors[_role_key(d)] == 1.0 for d in holding):
            return set()
        return {d.id for d in holding}
