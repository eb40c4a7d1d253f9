"""Import gradio without regenerating its type stubs.

Rule: at every import, gradio rewrites the ``.pyi`` stub of each of its component classes inside its
own installed package (``gradio.component_meta.create_or_modify_pyi``: it reads and parses each
component's source file, about 80 of them), which is 1.0 s of a 2.3 s import on a 2-core EPYC and
writes into site-packages at run time. The stubs only serve type checkers and ship with the wheel, so
the chat process imports gradio with that step turned off; nothing else about gradio changes.

Usage:

```python
from codeground.app.gradio_start import import_gradio

gr = import_gradio()
assert hasattr(gr, "Blocks")
```
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from types import ModuleType

from codeground.import_hooks import around_import

STUB_WRITER = "gradio.component_meta"


def _no_stub_writing(*args, **kwargs) -> None:
    """Stands in for ``create_or_modify_pyi``: the installed stubs stay as the wheel shipped them."""


@contextlib.contextmanager
def _without_stub_writing(module: ModuleType) -> Iterator[None]:
    yield
    if callable(getattr(module, "create_or_modify_pyi", None)):
        module.create_or_modify_pyi = _no_stub_writing


def import_gradio() -> ModuleType:
    """``gradio``, imported (once per process) without its stub regeneration and without analytics."""
    # A local tool: no usage analytics or version checks leave this machine.
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    around_import(STUB_WRITER, _without_stub_writing)
    import gradio

    return gradio
