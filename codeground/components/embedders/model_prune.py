"""Built models nobody has used for a month are removed; downloads and measured choices never are.

Rule: what codeground builds from a model installed here — OpenVINO exports, distilled static
tables, cross-encoder exports (folders named by ``model_cache.built_target``) and the models
OpenVINO compiles from an export (``openvino-compiled/<cpu>/<export>``) — records its last use as
its folder's modification time (``model_cache.built_once`` and the encoder touch it at each load).
An entry unused for ``UNUSED_DAYS`` is removed, and so is a compiled model whose export is gone.
Each build prunes its neighbours (the cache grows only then); ``codeground cache prune`` does it on
demand. What is removed is rebuilt when next needed, from installed files and without a network,
under the same content fingerprint, so indexes and kept vectors still match it. Never removed:
downloads (the answer model's ``.gguf``), the reranker ``codeground reranker build`` trained (about
25 min), this machine's measured precision choice, and anything else this module does not name.
A folder another process is building or loading is skipped.

Usage:
```python
import os
import tempfile
import time
from pathlib import Path

from codeground.components.embedders.model_prune import entries, prune

root = Path(tempfile.mkdtemp())
old, new = root / "minilm-int8-0123456789abcdef", root / "minilm-fp32-fedcba9876543210"
for folder in (old, new):
    folder.mkdir()
    (folder / "model.xml").write_text("<net/>")
(root / "qwen.gguf").write_text("weights")
month_ago = time.time() - 31 * 86400
os.utime(old, (month_ago, month_ago))
assert [e.path for e in prune(root)] == [old]
assert {e.kind for e in entries(root)} == {"built", "download"}
```
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from codeground.components.embedders.model_cache import (
    BUILT_NAME,
    CHOICE_SUFFIX,
    COMPILED,
    cache_root,
    folder_lock,
)
from codeground.reranker.location import BUILT_RERANKER

UNUSED_DAYS = 30.0
DAY = 86400.0


@dataclass(frozen=True)
class Entry:
    """One thing in the models cache: what it is, its size and last use, and whether a prune may
    remove it (``rebuildable``); ``orphan`` marks a compiled model nothing can load any more."""

    path: Path
    kind: str  # built | compiled | download | choice | reranker | other
    size: int
    last_used: float
    rebuildable: bool
    orphan: bool = False


def entries(root: Path | None = None) -> list[Entry]:
    """Everything in the models cache ``root`` (default ``cache_root()``), sorted by path."""
    root = root or cache_root()
    if not root.is_dir():
        return []
    found: list[Entry] = []
    for path in sorted(_listed(root)):
        if path.name.startswith("."):  # locks, staging folders, temporary files
            continue
        if path.name == COMPILED and path.is_dir():
            found += _compiled(path, root)
        elif path.is_dir() and BUILT_NAME.match(path.name):
            found.append(_entry(path, "built", rebuildable=True))
        else:
            found.append(_entry(path, _kind(path), rebuildable=False))
    return found


def prune(
    root: Path | None = None, *, unused_days: float = UNUSED_DAYS, now: float | None = None
) -> list[Entry]:
    """Remove what ``root``'s cache can rebuild and nobody used for ``unused_days`` (and compiled
    models whose export is gone); the removed entries, sorted by path. Errors only skip an entry."""
    root = root or cache_root()
    now = time.time() if now is None else now
    cutoff = now - unused_days * DAY
    built = [e for e in entries(root) if e.kind == "built" and e.last_used < cutoff]
    removed = [e for e in built if _remove_built(e.path, cutoff)]
    # listed after: a compiled model whose export was just removed is removed with it
    for e in _compiled(root / COMPILED, root):
        if (e.orphan or e.last_used < cutoff) and _remove(e.path):
            removed.append(e)
    for cpu in _listed(root / COMPILED):
        with contextlib.suppress(OSError):
            cpu.rmdir()  # only when empty
    _leftovers(root, now - DAY)
    return sorted(removed, key=lambda e: e.path)


def _remove_built(folder: Path, cutoff: float) -> bool:
    """Remove ``folder`` unless a process holds it or it was used since the listing. It is first
    renamed out of the way (under its lock), so an interrupted removal never leaves a half-removed
    model under the name a load looks for; what an interruption leaves is a ``.``-named leftover
    that a later prune removes (``_leftovers``)."""
    if not folder.is_dir():  # another prune was faster: no lock file to create again
        return False
    with folder_lock(folder, fcntl.LOCK_EX, wait=False) as held:
        if not held:
            return False
        trash = folder.with_name(f".{folder.name}-pruned{os.getpid()}")
        try:
            if folder.stat().st_mtime >= cutoff:
                return False
            os.replace(folder, trash)
        except OSError:
            return False
        with contextlib.suppress(OSError):
            (folder.parent / f".{folder.name}.lock").unlink()
    _remove(trash)
    return True


def _leftovers(root: Path, cutoff: float) -> None:
    """Remove what an interrupted prune (``.<name>-pruned<pid>``) left, and an interrupted build's
    staging folder (``.<name>-<random>``) once it is older than ``cutoff`` (a day: a build takes
    minutes)."""
    for path in root.glob(".*-*"):
        name, tail = path.name[1:].rsplit("-", 1)
        with contextlib.suppress(OSError):
            if path.is_dir() and BUILT_NAME.match(name):
                if tail.startswith("pruned") or path.stat().st_mtime < cutoff:
                    shutil.rmtree(path)


def _remove(path: Path) -> bool:
    try:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        return False
    return True


def _compiled(folder: Path, root: Path) -> list[Entry]:
    """A compiled model per ``<cpu>/<export>`` folder; loose files in ``<cpu>`` come from the layout
    before models were kept per export, which nothing reads any more."""
    found = []
    for cpu in sorted(_listed(folder)):
        for path in sorted(_listed(cpu)):
            # an export of this cache that is gone; one kept elsewhere only ages like the rest
            gone = BUILT_NAME.match(path.name) and not (root / path.name).is_dir()
            orphan = not path.is_dir() or bool(gone)
            found.append(_entry(path, "compiled", rebuildable=True, orphan=orphan))
    return found


def _listed(folder: Path) -> list[Path]:
    """``folder``'s entries; none when it cannot be listed (removed meanwhile by another prune, or
    unreadable)."""
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _kind(path: Path) -> str:
    if path.suffix == ".gguf":
        return "download"
    if path.name.endswith(CHOICE_SUFFIX):
        return "choice"
    if path.name == BUILT_RERANKER:
        return "reranker"
    return "other"


def _entry(path: Path, kind: str, *, rebuildable: bool, orphan: bool = False) -> Entry:
    try:
        last_used = path.stat().st_mtime
    except OSError:
        last_used = 0.0
    return Entry(path, kind, _size(path), last_used, rebuildable, orphan)


def _size(path: Path) -> int:
    if not path.is_dir():
        with contextlib.suppress(OSError):
            return path.stat().st_size
        return 0
    total = 0
    for base, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(base, name)).st_size
    return total
