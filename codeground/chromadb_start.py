"""Import chromadb without re-checking, at every start, that its own methods override what they say.

Rule: chromadb marks each method that overrides a base class's with ``overrides.override``, and that
decorator checks at import time that a base class has the method and that the two signatures agree:
for every marked method it disassembles the class body's bytecode to find the base classes and
compares ``inspect`` signatures. That is a check of chromadb's own code, which its release passed,
and run at every import it is 0.12 s of a cold ``codeground search`` (2-core Zen 4, the median
difference of 24 launches alternated with launches without this rule). While chromadb's package
executes (its ``__init__`` imports the client, the API, the configuration, the auth and the
telemetry modules, where the marked classes are), ``overrides.override`` and
``overrides.overrides`` are a decorator that only marks the method (``__override__``) and returns
it unchanged. The mark is what ``EnforceOverrides`` reads when a
class is made, so a chromadb method that overrides another without being marked is still refused;
a marked method without a docstring no longer takes its base's. Nothing is left changed: the
real decorators are back as soon as chromadb's package has executed, so chromadb modules imported
later, and any other user of ``overrides``, get the full check.

``install()`` runs when the ``codeground`` package is imported; it does nothing when chromadb is
already imported.

Usage:

```python
import subprocess
import sys

code = (
    "import codeground, chromadb, overrides, sys\\n"
    "from chromadb.api.client import Client\\n"
    "print(Client.heartbeat.__override__, overrides.override is sys.modules['overrides.overrides'].override)"
)
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
assert out.stdout.strip() == "True True"
```
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from types import ModuleType

from codeground.import_hooks import around_import

PACKAGE = "chromadb"


def marked(method=None, **_options):
    """Stands in for ``overrides.override`` (bare or with options): marks ``method`` as an override."""
    if method is None:
        return marked
    method.__override__ = True
    return method


@contextlib.contextmanager
def marks_only(module: ModuleType) -> Iterator[None]:
    """While ``module`` executes, ``overrides``' two decorators only mark (see the module's rule)."""
    if importlib.util.find_spec("overrides") is None:
        yield
        return
    import overrides

    real = overrides.override, overrides.overrides
    overrides.override = overrides.overrides = marked
    try:
        yield
    finally:
        overrides.override, overrides.overrides = real


def install() -> None:
    """Import chromadb's package, when it is first imported, with ``marks_only`` (idempotent)."""
    around_import(PACKAGE, marks_only)
