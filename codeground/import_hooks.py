"""Run code around the execution of one named module when it is first imported.

Rule: ``around_import(name, around)`` makes the next import of module ``name`` execute inside
``around(module)``, a context manager that may prepare ``sys.modules`` before the module's code runs
and adjust the module after it ran. Nothing else changes: the module is found, created and cached as
Python would, its loader still answers ``get_source`` and the like, and a module that is already
imported (or never imported) is not touched. Used where a library does start-up work codeground does
not need (``codeground.deferred_imports``, ``codeground.app.serve.gradio_start``).

Usage:

```python
import contextlib
import sys

from codeground.import_hooks import around_import

@contextlib.contextmanager
def mark(module):
    yield
    module.marked = True

sys.modules.pop("colorsys", None)
around_import("colorsys", mark)
import colorsys
assert colorsys.marked and colorsys.rgb_to_hsv(1.0, 0.0, 0.0)[0] == 0.0
```
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType

Around = Callable[[ModuleType], AbstractContextManager]


class _AroundExec(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader, around: Around) -> None:
        self._loader = loader
        self._around = around

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        with self._around(module):
            self._loader.exec_module(module)

    def __getattr__(self, name: str):  # get_source, get_filename… as the module's own loader answers
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, around: Around) -> None:
        self.name = name
        self.around = around
        self.used = False

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name or self.used:
            return None
        self.used = True  # once: a re-import after removal from sys.modules runs plainly
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _AroundExec(spec.loader, self.around)
        return spec


def around_import(name: str, around: Around) -> None:
    """Execute module ``name`` inside ``around(module)`` when it is first imported (idempotent)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not (isinstance(f, _Finder) and f.used)]
    if name in sys.modules or any(isinstance(f, _Finder) and f.name == name for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder(name, around))
