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

import contextlib
import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator

from codeground.import_hooks import around_import

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


@contextlib.contextmanager
def _stand_in_for_torch(module: types.ModuleType) -> Iterator[None]:
    stand_in = None
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is not None:
        stand_in = sys.modules["torch"] = _TorchOnFirstUse("torch")
    try:
        yield
    finally:
        if stand_in is not None and sys.modules.get("torch") is stand_in:
            del sys.modules["torch"]


def install() -> None:
    """Defer torch for Haystack in this process (idempotent; too late once Haystack is imported)."""
    around_import(HAYSTACK_DEVICE, _stand_in_for_torch)
