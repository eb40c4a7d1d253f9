"""The on-disk embedding cache: exact round trips, least-recently-used eviction, rows in their pages,
the older layout moved over, a damaged file restarts."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import numpy as np
import pytest

from codeground.components.embedders import embedding_store
from codeground.components.embedders.embedding_store import REFRESH_S, EmbeddingStore

HOUR_NS = 3600 * 1_000_000_000


def _vec(x: float, dims: int = 4) -> np.ndarray:
    return np.full(dims, x, dtype=np.float32)  # 16 bytes at 4 dims


@pytest.fixture
def clock(monkeypatch) -> list[int]:
    """The store's clock (ns), moved by the test: ``clock[0] += …``."""
    now = [1_800_000_000 * 1_000_000_000]
    monkeypatch.setattr(embedding_store.time, "time_ns", lambda: now[0])
    return now


def _query(path, sql: str, *params) -> list[tuple]:
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        return db.execute(sql, params).fetchall()


def test_vectors_come_back_exactly_and_only_for_their_embedder(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite", max_bytes=1 << 20)
    a = store.key("embedder-a", "def f(): ...")
    store.put({a: np.array([0.1, -0.2, 0.3], dtype=np.float32)})
    again = EmbeddingStore(tmp_path / "e.sqlite", max_bytes=1 << 20)  # another process, later
    assert np.array_equal(again.get([a])[a], np.array([0.1, -0.2, 0.3], dtype=np.float32))
    assert again.get([again.key("embedder-b", "def f(): ...")]) == {}
    assert again.get([again.key("embedder-a", "def f(): ... ")]) == {}


def test_the_least_recently_used_vectors_go_first_when_the_cap_is_passed(tmp_path, clock):
    store = EmbeddingStore(tmp_path / "e.sqlite", max_bytes=16 * 10)
    keys = [store.key("e", str(i)) for i in range(10)]
    for i, key in enumerate(keys):  # one at a time: a distinct last use each
        clock[0] += HOUR_NS
        store.put({key: _vec(i)})
    clock[0] += 2 * HOUR_NS
    store.get(keys[:2])  # used again, hours later: now the most recent
    store.put({store.key("e", "new"): _vec(99)})  # 11 vectors > cap of 10: evict down to 9
    kept = store.get(keys)
    assert keys[0] in kept and keys[1] in kept
    assert keys[2] not in kept and keys[3] not in kept
    assert store.stats() == {"entries": 9, "bytes": 16 * 9}


def test_a_lookup_writes_nothing_until_a_hit_is_older_than_the_refresh_interval(tmp_path, clock):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, max_bytes=1 << 20)
    key = store.key("e", "x")
    store.put({key: _vec(1)})
    with closing(sqlite3.connect(path)) as watcher:

        def commits() -> int:  # changes whenever another connection commits to the file
            return watcher.execute("PRAGMA data_version").fetchone()[0]

        before = commits()
        clock[0] += (REFRESH_S - 1) * 1_000_000_000
        assert key in store.get([key])
        assert commits() == before
        clock[0] += 2 * 1_000_000_000
        assert key in store.get([key])
        refreshed = commits()
        assert refreshed != before
        store.get([key])
        assert commits() == refreshed


def test_the_running_total_follows_puts_replacements_and_evictions(tmp_path, clock):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, max_bytes=16 * 20)
    keys = [store.key("e", str(i)) for i in range(30)]
    for i, key in enumerate(keys):
        clock[0] += 1
        store.put({key: _vec(i)})
    store.put({keys[-1]: _vec(7, dims=8)})  # replaced by a longer vector
    assert _query(path, "SELECT entries, bytes FROM totals") == [tuple(store.stats().values())]
    assert store.stats()["bytes"] <= 16 * 20


def test_an_older_writers_replace_leaves_the_total_too_high_and_nothing_is_dropped_for_it(tmp_path):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, max_bytes=16 * 10)
    keys = [store.key("e", str(i)) for i in range(10)]
    store.put({key: _vec(i) for i, key in enumerate(keys)})  # exactly at the cap
    # codeground before 2026-12-03 wrote with INSERT OR REPLACE: its delete fires no trigger
    _query(path, "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", keys[0], _vec(5).tobytes(), 1)
    assert _query(path, "SELECT bytes FROM totals") == [(16 * 11,)]
    store.put({keys[1]: _vec(7)})  # a new put sees the total over the cap, recounts, drops nothing
    assert len(store.get(keys)) == 10
    assert _query(path, "SELECT entries, bytes FROM totals") == [(10, 16 * 10)]


def test_a_minilm_size_vector_sits_in_its_table_page_without_overflow(tmp_path):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, max_bytes=1 << 30)
    store.put({store.key("minilm", str(i)): _vec(i, dims=384) for i in range(2000)})
    pages = _query(path, "PRAGMA page_count")[0][0] * _query(path, "PRAGMA page_size")[0][0]
    # 2,000 × 1,536 bytes of vectors; the WITHOUT ROWID layout took 3.1× that (an overflow page each)
    assert pages < 1.5 * 2000 * 1536


def _older_layout(path, rows: list[tuple[bytes, bytes, int]]) -> None:
    """A cache file as codeground wrote it before 2026-12-03."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL, used INTEGER NOT NULL)"
            " WITHOUT ROWID"
        )
        db.execute("CREATE INDEX vectors_used ON vectors(used)")
        db.executemany("INSERT INTO vectors VALUES (?, ?, ?)", rows)


def test_a_cache_in_the_older_layout_is_moved_over_with_every_vector_and_last_use(tmp_path, clock):
    path = tmp_path / "e.sqlite"
    keys = [EmbeddingStore.key("minilm", str(i)) for i in range(300)]
    _older_layout(path, [(k, _vec(i, dims=384).tobytes(), clock[0] + i) for i, k in enumerate(keys)])
    size_before = path.stat().st_size
    store = EmbeddingStore(path, max_bytes=384 * 4 * 200)
    assert store.stats() == {"entries": 300, "bytes": 300 * 384 * 4}
    assert all(np.array_equal(v, _vec(keys.index(k), dims=384)) for k, v in store.get(keys).items())
    assert path.stat().st_size < size_before / 2
    store.put({store.key("minilm", "new"): _vec(1, dims=384)})  # past the cap: the oldest go
    kept = store.get(keys)
    assert keys[0] not in kept and keys[-1] in kept
    assert _query(path, "PRAGMA user_version") == [(embedding_store.LAYOUT,)]
    tables = {name for (name,) in _query(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"vectors", "totals"}


def test_a_copy_that_lost_its_layout_mark_keeps_its_triggers_and_its_cap(tmp_path):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, max_bytes=16 * 10)
    store.put({store.key("e", str(i)): _vec(i) for i in range(5)})
    _query(path, "PRAGMA user_version = 0")  # as `sqlite3 .dump` and a restore leave it
    again = EmbeddingStore(path, max_bytes=16 * 10)
    again.put({again.key("e", f"more {i}"): _vec(i) for i in range(50)})
    triggers = {name for (name,) in _query(path, "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert triggers == {"vectors_added", "vectors_dropped", "vectors_replaced"}
    assert again.stats()["bytes"] <= 16 * 10
    assert _query(path, "SELECT entries, bytes FROM totals") == [tuple(again.stats().values())]


def test_a_cache_busy_past_the_timeout_at_open_is_kept_whole_and_this_process_keeps_vectors_in_memory(
    tmp_path, caplog
):
    path = tmp_path / "e.sqlite"
    keys = [EmbeddingStore.key("minilm", str(i)) for i in range(20)]
    _older_layout(path, [(k, _vec(i).tobytes(), i) for i, k in enumerate(keys)])  # needs the write lock
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process is writing (or moving it over)
        store = EmbeddingStore(path, max_bytes=1 << 20, wait_s=0.2)
        mine = store.key("minilm", "mine")
        store.put({mine: _vec(7)})
        assert mine in store.get([mine])
        writer.execute("ROLLBACK")
    assert "busy" in caplog.text
    again = EmbeddingStore(path, max_bytes=1 << 20)
    assert len(again.get(keys)) == 20 and again.get([mine]) == {}


def test_a_write_that_finds_the_cache_busy_past_the_timeout_is_skipped_with_a_warning(
    tmp_path, caplog, clock
):
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, max_bytes=1 << 20, wait_s=0.2)
    kept = store.key("e", "kept")
    store.put({kept: _vec(1)})
    clock[0] += 2 * REFRESH_S * 1_000_000_000  # so that the lookup below wants to write too
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        store.put({store.key("e", "not kept"): _vec(2)})
        assert kept in store.get([kept])
        writer.execute("ROLLBACK")
    assert "1 vector not kept" in caplog.text
    assert "last uses not refreshed" in caplog.text
    assert store.stats() == {"entries": 1, "bytes": 16}


def test_a_damaged_cache_file_is_started_afresh(tmp_path):
    path = tmp_path / "e.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    store = EmbeddingStore(path, max_bytes=1 << 20)
    key = store.key("e", "x")
    store.put({key: _vec(1)})
    assert key in store.get([key])
