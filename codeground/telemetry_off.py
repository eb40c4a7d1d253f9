"""No usage data leaves the machine from a codeground process, and nothing is counted in the home folder.

Rule: every library codeground loads has its telemetry off in a codeground process.

- Haystack (``HAYSTACK_TELEMETRY_ENABLED``) and Chroma (``ANONYMIZED_TELEMETRY``) have a switch in
  the environment: it defaults to off here, and a user who sets it keeps their value.
- OpenVINO and NNCF have none. ``import openvino`` (every search, index and chat that loads MiniLM)
  counts the import in ``~/intel/stats`` and sends a Google Analytics event from a forked process it
  waits up to 3 s for, unless the user once ran OpenVINO's ``opt_in_out --opt_out``; an export sends
  more, NNCF's quantization too. Both libraries fall back to their own no-op stub when the
  ``openvino_telemetry`` package cannot be imported (``except ImportError``), so ``install()`` makes
  it unimportable in this process: ``sys.modules[name] = None``, which Python's import system reads
  as "not found". A process that imported it before codeground keeps it.
- Gradio's analytics are turned off where Gradio is imported (``codeground.app.serve.gradio_start``).

``install()`` runs when the ``codeground`` package is imported, before any of these libraries.

Usage:

```python
import subprocess
import sys

code = "import codeground, openvino.tools.ovc.telemetry_utils as t; print(t.tm.__name__)"
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
assert out.stdout.strip() == "openvino.tools.ovc.telemetry_stub"
```
"""

from __future__ import annotations

import os
import sys

# Environment switches, off unless the user set them.
SWITCHES = {"HAYSTACK_TELEMETRY_ENABLED": "False", "ANONYMIZED_TELEMETRY": "False"}
# Packages whose users fall back to a no-op stub when they cannot be imported.
UNIMPORTABLE = ("openvino_telemetry",)


def install() -> None:
    for name, value in SWITCHES.items():
        os.environ.setdefault(name, value)
    for name in UNIMPORTABLE:
        sys.modules.setdefault(name, None)
