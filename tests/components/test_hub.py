"""Offline is normal: a hub model that cannot load is known at once, with one probe and no retries."""

from __future__ import annotations

import socket

import pytest

from codeground.components import hub
from codeground.components.hub import unavailable
from tests.conftest import closed_port


@pytest.fixture
def online_setting(monkeypatch):
    """HF_HUB_OFFLINE unset (a user who never set it), the hub pointed at a closed loopback port."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    hub.hub_reachable.cache_clear()
    yield
    hub.hub_reachable.cache_clear()


def test_uncached_hub_model_without_network_is_refused_after_one_probe(online_setting, monkeypatch):
    probes = []
    real = socket.create_connection

    def counting(address, *args, **kwargs):
        probes.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", counting)
    first = unavailable("cross-encoder/not-in-any-cache-xyz")
    second = unavailable("cross-encoder/another-missing-model")
    assert isinstance(first, OSError) and "cannot be reached (offline)" in str(first)
    assert isinstance(second, OSError)
    assert len(probes) == 1  # the answer is kept for the process: never a retry loop


def test_offline_setting_refuses_without_any_probe(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: pytest.fail("probed although offline"))
    assert "HF_HUB_OFFLINE is set" in str(unavailable("cross-encoder/not-in-any-cache-xyz"))


def test_local_folders_are_judged_by_existence_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: pytest.fail("probed for a local folder"))
    assert unavailable(str(tmp_path)) is None
    assert "no model folder" in str(unavailable(str(tmp_path / "missing")))


def test_a_reachable_hub_lets_the_library_download(online_setting, monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
    try:
        assert unavailable("cross-encoder/not-in-any-cache-xyz") is None
    finally:
        listener.close()


def test_a_name_lookup_that_hangs_is_not_waited_for(monkeypatch):
    import threading

    release = threading.Event()

    def hanging(*args, **kwargs):
        release.wait(60)  # a resolver that never answers
        raise OSError("gave up")

    monkeypatch.setattr(socket, "create_connection", hanging)
    try:
        assert hub.hub_reachable("https://hub.invalid", 0.2) is False
        # the answer came while the lookup still hangs: it was not waited for
        assert any(t.name == "codeground-hub-probe" and t.is_alive() for t in threading.enumerate())
    finally:
        release.set()
        hub.hub_reachable.cache_clear()
