"""Import gradio without regenerating its type stubs, and without pandas or the MCP SDK until used.

Rules:
- At every import, gradio rewrites the ``.pyi`` stub of each of its component classes inside its
  own installed package (``gradio.component_meta.create_or_modify_pyi``: it reads and parses each
  component's source file, about 80 of them), which is 1.0 s of a 2.3 s import on a 2-core EPYC
  and writes into site-packages at run time. The stubs only serve type checkers and ship with the
  wheel, so the chat process imports gradio with that step turned off.
- ``gradio.caching`` imports pandas at import time only to hash DataFrames for ``gr.cache``, which
  the chat never calls: 0.2–0.3 s of every chat start on a 2-core EPYC. While that module executes
  pandas is ``codeground.deferred_imports``' stand-in, so it is imported when first used.
- ``gradio`` imports ``gradio.mcp``, and with it the ``mcp`` SDK, at import time, to offer
  ``gr.mcp`` and its decorators, which only an app launched with ``mcp_server=True`` uses; the chat
  is not one: 0.16 s of gradio's 1.6 s import (paired median of 20 fresh processes alternated,
  2-core EPYC Zen 4).
  While gradio's package executes, ``gradio.mcp`` is the same stand-in; ``gradio.server`` takes the
  decorators (``MCP_DECORATORS``) from it at import and calls them later, so the stand-in answers
  them with functions that import ``gradio.mcp`` when first called. ``mcp_server=True`` imports it
  when the app is launched, as before.
Nothing else about gradio changes.

Usage:

```python
from codeground.app.serve.gradio_start import import_gradio

gr = import_gradio()
assert hasattr(gr, "Blocks")
```
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from types import ModuleType

from codeground.deferred_imports import defer
from codeground.import_hooks import around_import

STUB_WRITER = "gradio.component_meta"
PANDAS_AT_IMPORT = "gradio.caching"  # imports pandas only to hash DataFrames for gr.cache
MCP_AT_IMPORT = "gradio"  # the package imports gradio.mcp (and the mcp SDK) to offer gr.mcp
MCP_DECORATORS = ("tool", "resource", "prompt")  # gradio.server takes them at import, calls later


def _no_stub_writing(*args, **kwargs) -> None:
    """Stands in for ``create_or_modify_pyi``: the installed stubs stay as the wheel shipped them."""


@contextlib.contextmanager
def _without_stub_writing(module: ModuleType) -> Iterator[None]:
    yield
    if callable(getattr(module, "create_or_modify_pyi", None)):
        module.create_or_modify_pyi = _no_stub_writing


def import_gradio() -> ModuleType:
    """``gradio``, imported (once per process) without its stub regeneration, without pandas or the
    MCP SDK until they are used, and without analytics."""
    # A local tool: no usage analytics or version checks leave this machine.
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    around_import(STUB_WRITER, _without_stub_writing)
    defer(PANDAS_AT_IMPORT, "pandas")
    defer(MCP_AT_IMPORT, "gradio.mcp", MCP_DECORATORS)
    import gradio

    return gradio
