"""The address a server of ours (``codeground chat``, ``codeground serve``) is asked to listen on,
checked before it loads anything.

Rule: the port is 1–65535, the host resolves, and the port can be bound there now (a socket is bound
with ``SO_REUSEADDR``, as uvicorn binds, and closed again). Otherwise one ``CodegroundError`` line
says which: a port out of range had ended the chat in a traceback, a host that does not resolve in
Gradio's "Cannot find empty port", and a port in use only after the models had loaded.

```python
from codeground.app.errors import CodegroundError
from codeground.app.listen_address import check_listen_address

try:
    check_listen_address("127.0.0.1", 0)
except CodegroundError as exc:
    print(exc)  # --port must be between 1 and 65535, got 0
```
"""

from __future__ import annotations

import socket

from codeground.app.errors import CodegroundError


def check_listen_address(host: str, port: int) -> None:
    """Raise ``CodegroundError`` unless a server could listen on ``host:port`` now (module rule)."""
    if not 1 <= port <= 65535:
        raise CodegroundError(f"--port must be between 1 and 65535, got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise CodegroundError(f"cannot serve on {host}:{port}: {reason}") from exc
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise CodegroundError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from exc
