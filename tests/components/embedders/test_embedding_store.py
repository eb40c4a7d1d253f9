"""The on-disk embedding cache: exact round trips, least-recently-used eviction, a damaged file restarts."""

from __future__ import annotations

import numpy as np

from codeground.components.embedders.embedding_store import EmbeddingStore


def _vec(x: float) -> np.ndarray:
    return np.full(4, x, dtype=np.float32)  # 16 bytes


def test_vectors_come_back_exactly_and_only_for_their_embedder(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite", max_bytes=1 << 20)
    a = store.key("embedder-a", "def f(): ...")
    store.put({a: np.array([0.1, -0.2, 0.3], dtype=np.float32)})
    again = EmbeddingStore(tmp_path / "e.sqlite", max_bytes=1 << 20)  # another process, later
    assert np.array_equal(again.get([a])[a], np.array([0.1, -0.2, 0.3], dtype=np.float32))
    assert again.get([again.key("embedder-b", "def f(): ...")]) == {}
    assert again.get([again.key("embedder-a", "def f(): ... ")]) == {}


def test_the_least_recently_used_vectors_go_first_when_the_cap_is_passed(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite", max_bytes=16 * 10)
    keys = [store.key("e", str(i)) for i in range(10)]
    for i, key in enumerate(keys):  # one at a time: a distinct last use each
        store.put({key: _vec(i)})
    store.get(keys[:2])  # used again: now the most recent
    store.put({store.key("e", "new"): _vec(99)})  # 11 vectors > cap of 10: evict down to 9
    kept = store.get(keys)
    assert keys[0] in kept and keys[1] in kept
    assert keys[2] not in kept and keys[3] not in kept
    assert store.stats()["bytes"] <= 16 * 9


def test_a_damaged_cache_file_is_started_afresh(tmp_path):
    path = tmp_path / "e.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    store = EmbeddingStore(path, max_bytes=1 << 20)
    key = store.key("e", "x")
    store.put({key: _vec(1)})
    assert key in store.get([key])
