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
it unchanged. The mark is what ``EnforceOverrides`` reads when a class is made, so a chromadb
method that overrides another without being marked is still refused. What else the real decorator
does is done once the package has executed, without the bytecode: a marked method without a
docstring takes the first one its class's bases have (``help(client.reset)`` reads as before).
The real decorators are back as soon as chromadb's package has executed, so chromadb modules
imported later get the full check; so does any other user of ``overrides`` (none is installed),
except one defining classes in another thread during those 0.4 s.

``install()`` runs when the ``codeground`` package is imported; it does nothing when chromadb is
already imported.

Usage:

```python
import subprocess
import sys

code = (
    "import codeground, chromadb, overrides, sys\\n"
    "from chromadb.api.client import Client\\n"
    "real = sys.modules['overrides.overrides']\\n"
    "print(sys.modules['chromadb.api.client'].override.__module__, Client.reset.__override__,\\n"
    "      Client.reset.__doc__ is not None, overrides.override is real.override)"
)
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
assert out.stdout.strip() == "codeground.chromadb_start True True True"
```
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

from codeground.import_hooks import around_import

PACKAGE = "chromadb"


def marking(marked: list[Callable]) -> Callable:
    """A stand-in for ``overrides.override`` (bare or with options) that marks the method as an
    override, notes it in ``marked`` and returns it unchanged."""

    def override(method=None, **_options):
        if method is None:
            return override
        method.__override__ = True
        marked.append(method)
        return method

    return override


def inherit_docstrings(methods: list[Callable]) -> None:
    """Give each of ``methods`` that has no docstring the first one the bases of its class have, as
    ``overrides.override`` would have (its class found by its qualified name in its module)."""
    for method in methods:
        if method.__doc__ or "<locals>" in method.__qualname__:
            continue
        *path, name = method.__qualname__.split(".")
        owner = sys.modules.get(method.__module__)
        for part in path:
            owner = getattr(owner, part, None)
        if not isinstance(owner, type):
            continue
        for base in owner.__mro__[1:]:
            doc = getattr(base.__dict__.get(name), "__doc__", None)
            if doc:
                method.__doc__ = doc
                break


@contextlib.contextmanager
def marks_only(module: ModuleType) -> Iterator[None]:
    """While ``module`` executes, ``overrides``' two decorators only mark (see the module's rule)."""
    if importlib.util.find_spec("overrides") is None:
        yield
        return
    import overrides

    real = overrides.override, overrides.overrides
    marked: list[Callable] = []
    overrides.override = overrides.overrides = marking(marked)
    try:
        yield
    finally:
        overrides.override, overrides.overrides = real
        inherit_docstrings(marked)


def install() -> None:
    """Import chromadb's package, when it is first imported, with ``marks_only`` (idempotent)."""
    around_import(PACKAGE, marks_only)
