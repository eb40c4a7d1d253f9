"""Build a model folder (an export, a distillation) in a child process: the caller never holds torch.

Rules:
- ``in_child("package.module:function", **kwargs)`` calls that module-level function with those
  keyword arguments in a fresh ``sys.executable`` and returns when it has returned. Arguments travel
  as JSON: strings, numbers, booleans, ``None``, lists and dicts, and ``Path`` values, which arrive as
  ``Path``. The function's return value is not sent back: a build writes its folder.
- The caller's memory stays its own. Exporting imports torch and transformers (and nncf for int8);
  a process that exported in-process held them afterwards (a MiniLM fp32 export: 33 → 464 MB RSS,
  a 2-core Zen 4). A chat, MCP or HTTP server that made an export on its first question kept that
  for its life, and an index run carried it through chunking and embedding.
- A crash of a native library in the child (a segfault while tracing or quantizing) fails the build
  with one clear error naming the signal; the caller goes on, and its lock and staging folder are
  released as for any failed build (``model_cache.built_once``).
- The child's stdout (progress bars) is discarded and its warnings (the tracer's) are not shown. Its
  stderr only serves a failure's message: the exception the function raised (type and message, one
  line), else its last lines before it died.
- The child inherits the environment (cache folder, offline flags, thread limits) and imports the
  same codeground as the caller (that folder goes first on ``PYTHONPATH``).

Usage:
```python
import tempfile
from pathlib import Path

from codeground.components.embedders.child_build import ChildBuildFailed, in_child

out = Path(tempfile.mkdtemp())
(out / "a.txt").write_text("made elsewhere")
in_child("shutil:copy2", src=out / "a.txt", dst=out / "b.txt")  # any importable function
assert (out / "b.txt").read_text() == "made elsewhere"
try:
    in_child("shutil:copy2", src=out / "missing", dst=out / "c.txt")
except ChildBuildFailed as failed:
    assert "FileNotFoundError" in str(failed) and "\\n" not in str(failed)
else:
    raise AssertionError("a failed build must raise")
```
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the folder that holds ``codeground``
TAIL_LINES = 3  # of the child's stderr, in the error when it ends without raising (a signal)
RAISED = "child_build raised: "  # the child's last line when the function raised


class ChildBuildFailed(RuntimeError):
    """A build in a child process failed: the message is one line with its last words."""


def in_child(target: str, **kwargs: Any) -> None:
    """Run ``target`` (``"module:function"``) with ``kwargs`` in a fresh Python process (module rules)."""
    request = json.dumps(_request(target, kwargs))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(  # noqa: S603 - our own interpreter running our own module
        [sys.executable, "-m", __name__, request],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        check=False,
    )
    if done.returncode == 0:
        return
    code = done.returncode
    how = f"exit status {code}" if code > 0 else f"killed by {_signal(-code)}"
    lines = [line.strip() for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    raised = [line.removeprefix(RAISED) for line in lines if line.startswith(RAISED)]
    words = raised[-1] if raised else " | ".join(lines[-TAIL_LINES:]) or "nothing on stderr"
    raise ChildBuildFailed(f"{target} failed in its child process ({how}): {words}")


def _signal(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name
        return f"signal {number}"


def _request(target: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    paths = {k: str(v) for k, v in kwargs.items() if isinstance(v, Path)}
    return {"target": target, "kwargs": {k: v for k, v in kwargs.items() if k not in paths}, "paths": paths}


def _main(request: str) -> None:
    warnings.simplefilter("ignore")  # a tracer's warnings are noise to a user, and would hide the error
    spec = json.loads(request)
    module, _, name = spec["target"].partition(":")
    try:
        function = getattr(importlib.import_module(module), name)
        function(**spec["kwargs"], **{k: Path(v) for k, v in spec["paths"].items()})
    except Exception as exc:  # noqa: BLE001 - reported to the caller as one line
        print(f"{RAISED}{type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    _main(sys.argv[1])
