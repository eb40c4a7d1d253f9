"""Whether an index run failed because its disk filled up, and how much room it would need.

Rule: a store that runs out of room says so in its own words (SQLite's ``database or disk is full``,
Chroma's ``Failed to apply logs to the hnsw segment writer``, ``OSError(ENOSPC)``), or not at all.
So a failed run counts as "disk full" when any exception in its chain is an ``OSError`` with
``ENOSPC``/``EDQUOT``, or its message says the disk is full or out of space, or — whatever it says —
the file system holding the index has less than ``NEARLY_FULL_BYTES`` free at the moment of the
failure (before the half-built generation is removed). Then the error line says so, with the free
space and what the index needs: the half-built generation's size scaled by the share of files it
had reached (only a lower bound while none was in), and never less than the previous generation's.

Usage:
```python
import errno
from codeground.app.index.disk_space import disk_full_hint

hint = disk_full_hint(OSError(errno.ENOSPC, "No space left on device"), ".", written_bytes=3_000_000,
                      done_files=1, total_files=4, previous_bytes=0)
assert hint.startswith("; the disk holding ") and "needs about 12 MB" in hint
```
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

NEARLY_FULL_BYTES = 1 << 20  # under 1 MiB free when a write failed: the disk is the likely cause
_FULL_WORDS = re.compile(r"no space left|disk is full|disk full|quota exceeded|out of disk", re.IGNORECASE)
_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _chain(exc: BaseException):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def says_disk_full(exc: BaseException) -> bool:
    """An exception (or one it was raised from) that reports a full disk or quota."""
    return any(
        (isinstance(e, OSError) and e.errno in _FULL_ERRNOS) or _FULL_WORDS.search(str(e))
        for e in _chain(exc)
    )


def free_bytes(folder: str | Path) -> int | None:
    """Free bytes on the file system holding ``folder`` (its nearest existing parent), or None."""
    path = Path(folder).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def folder_bytes(folder: str | Path | None) -> int:
    """The bytes the regular files under ``folder`` take (0 for None or a missing folder)."""
    total = 0
    if folder is None:
        return 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} KB"


def disk_full_hint(
    exc: BaseException,
    folder: str | Path,
    *,
    written_bytes: int,
    done_files: int,
    total_files: int,
    previous_bytes: int = 0,
) -> str:
    """``"; the disk holding … is full (… free); this index needs about …"`` for a disk-full failure
    (the module's rule), else ``""``."""
    free = free_bytes(folder)
    if not (says_disk_full(exc) or (free is not None and free < NEARLY_FULL_BYTES)):
        return ""
    floor = max(written_bytes, previous_bytes)
    if 0 < done_files < total_files:  # a share of the files is in: scale what it took
        need = f"about {_mb(max(int(written_bytes * total_files / done_files), floor))}"
    else:  # the first batch did not get in: only a lower bound is known
        need = f"more than {_mb(floor)}"
    free_text = f"{_mb(free)} free" if free is not None else "free space unknown"
    return (
        f"; the disk holding {Path(folder).absolute()} is full ({free_text}); this index needs {need}: "
        "free some space or pass --index-dir on a larger disk"
    )
