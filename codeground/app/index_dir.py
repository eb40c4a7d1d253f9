"""Where an index lives and how a new one replaces the old without ever leaving a broken one.

Rule: the index for a repository lives in ``<repo>/.codeground/`` unless ``--index-dir DIR`` says
otherwise. Inside it, each build writes a fresh generation directory (``gen-…``) holding the Chroma
store, the BM25 store and the manifest; the file ``CURRENT`` names the live generation and is
swapped atomically (``os.replace``) only after the new generation is complete. An interrupted run
(Ctrl-C, SIGKILL, a crash) therefore leaves ``CURRENT`` pointing at the previous, intact generation;
the half-written one is removed by the next run.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from codeground.app.errors import CodegroundError

INDEX_DIRNAME = ".codeground"
CURRENT = "CURRENT"


def default_index_dir(repo: str | Path) -> Path:
    """The documented default: ``<repo>/.codeground``."""
    return Path(repo).resolve() / INDEX_DIRNAME


class IndexDir:
    """An index directory holding generations; see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()

    def current(self) -> Path | None:
        """The live generation directory, or ``None`` when nothing was ever committed."""
        pointer = self.path / CURRENT
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        gen = self.path / name
        return gen if name and gen.is_dir() else None

    def new_generation(self, copy_from: Path | None) -> Path:
        """Create a new generation, optionally as a copy of ``copy_from`` (incremental runs)."""
        self.path.mkdir(parents=True, exist_ok=True)
        gen = self.path / f"gen-{time.time_ns()}"
        if copy_from is not None:
            shutil.copytree(copy_from, gen)
        else:
            gen.mkdir()
        return gen

    def commit(self, gen: Path) -> None:
        """Make ``gen`` the live generation atomically, then drop every other generation."""
        tmp = self.path / f"{CURRENT}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(gen.name + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path / CURRENT)
        self.remove_stale()

    def remove_stale(self) -> None:
        """Remove generations that are not live (left by an interrupted run or replaced)."""
        live = self.current()
        for child in self.path.glob("gen-*"):
            if child.is_dir() and child != live:
                shutil.rmtree(child, ignore_errors=True)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory's write lock; a second concurrent ``index`` fails with one line."""
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / ".lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise CodegroundError(f"another `codeground index` is writing {self.path}") from exc
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
