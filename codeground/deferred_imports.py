"""Libraries other libraries import at import time are imported when first used, not before.

Rule: some modules of the libraries codeground imports import another library at import time that
codeground's commands use only in cases they may never meet:

- ``haystack.utils.device`` imports torch whenever it is installed, to build ``torch.device``
  objects: 1.5–2.2 s of every command on a 2-core machine, although a search over static vectors,
  the index run and the chat page never touch torch;
- ``haystack.telemetry._telemetry`` imports posthog (and with it requests and urllib3), which only
  its telemetry client uses, and codeground turns Haystack's telemetry off unless the user turns
  it on: 0.08 s of every command;
- ``httpx`` imports its own command line (``httpx._main``: click, rich, pygments) to offer
  ``httpx.main``, which only the ``httpx`` console script calls, in a process of its own;
- ``chromadb.telemetry.opentelemetry`` imports OpenTelemetry's gRPC span exporter (grpc,
  protobuf), which it only constructs when the user configures a collector;
- ``openvino`` imports its model converter (``openvino.tools.ovc``) to offer
  ``openvino.convert_model``, which only the one-time exports call, while every search, index fill
  and chat that loads MiniLM imports ``openvino`` to read the exported model.
httpx's command line and chromadb's exporter are about 0.1 s of a cold ``codeground search`` (the
difference of 20 launches alternated with launches without them: median 0.085 s, mean 0.12 s;
2-core Zen 4), OpenVINO's converter 0.04 s of the same import (``-X importtime``).

While one of those modules executes, the library's name in ``sys.modules`` is a stand-in; the first
attribute read or write on the stand-in (``torch.device``, ``posthog.api_key = …``) imports the
real library and is answered by it. A name the module takes with ``from library import name`` is
read at once, so for a name the module only calls (the names in ``DEFERRED``) the stand-in answers
with a function that imports the library when first called and calls the library's own (an import
error inside the library, such as httpx's command line without click, comes at that call); any
other name read imports the library at once. The stand-in leaves ``sys.modules`` as soon as the
module has executed, so every other import of the library gets the real module and code that needs
it (the cross-encoder, the distillation, the OpenVINO export; Haystack's telemetry, chromadb's
tracing when they are on) runs as it always did. A library that is not installed is not stood in
for: the module sees it missing, as before.

``install()`` runs when the ``codeground`` package is imported; it does nothing for a module that is
already imported.

Usage:

```python
import subprocess
import sys

code = (
    "import codeground, haystack, httpx, chromadb, openvino, sys; "
    "print([name in sys.modules for name in ('torch', 'posthog', 'httpx._main', "
    "'opentelemetry.exporter.otlp.proto.grpc.trace_exporter', 'openvino.tools.ovc')])"
)
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
assert out.stdout.strip() == "[False, False, False, False, False]"
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

# A library's module -> the library it imports at import time, deferred until first used, and the
# names the module takes from it with `from library import name` and only calls.
DEFERRED: dict[str, tuple[str, tuple[str, ...]]] = {
    "haystack.utils.device": ("torch", ()),
    "haystack.telemetry._telemetry": ("posthog", ()),
    "httpx": ("httpx._main", ("main",)),
    "chromadb.telemetry.opentelemetry": (
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", ("OTLPSpanExporter",)
    ),
    "openvino": ("openvino.tools.ovc", ("convert_model",)),
}


class _OnFirstUse(types.ModuleType):
    """Stands in for a library in the module imported while it is in place; forwards every access
    but to the names it answers itself (``called``)."""

    def __init__(self, library: str, called: tuple[str, ...] = ()) -> None:
        super().__init__(library)
        set_here = types.ModuleType.__setattr__  # on the stand-in itself, not forwarded
        set_here(self, "_called", called)
        for name in called:
            set_here(self, name, _called_later(self, name))

    def _real(self) -> types.ModuleType:
        name = self.__name__
        if sys.modules.get(name) is self:  # used while still in place: make way for the real one
            del sys.modules[name]
        return importlib.import_module(name)

    def __getattr__(self, name: str):
        if name == "__path__" and self.__dict__.get("_called"):
            # `from library import name` first asks whether the library is a package (to import
            # submodules by those names); a stand-in that answers its module's names acts as none
            raise AttributeError(name)
        return getattr(self._real(), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._real(), name, value)

    def __dir__(self) -> list[str]:
        return dir(self._real())


def _installed(library: str) -> bool:
    """Whether ``library`` can be found; not when its parent package is missing (``find_spec`` raises
    then), so the module meets the missing library itself, as it would without the stand-in."""
    try:
        return importlib.util.find_spec(library) is not None
    except ImportError:
        return False


def _called_later(stand_in: _OnFirstUse, name: str) -> Callable:
    """What the stand-in answers for ``name``: a function that imports the library when first
    called and calls the library's own ``name``."""

    def call(*args, **kwargs):
        return getattr(stand_in._real(), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{stand_in.__name__}.{name}``, imported when first called."
    return call


def _stand_in_for(
    library: str, called: tuple[str, ...] = ()
) -> Callable[[types.ModuleType], contextlib.AbstractContextManager]:
    @contextlib.contextmanager
    def around(module: types.ModuleType) -> Iterator[None]:
        stand_in = None
        if library not in sys.modules and _installed(library):
            stand_in = sys.modules[library] = _OnFirstUse(library, called)
        try:
            yield
        finally:
            if stand_in is not None and sys.modules.get(library) is stand_in:
                del sys.modules[library]

    return around


def defer(module: str, library: str, called: tuple[str, ...] = ()) -> None:
    """While ``module`` executes (its next first import), ``library`` is the stand-in described
    above, answering each name of ``called`` with a function that imports it when called; also
    used by ``codeground.app.serve.gradio_start``."""
    around_import(module, _stand_in_for(library, called))


def install() -> None:
    """Defer each library for the module that imports it (idempotent; too late for a module already
    imported)."""
    for module, (library, called) in DEFERRED.items():
        defer(module, library, called)
