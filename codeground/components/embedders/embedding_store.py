"""Vectors already computed on this machine, kept on disk so that no text is embedded twice.

Rules:
- A vector is stored under sha256(embedder identity + text), in one SQLite file shared by every
  index, generation and checkout on the machine (default ``$CODEGROUND_CACHE/embeddings.sqlite``).
- Each row sits whole in a table page (a rowid table with the key in its own unique index): a
  WITHOUT ROWID table keeps at most about 1 kB of a row in its page, so every MiniLM vector (1.5 kB)
  took a 4 kB overflow page of its own and the file was 3.1× its vectors. A file in that older
  layout is moved to this one when it is first opened.
- A hit refreshes the entry's last use when that is more than ``REFRESH_S`` old: the eviction order
  only has to tell what a machine uses now from what it stopped using, and a lookup that finds
  everything fresh writes nothing.
- When the vectors pass ``max_bytes`` the least recently used are dropped until they fill at most
  nine tenths of it. Their running total is kept by triggers, so a write does not scan the file;
  it is recounted before anything is dropped.
- Concurrent indexers share the file (SQLite's own locking; a busy file is waited for). An
  unreadable cache is not an error: it is started afresh.

Usage:
```python
import numpy as np

from codeground.components.embedders.embedding_store import EmbeddingStore

store = EmbeddingStore("/tmp/embeddings.sqlite", max_bytes=1 << 20)
key = store.key("minilm-int8-abc123", "def f(): ...")
store.put({key: np.ones(4, dtype=np.float32)})
store.get([key])  # {key: array([1., 1., 1., 1.], dtype=float32)}
```
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path

import numpy as np

from codeground.components.embedders.model_cache import cache_base

logger = logging.getLogger(__name__)

LAYOUT = 2  # PRAGMA user_version of this layout; 0: the WITHOUT ROWID table of before 2026-12-03
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (key BLOB NOT NULL UNIQUE, vector BLOB NOT NULL,"
    " used INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used)",
    "CREATE TABLE IF NOT EXISTS totals (one INTEGER PRIMARY KEY CHECK (one = 1), entries INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO totals VALUES (1, 0, 0)",
    "CREATE TRIGGER IF NOT EXISTS vectors_added AFTER INSERT ON vectors BEGIN"
    " UPDATE totals SET entries = entries + 1, bytes = bytes + length(new.vector); END",
    "CREATE TRIGGER IF NOT EXISTS vectors_dropped AFTER DELETE ON vectors BEGIN"
    " UPDATE totals SET entries = entries - 1, bytes = bytes - length(old.vector); END",
    "CREATE TRIGGER IF NOT EXISTS vectors_replaced AFTER UPDATE OF vector ON vectors BEGIN"
    " UPDATE totals SET bytes = bytes - length(old.vector) + length(new.vector); END",
)
REFRESH_S = 3600  # a hit older than this is marked used again
CHUNK = 500  # keys per SQL statement (well under SQLite's variable limit)


def default_path() -> Path:
    """``$CODEGROUND_CACHE/embeddings.sqlite`` (default ``~/.cache/codeground/embeddings.sqlite``)."""
    return cache_base() / "embeddings.sqlite"


def _chunks(items: list, size: int = CHUNK) -> Iterable[tuple[list, str]]:
    """``items`` in parts of ``size``, each with its ``?,?,…`` placeholders."""
    for start in range(0, len(items), size):
        part = items[start : start + size]
        yield part, ",".join("?" * len(part))


class EmbeddingStore:
    """A least-recently-used map from (embedder identity, text) to float32 vectors, in one SQLite file."""

    def __init__(self, path: str | Path, *, max_bytes: int) -> None:
        self.path = Path(path)
        self.max_bytes = int(max_bytes)
        self._lock = threading.Lock()
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = self._connect()
            db.execute("SELECT count(*) FROM totals").fetchone()
            return db
        except sqlite3.DatabaseError as exc:  # not a database, or damaged: start afresh
            logger.warning("embedding cache %s unreadable (%s); starting a new one", self.path, exc)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if db.execute("PRAGMA user_version").fetchone()[0] < LAYOUT:
            _upgrade(db)
        return db

    @staticmethod
    def key(identity: str, text: str) -> bytes:
        """The entry of ``text`` embedded by the embedder that ``identity`` names."""
        return hashlib.sha256(f"{identity}\0{text}".encode("utf-8", "surrogatepass")).digest()

    def get(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The stored vectors among ``keys`` (a last use older than ``REFRESH_S`` refreshed)."""
        keys = list(dict.fromkeys(keys))
        found: dict[bytes, np.ndarray] = {}
        now = time.time_ns()
        stale_before = now - REFRESH_S * 1_000_000_000
        stale: list[bytes] = []
        with self._lock:
            for part, marks in _chunks(keys):
                rows = self._db.execute(f"SELECT key, vector, used FROM vectors WHERE key IN ({marks})", part)
                for key, blob, used in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
                    if used < stale_before:
                        stale.append(key)
            if stale:
                self._write(
                    lambda: [
                        self._db.execute(f"UPDATE vectors SET used = ? WHERE key IN ({marks})", [now, *part])
                        for part, marks in _chunks(stale)
                    ]
                )
        return found

    def put(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Store ``vectors``, then drop the least recently used entries beyond ``max_bytes``."""
        if not vectors:
            return
        now = time.time_ns()
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes(), now) for k, v in vectors.items()]
        upsert = (
            "INSERT INTO vectors (key, vector, used) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET vector = excluded.vector, used = excluded.used"
        )
        with self._lock:
            self._write(lambda: (self._db.executemany(upsert, rows), self._evict()))

    def _write(self, work: Callable[[], object]) -> None:
        """Run ``work`` in one write transaction."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            work()
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _evict(self) -> None:
        if self._db.execute("SELECT bytes FROM totals").fetchone()[0] <= self.max_bytes:
            return
        total = _recount(self._db)  # another writer may have left the running total off
        target = self.max_bytes * 9 // 10
        doomed: list[int] = []
        oldest = "SELECT rowid, length(vector) FROM vectors ORDER BY used"
        with closing(self._db.execute(oldest)) as oldest_first:
            for rowid, size in oldest_first:
                if total <= target:
                    break
                doomed.append(rowid)
                total -= size
        for part, marks in _chunks(doomed):
            self._db.execute(f"DELETE FROM vectors WHERE rowid IN ({marks})", part)

    def stats(self) -> dict[str, int]:
        """Entries and bytes of vectors held (counted)."""
        with self._lock:
            query = "SELECT count(*), coalesce(sum(length(vector)), 0) FROM vectors"
            n, size = self._db.execute(query).fetchone()
        return {"entries": int(n), "bytes": int(size)}


def _recount(db: sqlite3.Connection) -> int:
    """Set the running totals from the rows themselves; the bytes of vectors held."""
    n, size = db.execute("SELECT count(*), coalesce(sum(length(vector)), 0) FROM vectors").fetchone()
    db.execute("UPDATE totals SET entries = ?, bytes = ?", (n, size))
    return int(size)


def _upgrade(db: sqlite3.Connection) -> None:
    """Create this layout, moving the vectors of an older one into it (once, under the write lock;
    then the file is compacted when nobody else is reading it)."""
    moved = 0
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] < LAYOUT:  # not done by another process meanwhile
            found = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
            old = db.execute(found).fetchone()
            if old:
                db.execute("DROP INDEX IF EXISTS vectors_used")
                db.execute("ALTER TABLE vectors RENAME TO vectors_before")
            for statement in SCHEMA:
                db.execute(statement)
            if old:
                db.execute(
                    "INSERT OR IGNORE INTO vectors (key, vector, used)"
                    " SELECT key, vector, used FROM vectors_before ORDER BY used"
                )
                moved = db.execute("SELECT entries FROM totals").fetchone()[0]
                db.execute("DROP TABLE vectors_before")
            db.execute(f"PRAGMA user_version = {LAYOUT}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if moved:
        before = db.execute("PRAGMA page_count").fetchone()[0]
        try:
            db.execute("VACUUM")  # give the old layout's pages back to the disk: into the WAL,
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # then into the file, which shrinks
        except sqlite3.OperationalError as exc:  # busy: the freed pages are reused instead
            logger.info("embedding cache not compacted now (%s)", exc)
        after = db.execute("PRAGMA page_count").fetchone()[0]
        logger.info("embedding cache: %d vectors moved over (%d → %d pages)", moved, before, after)
