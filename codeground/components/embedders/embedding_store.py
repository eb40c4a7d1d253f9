"""Vectors already computed on this machine, kept on disk so that no text is embedded twice.

Rules:
- A vector is stored under sha256(embedder identity + text), in one SQLite file shared by every
  index, generation and checkout on the machine (default ``$CODEGROUND_CACHE/embeddings.sqlite``).
- Each row sits whole in a table page (a rowid table with the key in its own unique index): a
  WITHOUT ROWID table keeps at most about 1 kB of a row in its page, so every MiniLM vector (1.5 kB)
  took a 4 kB overflow page of its own and the file was 3.1× its vectors. A file in that older
  layout is moved to this one when it is first opened (atomically, under the write lock), then
  compacted unless another process is in the way (never waited for: the freed pages are reused).
- A hit refreshes the entry's last use when that is more than ``REFRESH_S`` old: the eviction order
  only has to tell what a machine uses now from what it stopped using, and a lookup that finds
  everything fresh writes nothing.
- When the vectors pass ``max_bytes`` the least recently used are dropped until they fill at most
  nine tenths of it. Their running total is kept by triggers, so a write does not scan the file;
  it is recounted before anything is dropped.
- Concurrent indexers share the file (SQLite's own locking; a busy file is waited for up to
  ``wait_s``, a minute unless told: the query YAML's re-vote tells it one second, so a question
  never waits long for an indexer). The cache only saves work, so neither a busy file nor a damaged
  one fails the caller: a write that still finds the file busy is skipped with a warning (what was
  not kept), a process that cannot open it keeps its vectors in memory, and a file that is not a
  database or is damaged is started afresh. A busy file is never taken for damaged.

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
SCHEMA_NAMES = frozenset(
    {"vectors", "vectors_used", "totals", "vectors_added", "vectors_dropped", "vectors_replaced"}
)
REFRESH_S = 3600  # a hit older than this is marked used again
BUSY_TIMEOUT_S = 60.0  # how long a file another process is writing is waited for, by default
DAMAGED = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)  # the errors that mean "start afresh"
BUSY = (sqlite3.SQLITE_BUSY,)  # another process holds the file past the timeout
COUNT_SQL = "SELECT count(*), coalesce(sum(length(vector)), 0) FROM vectors"  # entries, bytes of vectors
CHUNK = 500  # keys per SQL statement (well under SQLite's variable limit)


def _code(exc: sqlite3.Error) -> int:
    """The primary result code of an SQLite error (extended codes carry it in their low byte)."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


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

    def __init__(self, path: str | Path, *, max_bytes: int, wait_s: float = BUSY_TIMEOUT_S) -> None:
        """
        :param path: the SQLite file.
        :param max_bytes: cap of the vectors' bytes; the least recently used go first.
        :param wait_s: how long a write (and the first open of an older layout) waits for another
            process writing the file, then goes on without it.
        """
        self.path = Path(path)
        self.max_bytes = int(max_bytes)
        self.wait_s = float(wait_s)
        self._lock = threading.Lock()
        self.on_disk = True  # False: the file could not be opened, vectors live as long as this process
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if _code(exc) in BUSY:  # never a reason to drop the cache; this process keeps its own
                logger.warning(
                    "embedding cache %s busy (another process is writing it): vectors are kept in memory "
                    "by this process only",
                    self.path,
                )
                self.on_disk = False
                return _in_memory()
            if _code(exc) not in DAMAGED:
                raise
            logger.warning("embedding cache %s unreadable (%s); starting a new one", self.path, exc)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.wait_s, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            if not _current(db):
                _upgrade(db, self.wait_s)
        except BaseException:
            db.close()  # before the file is started afresh, or this process goes on without it
            raise
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
                self._write_unless_busy(
                    "last uses not refreshed",
                    lambda: [
                        self._db.execute(f"UPDATE vectors SET used = ? WHERE key IN ({marks})", [now, *part])
                        for part, marks in _chunks(stale)
                    ],
                )
        return found

    def put(self, vectors: dict[bytes, np.ndarray]) -> bool:
        """Store ``vectors``, then drop the least recently used entries beyond ``max_bytes``; whether
        they are kept in the file (not when it stayed busy, or this process could not open it)."""
        if not vectors:
            return True
        now = time.time_ns()
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes(), now) for k, v in vectors.items()]
        upsert = (
            "INSERT INTO vectors (key, vector, used) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET vector = excluded.vector, used = excluded.used"
        )
        with self._lock:
            written = self._write_unless_busy(
                f"{len(rows)} vector{'s' * (len(rows) != 1)} not kept",
                lambda: (self._db.executemany(upsert, rows), self._evict()),
            )
        return written and self.on_disk

    def _write_unless_busy(self, lost: str, work: Callable[[], object]) -> bool:
        """``_write``, or a warning saying what was ``lost`` when another process holds the file past
        ``wait_s``: the cache only saves work, so a busy file never fails the caller. Whether written."""
        try:
            self._write(work)
        except sqlite3.OperationalError as exc:
            if _code(exc) not in BUSY:
                raise
            logger.warning("embedding cache %s busy (another process is writing it): %s", self.path, lost)
            return False
        return True

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
        total = _recount(self._db)  # an older codeground's REPLACE leaves the running total too high
        if total <= self.max_bytes:
            return
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
            n, size = self._db.execute(COUNT_SQL).fetchone()
        return {"entries": int(n), "bytes": int(size)}


def held(path: str | Path) -> dict[str, int] | None:
    """Entries and bytes of vectors in the cache file at ``path``, read without changing it (no
    layout move, no fresh start; SQLite may leave its empty ``-wal``/``-shm`` beside it, as any
    reader does); None when it cannot be read. In a folder this user cannot write, the file is read
    as it is on disk (what a writer has not yet copied out of its WAL is not counted)."""
    uri = Path(path).resolve().as_uri()
    for mode in ("mode=ro", "immutable=1"):
        try:
            with closing(sqlite3.connect(f"{uri}?{mode}", uri=True)) as db:
                n, size = db.execute(COUNT_SQL).fetchone()
            return {"entries": int(n), "bytes": int(size)}
        except sqlite3.Error as exc:
            if _code(exc) not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
                return None
    return None


def _recount(db: sqlite3.Connection) -> int:
    """Set the running totals from the rows themselves; the bytes of vectors held."""
    n, size = db.execute(COUNT_SQL).fetchone()
    db.execute("UPDATE totals SET entries = ?, bytes = ?", (n, size))
    return int(size)


def _in_memory() -> sqlite3.Connection:
    """A cache of this layout that lives as long as the process."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    _upgrade(db)
    return db


def _current(db: sqlite3.Connection) -> bool:
    """Whether the file holds this layout, complete."""
    if db.execute("PRAGMA user_version").fetchone()[0] < LAYOUT:
        return False
    names = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    return names >= SCHEMA_NAMES and db.execute("SELECT count(*) FROM totals").fetchone()[0] == 1


def _upgrade(db: sqlite3.Connection, wait_s: float = BUSY_TIMEOUT_S) -> None:
    """Make the file this layout (once, under the write lock): a ``WITHOUT ROWID`` table of before
    is moved into it, then the file is compacted if nobody else is writing; anything else missing
    (a new file, a copy that lost its ``user_version``) is created and the totals recounted."""
    moved = 0
    db.execute("BEGIN IMMEDIATE")
    try:
        if not _current(db):  # not done by another process meanwhile
            table = db.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
            ).fetchone()
            older = table is not None and "WITHOUT ROWID" in table[0].upper()
            if older:
                for trigger in ("vectors_added", "vectors_dropped", "vectors_replaced"):
                    db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
                db.execute("DROP INDEX IF EXISTS vectors_used")
                db.execute("ALTER TABLE vectors RENAME TO vectors_before")
            for statement in SCHEMA:
                db.execute(statement)
            if older:
                db.execute(
                    "INSERT OR IGNORE INTO vectors (key, vector, used)"
                    " SELECT key, vector, used FROM vectors_before ORDER BY used"
                )
                db.execute("DROP TABLE vectors_before")
            _recount(db)
            moved = db.execute("SELECT entries FROM totals").fetchone()[0] if older else 0
            db.execute(f"PRAGMA user_version = {LAYOUT}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if moved:
        _compact(db, wait_s)
        logger.info("embedding cache: %d vectors moved to this layout", moved)


def _compact(db: sqlite3.Connection, wait_s: float) -> None:
    """Give freed pages back to the disk now if no other process is in the way; otherwise they are
    reused, and the file shrinks when its last connection closes. Never waits for the others."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        db.execute("VACUUM")  # into the WAL,
        busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]  # then into the file
    except sqlite3.OperationalError:
        busy = 1
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
    if busy:
        logger.info("embedding cache not compacted now: another process is using it")
