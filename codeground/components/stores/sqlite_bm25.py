"""BM25 with identifier-aware tokens, kept on disk in one SQLite file and read only where a query needs it.

Rule: the text scored for a record is its provenance header (``meta[header_field]``, written
``header_weight`` times) and its content (``components.lexical_text``), cut into the tokens of
``components.identifiers.tokenize`` (``trust_remote_code`` also yields ``trust``, ``remote``,
``code``); the stored content stays the exact excerpt. A query is cut by
``identifiers.query_tokens``: the same tokens, plus the short form code writes for a word the
question spells out ("boolean" also asks for ``bool``). Scoring is
BM25L (Lv & Zhai 2011; the default) or BM25+ with the parameters and formulas of Haystack's
``InMemoryDocumentStore``, so the scores are the stock ones for the same tokens.

Why not SQLite FTS5's ``bm25()``: it is Okapi BM25 with fixed k1/b, and on the vLLM dev sets it
lost R@1 (docs 0.660 → 0.617, code 0.500 → 0.417) against BM25L over the same tokens.

Layout (one file, written by the standard library's ``sqlite3``):
- ``records``: one row per record (id, content, meta as JSON, token count); the row id is the
  storage order, which breaks score ties like the stock store's insertion order. Row ids are never
  reused (``AUTOINCREMENT``). The token counts a query needs for every scorable record are read from
  their own index (``records_scorable``, 0.5 MB for vLLM's 39,099 records), not by scanning the
  table: a first search after the file left the OS cache read 77 MB of the file, now 9 MB. They are
  also kept as one blob in ``info`` (``LENGTHS_KEY``: written by ``save()``, removed by triggers on
  any insert, delete or update of a record), so a search reads one value instead of a row per record.
- ``postings``: per term, the row ids holding it and their term frequencies, as two packed arrays.
  A query reads only its own terms' rows; nothing is loaded at start-up.
- ``symbols``: each record's ``meta["symbol"]`` and its last dotted part (``Trainer.fit`` → ``fit``),
  both indexed, so ``records_by_symbol`` finds the records a name refers to without listing any.
Writes add to the records at once and to the postings when ``save()`` commits (or before the first
retrieval that needs them, or once ``MAX_PENDING_POSTINGS`` term occurrences are pending, so that a
full build does not hold every new posting in memory until its end); deleting a
record rewrites only its terms' rows, so an incremental index run touches the changed files' rows
and nothing else.

Usage:
```python
from haystack import Document
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

store = SQLiteBM25DocumentStore()  # in memory; persist_path="…/bm25.sqlite3" for a file
store.write_documents([Document(content="def load(trust_remote_code): ...",
                                meta={"header": "File: a.py | Symbol: load | Type: impl"})])
store.save()
assert store.bm25_retrieval("trust remote", top_k=1)[0].meta["header"].startswith("File: a.py")
```
"""

from __future__ import annotations

import sqlite3
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson
from haystack import Document, default_from_dict, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.utils.filters import document_matches_filter

from codeground.components.identifiers import query_tokens, tokenize
from codeground.components.lexical_text import checked_header_weight, lexical_text

FORMAT = 2  # 2: the symbols table
# Haystack's in-memory store maps a BM25 score to (0, 1) as expit(score / 8); the same here.
SCALING_FACTOR = 8.0
_CHUNK = 500  # SQL variables per IN (...) list
# Pending (term, row, frequency) triples are 24 bytes each, and merging them needs about as much
# again: at most 4 M of them (~100 MB) wait before they are folded into the postings rows (still
# inside the write transaction: nothing is committed early). vLLM's full build has 2.1 M in all, so
# it is merged once, at the end, as before; a repository of 350k records (20.4 M) in six slices, with
# the same rows, in the same order, as one merge would write (tested). A merge reads and rewrites the
# stored rows of the terms it touches, MERGE_TERMS_PER_STEP terms at a time, so the last merges of a
# large build do not hold the whole table at once; each slice rewrites the common terms' rows again
# (ansible's 352k records: the full index within the run-to-run spread of one merge,
# docs/measurements/speed.md).
MAX_PENDING_POSTINGS = 4_000_000
MERGE_TERMS_PER_STEP = 20_000

# the token counts of every scorable record as one blob of int64 (row id, token count) pairs in
# ``info``, written by ``save()`` in the transaction it commits; any insert, delete or change of a
# record's content or count removes it (the triggers below, which live in the file and so fire for
# whatever writes it), so a blob that is there is the table's; one that does not fit the table is
# not used. Reading 352,527 pairs row by row took 0.36 s plus 0.2 s to make arrays of them: a
# quarter of a cold search on that index.
LENGTHS_KEY = "lengths"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    content TEXT,
    meta TEXT NOT NULL,
    n_tokens INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS postings (
    term TEXT PRIMARY KEY, docs BLOB NOT NULL, tfs BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS symbols (row INTEGER PRIMARY KEY, symbol TEXT NOT NULL, tail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS symbols_by_symbol ON symbols (symbol);
CREATE INDEX IF NOT EXISTS symbols_by_tail ON symbols (tail);
CREATE INDEX IF NOT EXISTS records_scorable ON records (n_tokens) WHERE content IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS lengths_stale_after_insert AFTER INSERT ON records
    BEGIN DELETE FROM info WHERE key = '{LENGTHS_KEY}'; END;
CREATE TRIGGER IF NOT EXISTS lengths_stale_after_delete AFTER DELETE ON records
    BEGIN DELETE FROM info WHERE key = '{LENGTHS_KEY}'; END;
CREATE TRIGGER IF NOT EXISTS lengths_stale_after_update AFTER UPDATE OF content, n_tokens ON records
    BEGIN DELETE FROM info WHERE key = '{LENGTHS_KEY}'; END;
"""
# the token count of every scorable record, answered from ``records_scorable`` alone: named, because
# SQLite's planner prefers the table scan once ``ANALYZE`` has run. A store written before that index
# existed is scanned instead, with the same answer.
LENGTHS_SQL = "SELECT rowid, n_tokens FROM records INDEXED BY records_scorable WHERE content IS NOT NULL"
LENGTHS_SCAN_SQL = "SELECT rowid, n_tokens FROM records WHERE content IS NOT NULL"


class SQLiteBM25DocumentStore:
    """A Haystack document store: records and their BM25 postings in one SQLite file.

    See the module docstring for the rule and a usage example. ``persist_path=None`` keeps the
    database in memory (tests, examples). One connection per store, guarded by a lock, so a store
    may be used from the threads of a chat server.
    """

    def __init__(
        self,
        *,
        persist_path: str | None = None,
        header_field: str = "header",
        header_weight: int = 1,
        bm25_algorithm: Literal["BM25L", "BM25Plus"] = "BM25L",
        bm25_parameters: dict | None = None,
    ) -> None:
        """
        :param persist_path: the SQLite file; created on the first write, read-only until then.
        :param header_field: meta field whose text is indexed before the content.
        :param header_weight: how many times the header is written before the content when a record
            is indexed (``index.yaml``: 2); it does not matter for reading.
        :param bm25_algorithm: ``BM25L`` (k1 1.5, b 0.75, delta 0.5 unless set) or ``BM25Plus`` (delta 1.0).
        :param bm25_parameters: e.g. ``{"k1": 1.5, "b": 0.75, "delta": 0.5}``.
        """
        if bm25_algorithm not in ("BM25L", "BM25Plus"):
            raise ValueError(f"bm25_algorithm must be 'BM25L' or 'BM25Plus', not {bm25_algorithm!r}")
        self.persist_path = persist_path
        self.header_field = header_field
        self.header_weight = checked_header_weight(header_weight)
        self.bm25_algorithm = bm25_algorithm
        self.bm25_parameters = dict(bm25_parameters or {})
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._writable = False
        # postings not yet merged into the table, as three parallel arrays (term id, row id, term
        # frequency) over the term ids of ``_term_ids``
        self._term_ids: dict[str, int] = {}
        self._added = _Postings()
        self._removed_rows: set[int] = set()
        self._removed_terms: set[str] = set()
        self._lengths: tuple[int, np.ndarray, np.ndarray, int, float] | None = None  # (version, ...)

    # -- connection --------------------------------------------------------------------------------
    def _db(self, *, write: bool = False) -> sqlite3.Connection | None:
        """The connection; ``None`` for reads of a file that does not exist (an empty store)."""
        if self._conn is not None and (self._writable or not write):
            return self._conn
        path = self.persist_path
        try:
            if path is None:
                conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
                write = True
            elif write:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            elif Path(path).exists():
                conn = sqlite3.connect(
                    f"{Path(path).resolve().as_uri()}?mode=ro",
                    uri=True,
                    check_same_thread=False,
                    isolation_level=None,
                )
            else:
                return None
            if write:
                conn.executescript(_SCHEMA)
                conn.execute("INSERT OR IGNORE INTO info VALUES ('format', ?)", (FORMAT,))
            row = conn.execute("SELECT value FROM info WHERE key = 'format'").fetchone()
        except sqlite3.Error as exc:
            raise self._unreadable(exc) from exc
        if row is None or row[0] != FORMAT:
            conn.close()
            raise self._unreadable(ValueError(f"unsupported BM25 store format {row and row[0]!r}"))
        if self._conn is not None:
            self._conn.close()
        self._conn, self._writable = conn, write
        return conn

    def _unreadable(self, exc: Exception) -> ValueError:
        # the command that rebuilds it is the caller's to name (it knows the index and its repository)
        return ValueError(f"the BM25 store {self.persist_path} cannot be read ({type(exc).__name__}: {exc})")

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._lock:
            conn = self._db()
            if conn is None:
                return []
            try:
                return conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise self._unreadable(exc) from exc

    # -- the DocumentStore protocol ----------------------------------------------------------------
    def count_documents(self) -> int:
        rows = self._query("SELECT COUNT(*) FROM records")
        return rows[0][0] if rows else 0

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Records in storage order; ``{"field": "id", "operator": "in", ...}`` is answered by the
        database, any other Haystack filter by the stock matcher over every record."""
        if filters and filters.get("field") == "id" and filters.get("operator") in ("in", "=="):
            value = filters.get("value")
            ids = list(value) if filters["operator"] == "in" else [value]
            rows: list[tuple] = []
            for i in range(0, len(ids), _CHUNK):
                part = ids[i : i + _CHUNK]
                marks = ",".join("?" * len(part))
                rows += self._query(
                    f"SELECT rowid, id, content, meta FROM records WHERE id IN ({marks})", part
                )
            return [_document(r) for r in sorted(rows)]
        docs = [
            _document(r) for r in self._query("SELECT rowid, id, content, meta FROM records ORDER BY rowid")
        ]
        if filters:
            docs = [d for d in docs if document_matches_filter(filters=filters, document=d)]
        return docs

    def meta_rows(self, fields: list[str]) -> list[tuple]:
        """``(id, meta[field1], meta[field2], …)`` for every record, read without building documents."""
        columns = ", ".join("json_extract(meta, ?)" for _ in fields)
        paths = [f'$."{f}"' for f in fields]
        return self._query(f"SELECT id{', ' if fields else ''}{columns} FROM records ORDER BY rowid", paths)

    def contains_text(self, text: str) -> bool:
        """Whether any record's content or meta (its ``impl``, header, …) holds ``text`` verbatim."""
        if not text:
            return False
        rows = self._query(
            "SELECT 1 FROM records WHERE instr(content, ?) > 0 OR instr(meta, ?) > 0 LIMIT 1", (text, text)
        )
        return bool(rows)

    def records_by_symbol(self, names: list[str], fields: list[str]) -> list[tuple]:
        """``(id, symbol, meta[field1], …)`` of every record whose symbol, or the symbol's last dotted
        part, is one of ``names``, in storage order (two index lookups; no record is listed)."""
        names = list(dict.fromkeys(names))
        if not names:
            return []
        columns = "".join(", json_extract(r.meta, ?)" for _ in fields)
        paths = [f'$."{f}"' for f in fields]
        found: dict[int, tuple] = {}
        for i in range(0, len(names), _CHUNK):
            part = names[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            for column in ("symbol", "tail"):
                sql = (
                    f"SELECT r.rowid, r.id, s.symbol{columns} FROM symbols s "
                    f"JOIN records r ON r.rowid = s.row WHERE s.{column} IN ({marks})"
                )
                for row in self._query(sql, [*paths, *part]):
                    found[row[0]] = row[1:]
        return [found[row] for row in sorted(found)]

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """Stock semantics (``NONE`` means ``FAIL``); the tokens come from header + content. A call
        that fails changes nothing; one whose postings merge fails (``MAX_PENDING_POSTINGS``) rolls
        back every write since the last ``save()``, as a failed ``save()`` does."""
        if isinstance(documents, str) or any(not isinstance(doc, Document) for doc in documents):
            raise ValueError("Please provide a list of Documents.")
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        with self._lock:
            conn = self._db(write=True)
            assert conn is not None
            existing = self._existing_ids([d.id for d in documents])
            batch: dict[str, Document] = {}
            for doc in documents:  # every refusal comes before any change
                if doc.id in existing or doc.id in batch:
                    if policy == DuplicatePolicy.FAIL:
                        raise DuplicateDocumentError(f"ID '{doc.id}' already exists.")
                    if policy == DuplicatePolicy.SKIP:
                        continue
                    batch.pop(doc.id, None)  # a later duplicate in the same list wins, at the end
                batch[doc.id] = doc
            with self._change(conn) as change:
                overwritten = [i for i in batch if i in existing]
                if overwritten:
                    self._delete(conn, overwritten, change)
                # row ids are given here (after every id ever used: AUTOINCREMENT's counter) so the
                # records go in with one statement
                (used,) = conn.execute(
                    "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'records'), 0), "
                    "COALESCE((SELECT MAX(rowid) FROM records), 0))"
                ).fetchone()
                term_ids, added = self._term_ids, change.added
                rows, symbols = [], []
                for row, doc in enumerate(batch.values(), start=used + 1):
                    counts = Counter(tokenize(self._bm25_text(doc))) if doc.content is not None else Counter()
                    ids = [term_ids.setdefault(term, len(term_ids)) for term in counts]
                    added.terms.extend(ids)
                    added.rows.extend([row] * len(ids))
                    added.tfs.extend(counts.values())
                    rows.append((row, doc.id, doc.content, orjson.dumps(doc.meta).decode(), counts.total()))
                    symbol = doc.meta.get("symbol")
                    if isinstance(symbol, str) and symbol:
                        symbols.append((row, symbol, symbol.rsplit(".", 1)[-1]))
                conn.executemany(
                    "INSERT INTO records (rowid, id, content, meta, n_tokens) VALUES (?, ?, ?, ?, ?)", rows
                )
                conn.executemany("INSERT INTO symbols (row, symbol, tail) VALUES (?, ?, ?)", symbols)
            if len(self._added.terms) >= MAX_PENDING_POSTINGS:
                try:
                    self._merge_postings(conn)
                except BaseException:  # as in save(): nothing of the transaction is kept
                    self._rollback(conn)
                    raise
            return len(batch)

    def delete_documents(self, document_ids: list[str]) -> None:
        """Remove these records (unknown ids are ignored) and their postings."""
        with self._lock:
            conn = self._db(write=True)
            assert conn is not None
            with self._change(conn) as change:
                self._delete(conn, list(document_ids), change)

    @contextmanager
    def _change(self, conn: sqlite3.Connection) -> Iterator[_Change]:
        """One write or delete call: all of it or nothing (a savepoint inside the open transaction;
        the pending postings it produced join the store's only when it succeeds)."""
        self._begin(conn)
        conn.execute("SAVEPOINT change")
        change = _Change()
        try:
            yield change
        except BaseException:
            conn.execute("ROLLBACK TO change")
            conn.execute("RELEASE change")
            raise
        conn.execute("RELEASE change")
        self._added.extend(change.added)
        self._removed_rows |= change.removed_rows
        self._removed_terms |= change.removed_terms
        self._lengths = None

    def save(self) -> None:
        """Merge the pending postings and commit; a no-op for a store nobody wrote to."""
        with self._lock:
            if self._conn is None or not self._writable:
                return
            conn = self._conn
            self._begin(conn)
            try:
                self._merge_postings(conn)
                self._store_lengths(conn)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback(conn)
                raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn, self._writable, self._lengths = None, False, None

    # -- BM25 --------------------------------------------------------------------------------------
    def bm25_retrieval(
        self, query: str, top_k: int = 10, filters: dict[str, Any] | None = None, scale_score: bool = False
    ) -> list[Document]:
        """The ``top_k`` records by BM25 score (> 0), ties in storage order; with ``filters``, the
        best ``top_k`` of the records that match them."""
        terms = list(dict.fromkeys(query_tokens(query or "")))
        if not terms or top_k <= 0:
            return []
        with self._lock:
            conn = self._db()
            if conn is None:
                return []
            if self._writable and (self._added.rows or self._removed_rows):
                self.save()
            try:
                postings = self._postings(conn, terms)
                lengths = self._doc_lengths(conn)
            except sqlite3.Error as exc:
                raise self._unreadable(exc) from exc
        scores, alive = self._scores(terms, postings, lengths)
        if scores is None:
            return []
        candidates = np.flatnonzero((scores > 0.0) & alive)
        if not filters and len(candidates) > top_k:  # sort only what can make the top_k (ties kept)
            cut = len(candidates) - top_k
            kth = np.partition(scores[candidates], cut)[cut]
            candidates = candidates[scores[candidates] >= kth]
        order = candidates[np.lexsort((candidates, -scores[candidates]))]
        out: list[Document] = []
        step = top_k if not filters else max(top_k * 4, 64)
        for start in range(0, len(order), step):
            rows = [int(r) for r in order[start : start + step]]
            found = {r[0]: r for r in self._rows(rows)}
            for row in rows:
                doc = (
                    _document(found[row], score=_scaled(float(scores[row]), scale_score))
                    if row in found
                    else None
                )
                if doc is None or (filters and not document_matches_filter(filters=filters, document=doc)):
                    continue
                out.append(doc)
                if len(out) == top_k:
                    return out
        return out

    def _scores(
        self, terms: list[str], postings: dict[str, tuple[np.ndarray, np.ndarray]], lengths: tuple
    ) -> tuple[np.ndarray | None, np.ndarray]:
        _, length, alive, n_corpus, avg = lengths
        if not n_corpus or avg == 0:
            return None, alive
        k = self.bm25_parameters.get("k1", 1.5)
        b = self.bm25_parameters.get("b", 0.75)
        plus = self.bm25_algorithm == "BM25Plus"
        delta = self.bm25_parameters.get("delta", 1.0 if plus else 0.5)
        rows: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        for term in terms:  # first-occurrence order, as the stock scorers sum them
            hit = postings.get(term)
            if hit is None:
                continue
            docs, tfs = hit
            docs_alive = alive[docs]
            docs, tfs = docs[docs_alive], tfs[docs_alive].astype(np.float64)
            n = len(docs)
            if not n:
                continue
            norm = 1 - b + b * length[docs] / avg
            if plus:
                idf = np.log(1 + (n_corpus - n + 0.5) / (n + 0.5))
                parts.append(idf * (tfs * (1.0 + k) / (tfs + k * norm) + delta))
            else:
                idf = np.log((n_corpus + 1.0) / (n + 0.5))
                ctd = tfs / norm
                parts.append(idf * ((1.0 + k) * (ctd + delta) / (k + ctd + delta)))
            rows.append(docs)
        if not rows:
            return None, alive
        scores = np.bincount(np.concatenate(rows), weights=np.concatenate(parts), minlength=len(alive))
        return scores, alive

    def _postings(
        self, conn: sqlite3.Connection, terms: list[str]
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for i in range(0, len(terms), _CHUNK):
            part = terms[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            for term, docs, tfs in conn.execute(
                f"SELECT term, docs, tfs FROM postings WHERE term IN ({marks})", part
            ):
                out[term] = (np.frombuffer(docs, dtype=np.int64), np.frombuffer(tfs, dtype=np.int32))
        return out

    def _doc_lengths(self, conn: sqlite3.Connection) -> tuple:
        """(version, token count per row id, row id holds a scorable record, corpus size, mean length);
        read once and again only after the database changed."""
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        cached = self._lengths
        if cached is not None and cached[0] == version:
            return cached
        top = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM records").fetchone()[0]
        stored = conn.execute("SELECT value FROM info WHERE key = ?", (LENGTHS_KEY,)).fetchone()
        pairs = _kept_lengths(stored[0] if stored else None, top)
        ids, counts = (pairs if pairs is not None else self._scan_lengths(conn)).T
        length = np.zeros(top + 1, dtype=np.float64)
        alive = np.zeros(top + 1, dtype=bool)
        length[ids] = counts
        alive[ids] = True
        n_corpus = len(ids)
        avg = float(length.sum() / n_corpus) if n_corpus else 0.0
        self._lengths = (version, length, alive, n_corpus, avg)
        return self._lengths

    @staticmethod
    def _scan_lengths(conn: sqlite3.Connection) -> np.ndarray:
        """``(row id, token count)`` of every scorable record, read from the table (n × 2 int64)."""
        try:
            rows = conn.execute(LENGTHS_SQL).fetchall()
        except sqlite3.OperationalError:  # no such index: a file written before it
            rows = conn.execute(LENGTHS_SCAN_SQL).fetchall()
        return np.array(rows, dtype=np.int64).reshape(-1, 2)

    def _store_lengths(self, conn: sqlite3.Connection) -> None:
        """Keep the token counts a query reads as one blob (``LENGTHS_KEY``), unless they are kept."""
        if conn.execute("SELECT 1 FROM info WHERE key = ?", (LENGTHS_KEY,)).fetchone() is None:
            blob = self._scan_lengths(conn).tobytes()
            conn.execute("INSERT INTO info VALUES (?, ?)", (LENGTHS_KEY, blob))

    def _rows(self, rowids: list[int]) -> list[tuple]:
        marks = ",".join("?" * len(rowids))
        return self._query(f"SELECT rowid, id, content, meta FROM records WHERE rowid IN ({marks})", rowids)

    # -- writing -----------------------------------------------------------------------------------
    def _bm25_text(self, document: Document) -> str:
        return lexical_text(document, header_field=self.header_field, header_weight=self.header_weight)

    @staticmethod
    def _begin(conn: sqlite3.Connection) -> None:
        if not conn.in_transaction:
            conn.execute("BEGIN")

    def _rollback(self, conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        self._added = _Postings()
        self._removed_rows.clear()
        self._removed_terms.clear()
        self._lengths = None

    def _existing_ids(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(ids), _CHUNK):
            part = ids[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            found.update(
                r[0] for r in self._conn.execute(f"SELECT id FROM records WHERE id IN ({marks})", part)
            )
        return found

    def _delete(self, conn: sqlite3.Connection, ids: list[str], change: _Change) -> None:
        for i in range(0, len(ids), _CHUNK):
            part = ids[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT rowid, id, content, meta FROM records WHERE id IN ({marks})", part
            ).fetchall()
            for row in rows:
                change.removed_rows.add(row[0])
                doc = _document(row)
                if doc.content is not None:
                    change.removed_terms.update(tokenize(self._bm25_text(doc)))
            conn.execute(f"DELETE FROM records WHERE id IN ({marks})", part)
            conn.executemany("DELETE FROM symbols WHERE row = ?", [(row[0],) for row in rows])

    def _merge_postings(self, conn: sqlite3.Connection) -> None:
        """Fold the pending additions and removals into the postings rows they touch."""
        added, removed_rows = self._added, self._removed_rows
        names = list(self._term_ids)
        term_of = np.frombuffer(added.terms, dtype=np.int64) if added.terms else np.zeros(0, np.int64)
        row_of = np.frombuffer(added.rows, dtype=np.int64) if added.rows else np.zeros(0, np.int64)
        tf_of = np.asarray(added.tfs, dtype=np.int32)
        gone = None  # removed row ids as a mask over row ids (no sort per term, unlike np.isin)
        if removed_rows:
            gone = np.zeros(max(removed_rows) + 1, dtype=bool)
            gone[list(removed_rows)] = True
            # a record written and removed again since the last merge leaves no posting either
            live = ~_among(gone, row_of)
            term_of, row_of, tf_of = term_of[live], row_of[live], tf_of[live]
        order = np.argsort(term_of, kind="stable")  # per term, rows stay in insertion (= row id) order
        grouped_terms, new_rows, new_tfs = term_of[order], row_of[order], tf_of[order]
        starts = np.flatnonzero(np.diff(grouped_terms, prepend=-1)) if len(grouped_terms) else grouped_terms
        firsts = grouped_terms[starts]
        ends = np.append(starts[1:], len(grouped_terms))[: len(starts)]
        new = {
            names[t]: (a, b) for t, a, b in zip(firsts.tolist(), starts.tolist(), ends.tolist(), strict=True)
        }
        touched = sorted(set(new) | self._removed_terms)  # B-tree reads and writes in key order
        stored = bool(touched) and (gone is not None or self._has_postings(conn))
        for i in range(0, len(touched), MERGE_TERMS_PER_STEP):  # the stored rows read a slice at a time
            terms = touched[i : i + MERGE_TERMS_PER_STEP]
            current = self._postings(conn, terms) if stored else {}
            upserts: list[tuple[str, bytes, bytes]] = []
            deletes: list[tuple[str]] = []
            for term in terms:
                docs, tfs = current.get(term, (None, None))
                if docs is not None and gone is not None:
                    keep = ~_among(gone, docs)
                    docs, tfs = docs[keep], tfs[keep]
                span = new.get(term)
                if span is not None:
                    more_docs, more_tfs = new_rows[span[0] : span[1]], new_tfs[span[0] : span[1]]
                    docs = more_docs if docs is None else np.concatenate([docs, more_docs])
                    tfs = more_tfs if tfs is None else np.concatenate([tfs, more_tfs])
                if docs is None or not len(docs):
                    deletes.append((term,))
                else:
                    upserts.append((term, docs.tobytes(), tfs.tobytes()))  # int64 row ids, int32 counts
            conn.executemany("DELETE FROM postings WHERE term = ?", deletes)
            conn.executemany("INSERT OR REPLACE INTO postings VALUES (?, ?, ?)", upserts)
        self._added = _Postings()
        self._term_ids = {}
        removed_rows.clear()
        self._removed_terms.clear()

    @staticmethod
    def _has_postings(conn: sqlite3.Connection) -> bool:
        return conn.execute("SELECT 1 FROM postings LIMIT 1").fetchone() is not None

    # -- serialization -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            persist_path=self.persist_path,
            header_field=self.header_field,
            header_weight=self.header_weight,
            bm25_algorithm=self.bm25_algorithm,
            bm25_parameters=self.bm25_parameters,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SQLiteBM25DocumentStore:
        return default_from_dict(cls, data)


@dataclass
class _Postings:
    """Pending postings as parallel arrays: term id, row id, term frequency."""

    terms: array = field(default_factory=lambda: array("q"))
    rows: array = field(default_factory=lambda: array("q"))
    tfs: array = field(default_factory=lambda: array("l"))

    def extend(self, other: _Postings) -> None:
        self.terms.extend(other.terms)
        self.rows.extend(other.rows)
        self.tfs.extend(other.tfs)


@dataclass
class _Change:
    """Postings produced by one write or delete call, before they join the store's pending ones."""

    added: _Postings = field(default_factory=_Postings)
    removed_rows: set[int] = field(default_factory=set)
    removed_terms: set[str] = field(default_factory=set)


def _among(mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Which of ``rows`` the boolean ``mask`` over row ids marks (rows past its end: none)."""
    return mask[np.minimum(rows, len(mask) - 1)] & (rows < len(mask))


def _kept_lengths(blob: Any, top: int) -> np.ndarray | None:
    """The kept ``(row id, token count)`` pairs, or ``None`` when there are none or they cannot be the
    table's (not whole pairs, a row id outside ``1..top``, a negative count)."""
    if not isinstance(blob, bytes) or len(blob) % 16:
        return None
    pairs = np.frombuffer(blob, dtype=np.int64).reshape(-1, 2)
    if len(pairs) and (pairs[:, 0].min() < 1 or pairs[:, 0].max() > top or pairs[:, 1].min() < 0):
        return None
    return pairs


def _document(row: tuple, score: float | None = None) -> Document:
    _, doc_id, content, meta = row
    return Document(id=doc_id, content=content, meta=orjson.loads(meta), score=score)


def _scaled(score: float, scale: bool) -> float:
    return float(1 / (1 + np.exp(-score / SCALING_FACTOR))) if scale else score


def meta_rows(store: Any, fields: list[str]) -> Iterator[tuple]:
    """``(id, meta[field], …)`` for every record of ``store``: read from the columns where the store
    can (``SQLiteBM25DocumentStore.meta_rows``), from its documents otherwise."""
    if isinstance(store, SQLiteBM25DocumentStore):
        yield from store.meta_rows(fields)
        return
    for doc in store.filter_documents():
        yield (doc.id, *(doc.meta.get(f) for f in fields))
