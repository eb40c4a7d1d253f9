"""The source trees the reranker is trained and checked on: on every machine, never the benchmark's.

Rule: training reads Python's standard library and a fixed list of installed packages; the check
reads a second, disjoint list, so the figure the build reports is on code it never trained on. The
lists hold general-purpose libraries (web, CLI, tooling, data formats): no vLLM, nothing the
benchmark asks about, and none of the scientific Python stack (numpy, scipy, pandas, scikit-learn,
sympy, networkx, torch), so a library a hidden question set may be about is never trained on. A
listed package that is not installed is skipped and named in the build's report.

Each tree yields its Python files and its Markdown/reST pages (tests, vendored copies and
``__pycache__`` left out, in sorted order) and, for a package, the long description in its
distribution metadata (its README), so heading → section pairs come from real documentation.

Usage:
```python
from codeground.reranker.sources import source_trees

trees = {tree.name: tree for tree in source_trees(["stdlib", "click", "not-installed-package"])}
assert trees["stdlib"].python_files() and "not-installed-package" not in trees
```
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sysconfig
from dataclasses import dataclass
from pathlib import Path

TRAIN_TREES = (
    "stdlib",
    "haystack",
    "transformers",
    "huggingface_hub",
    "pydantic",
    "httpx",
    "requests",
    "click",
    "rich",
    "jinja2",
    "fastapi",
    "aiohttp",
    "sentence_transformers",
    "gradio",
    "yaml",
    "tqdm",
    "markdown_it",
    "pygments",
)
CHECK_TREES = ("starlette", "typer", "chromadb", "tokenizers", "urllib3", "jsonschema", "attr", "tenacity")

_SKIP_PARTS = {
    "__pycache__",
    "test",
    "tests",
    "testing",
    "_vendor",
    "vendor",
    "site-packages",
    "idlelib",
    "lib2to3",
    "turtledemo",
    "ensurepip",
    "pydoc_data",
    "dist-packages",
}
# distribution names where they differ from the import name
_DISTRIBUTIONS = {"yaml": "PyYAML", "attr": "attrs", "markdown_it": "markdown-it-py", "jinja2": "Jinja2"}


@dataclass(frozen=True)
class SourceTree:
    """One tree: ``name`` (import name or ``stdlib``), its folder and its README text (may be empty)."""

    name: str
    root: Path
    readme: str = ""
    readme_suffix: str = ".md"

    def python_files(self) -> list[Path]:
        """Every ``.py`` file under ``root`` but tests, vendored code and caches, sorted."""
        return self._files("*.py")

    def doc_files(self) -> list[Path]:
        """The Markdown and reST pages shipped inside the tree (same exclusions), sorted."""
        return sorted(self._files("*.md") + self._files("*.rst"))

    def _files(self, pattern: str) -> list[Path]:
        files = []
        for path in sorted(self.root.rglob(pattern)):
            parts = path.relative_to(self.root).parts
            if any(p in _SKIP_PARTS or p.startswith("test_") for p in parts):
                continue
            files.append(path)
        return files


def _readme(name: str) -> tuple[str, str]:
    try:
        meta = importlib.metadata.metadata(_DISTRIBUTIONS.get(name, name))
    except importlib.metadata.PackageNotFoundError:
        return "", ".md"
    body = meta.get_payload() or meta.get("Description") or ""
    kind = (meta.get("Description-Content-Type") or "").lower()
    return str(body), ".rst" if "rst" in kind or "x-rst" in kind else ".md"


def source_tree(name: str) -> SourceTree | None:
    """The tree for ``name``: ``stdlib`` or an installed package (None when it is not installed)."""
    if name == "stdlib":
        return SourceTree("stdlib", Path(sysconfig.get_paths()["stdlib"]))
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        return None
    readme, suffix = _readme(name)
    return SourceTree(name, Path(locations[0]), readme, suffix)


def source_trees(names: list[str] | tuple[str, ...]) -> list[SourceTree]:
    """The installed trees among ``names``, in the given order."""
    return [tree for tree in (source_tree(n) for n in names) if tree is not None]
