"""Vectors already computed on this machine, kept on disk so that no text is embedded twice.

Rule: a vector is stored under sha256(embedder identity + text), in one SQLite file shared by every
index, generation and checkout on the machine (default ``$CODEGROUND_CACHE/embeddings.sqlite``).
Each hit refreshes the entry's last use; when the file's vectors pass ``max_bytes`` the least
recently used are dropped until they fill at most nine tenths of it. Concurrent indexers share it
(SQLite's own locking; a busy file is waited for). An unreadable cache is not an error: it is
started afresh.

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
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from codeground.components.embedders.model_cache import cache_base

logger = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key BLOB PRIMARY KEY,
    vector BLOB NOT NULL,
    used INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""
CHUNK = 500  # keys per SQL statement (well under SQLite's variable limit)


def default_path() -> Path:
    """``$CODEGROUND_CACHE/embeddings.sqlite`` (default ``~/.cache/codeground/embeddings.sqlite``)."""
    return cache_base() / "embeddings.sqlite"


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
            db.execute("SELECT count(*) FROM vectors").fetchone()
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
        db.executescript(SCHEMA)
        return db

    @staticmethod
    def key(identity: str, text: str) -> bytes:
        """The entry of ``text`` embedded by the embedder that ``identity`` names."""
        return hashlib.sha256(f"{identity}\0{text}".encode("utf-8", "surrogatepass")).digest()

    def get(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The stored vectors among ``keys`` (their last use refreshed)."""
        keys = list(dict.fromkeys(keys))
        found: dict[bytes, np.ndarray] = {}
        now = time.time_ns()
        with self._lock:
            for start in range(0, len(keys), CHUNK):
                part = keys[start : start + CHUNK]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part)
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
            if found:
                hit = list(found)
                for start in range(0, len(hit), CHUNK):
                    part = hit[start : start + CHUNK]
                    marks = ",".join("?" * len(part))
                    self._db.execute(f"UPDATE vectors SET used = ? WHERE key IN ({marks})", [now, *part])
        return found

    def put(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Store ``vectors``, then drop the least recently used entries beyond ``max_bytes``."""
        if not vectors:
            return
        now = time.time_ns()
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes(), now) for k, v in vectors.items()]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
                self._evict()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _evict(self) -> None:
        total = self._db.execute("SELECT coalesce(sum(length(vector)), 0) FROM vectors").fetchone()[0]
        if total <= self.max_bytes:
            return
        target = self.max_bytes * 9 // 10
        dropped = 0
        oldest_first = self._db.execute("SELECT key, length(vector) FROM vectors ORDER BY used").fetchall()
        for key, size in oldest_first:
            if total - dropped <= target:
                break
            self._db.execute("DELETE FROM vectors WHERE key = ?", (key,))
            dropped += size

    def stats(self) -> dict[str, int]:
        """Entries and bytes of vectors held."""
        with self._lock:
            query = "SELECT count(*), coalesce(sum(length(vector)), 0) FROM vectors"
            n, size = self._db.execute(query).fetchone()
        return {"entries": int(n), "bytes": int(size)}
