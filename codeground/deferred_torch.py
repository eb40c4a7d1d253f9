"""Torch is imported when something first uses it, not because Haystack was imported.

Rule: ``import haystack`` imports torch whenever it is installed (``haystack.utils.device`` holds it
to build ``torch.device`` objects), 1.5–2.2 s of every command on a 2-core machine, although a search
over static vectors, the index run and the chat page never touch torch. While that one module
executes, ``torch`` names a stand-in; the first attribute read on the stand-in (``torch.device``,
``torch.cuda``…) imports the real torch and is answered by it. The stand-in is removed from
``sys.modules`` as soon as the module has executed, so every other ``import torch`` gets the real
module and code that needs torch (the cross-encoder, the distillation, the OpenVINO export) runs as
it always did. Without torch installed nothing changes: Haystack sees it missing, as before.

``install()`` runs when the ``codeground`` package is imported; it does nothing if Haystack is
already imported.

Usage:

```python
import subprocess
import sys

code = "import codeground, haystack, sys; print('torch' in sys.modules)"
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
assert out.stdout.strip() == "False"
```
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

# The one module of Haystack that imports torch at `import haystack` time.
HAYSTACK_DEVICE = "haystack.utils.device"


class _TorchOnFirstUse(types.ModuleType):
    """Stands in for ``torch`` in the modules imported while it is in place; forwards every read."""

    def __getattr__(self, name: str):
        if sys.modules.get("torch") is self:  # read while still in place: make way for the real one
            del sys.modules["torch"]
        return getattr(importlib.import_module("torch"), name)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module("torch"))


class _WithStandIn(importlib.abc.Loader):
    """Executes a module with the stand-in as ``torch``, then takes the stand-in away."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        stand_in = None
        if "torch" not in sys.modules and importlib.util.find_spec("torch") is not None:
            stand_in = sys.modules["torch"] = _TorchOnFirstUse("torch")
        try:
            self._loader.exec_module(module)
        finally:
            if stand_in is not None and sys.modules.get("torch") is stand_in:
                del sys.modules["torch"]

    def __getattr__(self, name: str):  # get_source, get_filename… as the file's own loader answers
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != HAYSTACK_DEVICE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _WithStandIn(spec.loader)
        return spec


def install() -> None:
    """Defer torch for Haystack in this process (idempotent; too late once Haystack is imported)."""
    if HAYSTACK_DEVICE in sys.modules or any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())
