"""Offline is normal: a hub model that cannot load is known at once, with one probe and no retries."""

from __future__ import annotations

import socket

import pytest

from codeground.components import hub
from codeground.components.hub import unavailable
from tests.conftest import closed_port, hub_cache_with


@pytest.fixture
def online_setting(monkeypatch):
    """HF_HUB_OFFLINE unset (a user who never set it), the hub pointed at a closed loopback port."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    hub.hub_reachable.cache_clear()
    yield
    hub.hub_reachable.cache_clear()


@pytest.fixture
def probes(monkeypatch) -> list:
    """The addresses connected to from now on (each probe of the hub is one)."""
    seen = []
    real = socket.create_connection

    def counting(address, *args, **kwargs):
        seen.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", counting)
    return seen


def test_uncached_hub_model_without_network_is_refused_after_one_probe(online_setting, probes):
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


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty Hugging Face hub cache of this test's own (what ``HF_HUB_CACHE`` names)."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


def test_a_cached_hub_model_is_read_from_its_snapshot_without_asking_the_network(
    online_setting, hub_cache, tmp_path, monkeypatch
):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "tokenizer.json").write_text("{}")
    snapshot = hub_cache_with(model, hub_cache, "org/tiny")
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail("asked the network"))
    folder = hub.hub_folder("org/tiny", ["*.json"], required=("config.json", "tokenizer.json"))
    assert folder == snapshot and (folder / "tokenizer.json").read_text() == "{}"


def test_a_hub_model_neither_cached_nor_reachable_is_one_oserror_after_one_probe(
    online_setting, hub_cache, probes
):
    for _ in range(2):
        with pytest.raises(OSError, match=r"^org/missing is not in the local model cache and the hub cannot"):
            hub.hub_folder("org/missing", ["*.json"], required=("config.json",))
    assert len(probes) == 1  # no download tried, no retry


def test_a_cached_snapshot_without_a_required_file_is_not_taken_as_the_model(
    online_setting, hub_cache, tmp_path
):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    hub_cache_with(model, hub_cache, "org/partial")
    with pytest.raises(OSError, match="hub cannot be reached"):  # it would download the rest
        hub.hub_folder("org/partial", ["*.json"], required=("config.json", "tokenizer.json"))


def test_hub_ids_are_org_slash_name_and_never_a_local_folder(tmp_path):
    assert hub.is_hub_id("cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert not hub.is_hub_id(str(tmp_path))
    assert not hub.is_hub_id("./models/mine") and not hub.is_hub_id("a/b/c") and not hub.is_hub_id("plain")
