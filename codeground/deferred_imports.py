"""Libraries Haystack imports at ``import haystack`` time are imported when first used, not before.

Rule: two modules of Haystack import a library at import time that codeground's commands use only
in cases they may never meet:

- ``haystack.utils.device`` imports torch whenever it is installed, to build ``torch.device``
  objects: 1.5–2.2 s of every command on a 2-core machine, although a search over static vectors,
  the index run and the chat page never touch torch;
- ``haystack.telemetry._telemetry`` imports posthog (and with it requests and urllib3), which only
  its telemetry client uses, and codeground turns Haystack's telemetry off unless the user turns
  it on: 0.08 s of every command.

While one of those modules executes, the library's name in ``sys.modules`` is a stand-in; the first
attribute read or write on the stand-in (``torch.device``, ``posthog.api_key = …``) imports the
real library and is answered by it. The stand-in leaves ``sys.modules`` as soon as the module has
executed, so every other import of the library gets the real module and code that needs it (the
cross-encoder, the distillation, the OpenVINO export; Haystack's telemetry when it is on) runs as
it always did. A library that is not installed is not stood in for: Haystack sees it missing, as
before.

``install()`` runs when the ``codeground`` package is imported; it does nothing for a module that is
already imported.

Usage:

```python
import subprocess
import sys

code = "import codeground, haystack, sys; print('torch' in sys.modules, 'posthog' in sys.modules)"
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
assert out.stdout.strip() == "False False"
```
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator

from codeground.import_hooks import around_import

# Haystack's module -> the library it imports at import time, deferred until first used.
DEFERRED = {
    "haystack.utils.device": "torch",
    "haystack.telemetry._telemetry": "posthog",
}


class _OnFirstUse(types.ModuleType):
    """Stands in for a library in the module imported while it is in place; forwards every access."""

    def _real(self) -> types.ModuleType:
        name = self.__name__
        if sys.modules.get(name) is self:  # used while still in place: make way for the real one
            del sys.modules[name]
        return importlib.import_module(name)

    def __getattr__(self, name: str):
        return getattr(self._real(), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._real(), name, value)

    def __dir__(self) -> list[str]:
        return dir(self._real())


def _stand_in_for(library: str) -> Callable[[types.ModuleType], contextlib.AbstractContextManager]:
    @contextlib.contextmanager
    def around(module: types.ModuleType) -> Iterator[None]:
        stand_in = None
        if library not in sys.modules and importlib.util.find_spec(library) is not None:
            stand_in = sys.modules[library] = _OnFirstUse(library)
        try:
            yield
        finally:
            if stand_in is not None and sys.modules.get(library) is stand_in:
                del sys.modules[library]

    return around


def defer(module: str, library: str) -> None:
    """While ``module`` executes (its next first import), ``library`` is the stand-in described
    above; also used for other libraries' modules (``codeground.app.gradio_start``)."""
    around_import(module, _stand_in_for(library))


def install() -> None:
    """Defer each library for the Haystack module that imports it (idempotent; too late for a module
    already imported)."""
    for module, library in DEFERRED.items():
        defer(module, library)
