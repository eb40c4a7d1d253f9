"""Where a server is asked to listen is checked before it loads anything (``listen_address``); what
a server could listen on passes (the out-of-range, in-use and foreign-address cases run through the
CLI in tests/reliability/test_bad_user_input.py and tests/app/serve/test_serve.py)."""

from __future__ import annotations

import socket

import pytest

from codeground.app.errors import CodegroundError
from codeground.app.serve.listen_address import (
    bind_name,
    check_listen_address,
    is_loopback,
    listen_url,
    url_host,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "0.0.0.0"])
def test_an_address_a_server_can_listen_on_passes(host):
    check_listen_address(host, _free_port())


def test_an_ipv6_host_in_brackets_is_the_address_inside_them():
    """``--host [::1]`` is how a URL writes it; the chat's server takes it so, and had before the check."""
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
            port = s.getsockname()[1]
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    check_listen_address("[::1]", port)
    check_listen_address("::1", port)
    with socket.socket(socket.AF_INET6) as holder:
        holder.bind(("::1", port))
        holder.listen()
        in_use = rf"^cannot serve on \[::1\]:{port}: Address already in use$"
        with pytest.raises(CodegroundError, match=in_use):
            check_listen_address("[::1]", port)


@pytest.mark.parametrize(
    ("host", "bound", "in_a_url", "loopback"),
    [
        ("127.0.0.1", "127.0.0.1", "127.0.0.1", True),
        ("localhost", "localhost", "localhost", True),
        ("[::1]", "::1", "[::1]", True),
        ("::1", "::1", "[::1]", True),
        ("::", "::", "[::]", False),
        ("0.0.0.0", "0.0.0.0", "0.0.0.0", False),
        ("192.0.2.1", "192.0.2.1", "192.0.2.1", False),
        ("example.lan", "example.lan", "example.lan", False),
    ],
)
def test_both_servers_bind_one_address_for_a_host_and_a_url_brackets_ipv6(host, bound, in_a_url, loopback):
    """uvicorn binds the bare address, Gradio takes it as a URL writes it, the announcement is a URL a
    browser opens, and only a loopback address skips the token warning."""
    assert bind_name(host) == bound
    assert url_host(host) == in_a_url
    assert listen_url(host, 80) == f"http://{in_a_url}:80"
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["", "  ", "[]"])
def test_an_empty_host_is_refused_not_read_as_every_interface(host):
    """uvicorn read an empty host as every interface and Gradio as 127.0.0.1: an unset ``$HOST`` in a
    script must not open a server to the network."""
    with pytest.raises(CodegroundError, match=r"^--host is empty: give an address"):
        check_listen_address(host, _free_port())
