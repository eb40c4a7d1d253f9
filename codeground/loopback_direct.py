"""Connections to this machine never go through a proxy in a codeground process.

Rule: codeground talks to servers on this machine: the chat's own page (Gradio checks it over HTTP
once it listens), Ollama on ``localhost:11434``, a Chroma server, the bench's polling. The HTTP
clients underneath (httpx, urllib, requests) send every request through ``http_proxy`` /
``https_proxy`` when those are set, loopback included, unless ``no_proxy`` / ``NO_PROXY`` names it;
behind a corporate proxy `codeground chat` died with a traceback (``httpx.ConnectError`` from
Gradio's start-up check through the proxy). So ``install()`` adds ``localhost``, ``127.0.0.1`` and
``::1`` to both spellings of the variable, keeping whatever the user listed there. Requests to other
hosts go through the user's proxy as before.

``install()`` runs when the ``codeground`` package is imported.

Usage:

```python
import os
import subprocess
import sys

env = {**os.environ, "http_proxy": "http://proxy.example:3128", "no_proxy": "intranet.example"}
code = "import codeground, os; print(os.environ['no_proxy'])"
out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
assert out.stdout.split() == ["intranet.example,localhost,127.0.0.1,::1"]
```
"""

from __future__ import annotations

import os

LOOPBACK = ("localhost", "127.0.0.1", "::1")


def install() -> None:
    for name in ("no_proxy", "NO_PROXY"):
        listed = [h.strip() for h in os.environ.get(name, "").split(",") if h.strip()]
        if "*" in listed:
            continue
        missing = [h for h in LOOPBACK if h not in listed]
        if missing:
            os.environ[name] = ",".join(listed + missing)
