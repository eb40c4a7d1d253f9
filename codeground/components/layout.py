"""Where a file sits in a repository's layout: the code that defines an API, or the places that use it.

Rule: a file is in a *usage area* when it is a notebook (``.ipynb``) or when one of its folders is
named as repositories name the places that show how to use a library: ``examples``, ``tutorials``,
``notebooks``, ``demos``, ``samples``, ``cookbooks``, ``recipes``, ``scripts`` (singular or
plural, any case, at any depth: ``docs/examples/``, ``examples/control/``). What lies there calls the
library's API; it does not define it. Tests and benchmarks are the test layout's
(``languages.test_globs``), not this rule's.

The rule reads the path only, so it needs no index-time state: an index made before it, the Qdrant
pair and an incremental run all see the same areas, and a file moved between areas changes area with
its path.

Usage:
```python
from codeground.components.layout import in_usage_area

assert in_usage_area("examples/control/Part_1_stabilize.py")
assert in_usage_area("docs/source/tutorials/quickstart.md")
assert in_usage_area("src/pkg/system.ipynb")
assert not in_usage_area("src/neuromancer/system.py")
assert not in_usage_area("vllm/entrypoints/llm.py")
```
"""

from __future__ import annotations

from pathlib import PurePosixPath

USAGE_FOLDERS = frozenset(
    {
        "example",
        "examples",
        "tutorial",
        "tutorials",
        "notebook",
        "notebooks",
        "demo",
        "demos",
        "sample",
        "samples",
        "cookbook",
        "cookbooks",
        "recipe",
        "recipes",
        "script",
        "scripts",
    }
)


def in_usage_area(path: str) -> bool:
    """True when ``path`` (relative to the repository root, ``/``-separated) is in a usage area."""
    if not path:
        return False
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if parts and parts[-1].lower().endswith(".ipynb"):
        return True
    return any(folder.lower() in USAGE_FOLDERS for folder in parts[:-1])
