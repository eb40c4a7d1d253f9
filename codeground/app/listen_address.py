"""The address a server of ours (``codeground chat``, ``codeground serve``) is asked to listen on,
checked before it loads anything.

Rule: the port is 1–65535, the host resolves (``[::1]`` as ``::1``; an empty host is every
interface), and the port can be bound there now on one of the addresses it resolves to (a socket is
bound with ``SO_REUSEADDR``, as uvicorn binds, and closed again; an address this machine cannot
assign is skipped, as asyncio skips it). Otherwise one ``CodegroundError`` line says which: a port out
of range had ended the chat in a traceback, a host that does not resolve in Gradio's "Cannot find
empty port", and a port in use only after the models had loaded.

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

import errno
import socket

from codeground.app.errors import CodegroundError


def check_listen_address(host: str, port: int) -> None:
    """Raise ``CodegroundError`` unless a server could listen on ``host:port`` now (module rule)."""
    port = int(port)
    if not 1 <= port <= 65535:
        raise CodegroundError(f"--port must be between 1 and 65535, got {port}")
    name = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    shown = f"[{name}]" if ":" in name else name
    try:
        found = socket.getaddrinfo(name or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise CodegroundError(f"cannot serve on {shown}:{port}: {reason}") from exc
    failure: OSError | None = None
    for family, kind, proto, _, address in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
                return
            except OSError as exc:
                if failure is None or failure.errno == errno.EADDRNOTAVAIL:
                    failure = exc  # a port in use says more than an address this machine lacks
    assert failure is not None  # getaddrinfo returns at least one address or raises
    raise CodegroundError(f"cannot serve on {shown}:{port}: {failure.strerror or failure}") from failure
