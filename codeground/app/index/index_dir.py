"""Where an index lives and how a new one replaces the old without ever leaving a broken one.

Rule: the index for a repository lives in ``<repo>/.codeground/`` unless ``--index-dir DIR`` says
otherwise. A query command told neither ``--index-dir`` nor ``--repo`` uses the index of the working
folder or of the nearest folder above it that has one, up to the checkout's root
(``find_index_dir``), as git finds its repository from a subfolder: ``codeground search`` in
``<repo>/src`` had said "no index"; and ``codeground index`` without a path updates that index's
repository (``app.cli.index_cmd.indexed_repository``). Inside an index folder, each build writes a
fresh generation directory (``gen-…``) holding the Chroma store, the BM25 store and the manifest; the
file ``CURRENT`` names the live generation and is swapped atomically (``os.replace``) only after the
new generation is complete. An interrupted run (Ctrl-C, SIGKILL, a crash) therefore leaves
``CURRENT`` pointing at the previous, intact generation; the half-written one is removed by the next
run.

The folder holds a ``.gitignore`` of ``*`` but ``prompt.md`` (written by ``codeground index`` when
missing, into a ``.codeground`` folder or one the run creates or finds empty, as pytest, ruff and
virtualenv mark their folders), so an index inside a checkout never shows in ``git status`` nor is
committed by ``git add -A``, while a ``prompt.md`` the repository ships there is; an existing folder
of the user's given as ``--index-dir`` gets none (it would hide their files), and the repository's
own ``.gitignore`` is not touched.

Readers (every ``QueryEngine``: the chat, ``serve``, ``mcp``, ``search``) hold a **lease** on the
generation they opened: a shared ``flock`` on its ``.readers`` file, released when the engine is
gone. A run removes a replaced generation only when it can take that lock exclusively, so a
process still answering from the old generation keeps it until it lets go (the last reader to
leave a replaced generation removes it; otherwise the next run does).
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from codeground.app.errors import CodegroundError

INDEX_DIRNAME = ".codeground"
GITIGNORE = (
    "# created by codeground: this folder is an index, never to be committed;\n"
    "# a prompt.md the repository ships for its questions is kept\n*\n!prompt.md\n"
)
CURRENT = "CURRENT"
READERS = ".readers"


def _drop_server_collections(gen: Path) -> None:
    """A generation's collections on a Chroma or Qdrant server go with it (``stores/server_chroma.py``,
    ``stores/qdrant.py``)."""
    from codeground.components.stores import server_chroma

    if (gen / server_chroma.REGISTRY_FILE).is_file():
        server_chroma.drop_registered(gen)
    if (gen / "qdrant_collections.json").is_file():
        from codeground.components.stores import qdrant

        qdrant.drop_registered(gen)


class Lease:
    """A reader's hold on one generation (see the module docstring); ``close()`` lets go."""

    def __init__(self, index: IndexDir, gen: Path, fh) -> None:
        self.index, self.gen, self._fh = index, gen, fh

    def close(self) -> None:
        if self._fh is None:
            return
        fh, self._fh = self._fh, None
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()
        if self.gen != self.index.current():  # replaced meanwhile: the last reader cleans up
            self.index.remove_unheld(self.gen)


def default_index_dir(repo: str | Path) -> Path:
    """The documented default: ``<repo>/.codeground``."""
    return Path(repo).resolve() / INDEX_DIRNAME


def find_index_dir(start: str | Path = ".") -> Path:
    """``.codeground`` of ``start`` or of the nearest folder above it holding an index (a ``CURRENT``
    file), looking no higher than the checkout ``start`` is in (the first folder with ``.git``), so an
    index of a home folder or of ``/tmp`` never answers for a project below it; ``start``'s own when
    none does, so the error names the folder the user is in."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if os.path.isfile(folder / INDEX_DIRNAME / CURRENT):  # False, not an error, where unreadable
            return folder / INDEX_DIRNAME
        if _checkout_root(folder):
            break
    return here / INDEX_DIRNAME


def _checkout_root(folder: Path) -> bool:
    """Whether ``folder`` is the top of a checkout: a ``.git`` folder, or a ``.git`` file of a linked
    worktree. A submodule's ``.git`` file (``gitdir: …/modules/…``) is not: the superproject's index
    holds its files, so the search goes on above it."""
    git = folder / ".git"
    if os.path.isdir(git):
        return True
    try:
        link = git.read_text(encoding="utf-8", errors="replace")
    except OSError:  # none, or unreadable
        return False
    return "/modules/" not in link.replace("\\", "/")


def index_command(index_dir: str | Path, root: str | Path | None, *extra: str) -> str:
    """The ``codeground index`` that updates the index in ``index_dir``, to be run from anywhere: its
    repository ``root`` (the manifest's; a ``.codeground`` folder's parent when unknown; ``PATH`` when
    neither), with ``--index-dir`` unless the index is that root's default (a bare ``codeground
    index .`` in a subfolder would make a second, nearer index). Every message saying how to build
    or rebuild an index uses it."""
    folder = Path(index_dir).resolve()
    if root is None and folder.name == INDEX_DIRNAME:
        root = folder.parent
    command = ["codeground", "index", shlex.quote(str(root)) if root is not None else "PATH", *extra]
    if root is None or folder != default_index_dir(root):
        command += ["--index-dir", shlex.quote(str(folder))]
    return " ".join(command)


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
        """Remove generations that are not live (left by an interrupted run or replaced) and that no
        reader holds."""
        live = self.current()
        for child in self.path.glob("gen-*"):
            if child.is_dir() and child != live:
                self.remove_unheld(child)

    def discard(self, gen: Path) -> None:
        """Remove a generation this run made and will not commit, with its server collections."""
        _drop_server_collections(gen)
        shutil.rmtree(gen, ignore_errors=True)

    def remove_unheld(self, gen: Path) -> bool:
        """Remove ``gen`` unless a reader holds a lease on it; whether it was removed."""
        try:
            fh = open(gen / READERS, "a")
        except FileNotFoundError:  # gone, or never read
            _drop_server_collections(gen)
            shutil.rmtree(gen, ignore_errors=True)
            return not gen.exists()
        with fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # a reader is still answering from it
            _drop_server_collections(gen)
            shutil.rmtree(gen, ignore_errors=True)
        return not gen.exists()

    def hold(self, gen: Path) -> Lease:
        """A lease on ``gen`` for a reader; ``FileNotFoundError`` when it vanished before the lease
        was taken (the caller opens the live generation again)."""
        fh = open(gen / READERS, "a")
        fcntl.flock(fh, fcntl.LOCK_SH)
        if not gen.is_dir() or not any(gen.iterdir()):
            fh.close()
            raise FileNotFoundError(gen)
        return Lease(self, gen, fh)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory's write lock; a second concurrent ``index`` fails with one line."""
        made = not self.path.exists() or (self.path.is_dir() and not any(self.path.iterdir()))
        self.path.mkdir(parents=True, exist_ok=True)
        ignore = self.path / ".gitignore"
        if (made or self.path.name == INDEX_DIRNAME) and not ignore.exists():
            ignore.write_text(GITIGNORE, encoding="utf-8")
        with open(self.path / ".lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise CodegroundError(f"another `codeground index` is writing {self.path}") from exc
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
