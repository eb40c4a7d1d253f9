"""The address a server of ours (``codeground chat``, ``codeground serve``) is asked to listen on,
checked before it loads anything.

Rule: the port is 1–65535, the host resolves, and the port can be bound there now on one of the
addresses it resolves to (a socket is bound with ``SO_REUSEADDR``, as uvicorn binds, and closed
again; an address this machine cannot assign is skipped, as asyncio skips it). Otherwise one
``CodegroundError`` line says which: a port out of range had ended the chat in a traceback, a host
that does not resolve in Gradio's "Cannot find empty port", and a port in use only after the models
had loaded.

Both servers bind the same address for a ``--host``, written with or without a URL's brackets
(``[::1]`` or ``::1``): ``bind_name`` is the bare address, which uvicorn (``codeground serve``) binds,
and had failed on the brackets with "Name or service not known" after loading everything;
``url_host`` is it as a URL writes it, which Gradio (``codeground chat``) takes, and had ended in a
traceback on a bare ``::1``. An empty host is refused (uvicorn read it as every interface, Gradio as
127.0.0.1: an unset ``$HOST`` in a script must not open a server to the network); ``0.0.0.0`` says
every interface. ``listen_url`` is the address a server announces; ``is_loopback`` says whether
only this machine can reach it (both servers warn otherwise).

```python
from codeground.app.errors import CodegroundError
from codeground.app.serve.listen_address import (
    bind_name,
    check_listen_address,
    is_loopback,
    listen_url,
    url_host,
)

try:
    check_listen_address("127.0.0.1", 0)
except CodegroundError as exc:
    print(exc)  # --port must be between 1 and 65535, got 0
assert bind_name("[::1]") == "::1" and url_host("::1") == "[::1]"
assert listen_url("::1", 8000) == "http://[::1]:8000"
assert is_loopback("localhost") and not is_loopback("0.0.0.0")
```
"""

from __future__ import annotations

import errno
import ipaddress
import socket

from codeground.app.errors import CodegroundError


def bind_name(host: str) -> str:
    """The name a server binds for ``--host`` (module rule)."""
    host = host.strip()
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def url_host(host: str) -> str:
    """The address as a URL writes it: an IPv6 literal in brackets (module rule)."""
    name = bind_name(host)
    return f"[{name}]" if ":" in name else name


def listen_url(host: str, port: int) -> str:
    """``http://host:port`` as a browser takes it."""
    return f"http://{url_host(host)}:{port}"


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` is reachable from this machine only."""
    name = bind_name(host)
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_listen_address(host: str, port: int) -> None:
    """Raise ``CodegroundError`` unless a server could listen on ``host:port`` now (module rule)."""
    port = int(port)
    if not 1 <= port <= 65535:
        raise CodegroundError(f"--port must be between 1 and 65535, got {port}")
    if not bind_name(host):
        raise CodegroundError("--host is empty: give an address (127.0.0.1, or 0.0.0.0 for every interface)")
    name = bind_name(host)
    shown = f"{url_host(host)}:{port}"
    try:
        found = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise CodegroundError(f"cannot serve on {shown}: {reason}") from exc
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
    raise CodegroundError(f"cannot serve on {shown}: {failure.strerror or failure}") from failure
