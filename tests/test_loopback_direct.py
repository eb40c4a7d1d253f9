"""Servers on this machine are reached directly even with a proxy set (codeground.loopback_direct)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import PROJECT_ROOT, closed_port

PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


def _no_proxy_after_import(**env: str) -> tuple[str, str]:
    clean = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", *PROXY_VARS)}
    code = "import codeground, os; print(os.environ['no_proxy'] + '|' + os.environ['NO_PROXY'])"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT,
        env={**clean, **env},
    )
    assert proc.returncode == 0, proc.stderr
    lower, upper = proc.stdout.strip().split("|")
    return lower, upper


def test_loopback_is_added_to_no_proxy_in_both_spellings_and_the_users_entries_are_kept():
    assert _no_proxy_after_import() == ("localhost,127.0.0.1,::1",) * 2
    lower, upper = _no_proxy_after_import(no_proxy="intranet.example, localhost", NO_PROXY="*")
    assert lower == "intranet.example,localhost,127.0.0.1,::1"
    assert upper == "*"  # already bypasses every host


def test_the_chat_serves_its_page_behind_a_proxy_that_cannot_be_reached(indexed_sample, monkeypatch):
    """Gradio checks its own page over HTTP once it listens; through the proxy that check failed and
    `codeground chat` ended in a traceback (httpx.ConnectError)."""
    from codeground.app.bench.timings import _chat_start

    _, index_dir = indexed_sample
    dead = f"http://127.0.0.1:{closed_port()}"
    for name in PROXY_VARS:
        monkeypatch.setenv(name, dead)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    started = _chat_start(index_dir, runs=1, timeout_s=90)
    assert started["median_s"] > 0 and started["first_launch_s"] > 0
