"""What a command writes after its work (``--out``, ``--json``, ``--log``), checked before the work.

Rule: a file's folder is made if missing (a user naming ``runs/today.json`` expects it), and the file
must open for appending there now; a file that did not exist before the check is removed again, so a
run that fails later leaves no empty file. A folder to write into must be makeable, or exist and be
writable: empty for ``reranker build --out``, any for an index folder (``--index-dir``). Otherwise one
``CodegroundError`` line, ``cannot write PATH: reason``, comes before any model loads: such paths had
ended `search-file`, `eval` and `eval-answers` in a traceback after all their questions had run,
`reranker build --out` after its training, and `codeground index` at once.

```python
import tempfile
from pathlib import Path

from codeground.app.errors import CodegroundError
from codeground.app.output_paths import check_output_file

check_output_file(Path(tempfile.mkdtemp()) / "runs" / "today.json")  # made its folder; no file left
try:
    check_output_file(Path("/dev/null/report.json"))
except CodegroundError as exc:
    print(exc)  # cannot write /dev/null/report.json: /dev/null is not a folder
```
"""

from __future__ import annotations

import os
from pathlib import Path

from codeground.app.errors import CodegroundError


def _check_folders_above(path: Path) -> None:
    blocker = next((folder for folder in path.parents if folder.exists() and not folder.is_dir()), None)
    if blocker is not None:
        raise CodegroundError(f"cannot write {path}: {blocker} is not a folder")


def check_output_folder(path: Path | None, *, empty: bool = True) -> None:
    """Raise ``CodegroundError`` unless ``path`` (``None``: nothing asked) is a folder that can be
    made, or one that exists (and is ``empty``, unless told otherwise: an index folder holds the
    index it updates) and can be written (module rule); the folders the check made are removed again."""
    if path is None:
        return
    _check_folders_above(path)
    if path.exists() and not path.is_dir():
        raise CodegroundError(f"cannot write {path}: it is a file, not a folder")
    if path.is_dir():
        if empty and any(path.iterdir()):
            raise CodegroundError(f"cannot write {path}: it exists and is not empty")
        if not os.access(path, os.W_OK | os.X_OK):
            raise CodegroundError(f"cannot write {path}: no permission to write in it")
        return
    made = [folder for folder in (path, *path.parents) if not os.path.lexists(folder)]
    try:
        path.mkdir(parents=True)
    except FileExistsError:  # made meanwhile (another run), or a dangling link in its place
        if not path.is_dir():
            raise CodegroundError(f"cannot write {path}: it is a link to nothing") from None
        return
    except OSError as exc:
        raise CodegroundError(f"cannot write {path}: {exc.strerror or exc}") from exc
    for folder in made:  # deepest first; one another run has begun to use stays (not empty)
        try:
            folder.rmdir()
        except OSError:
            break


def check_output_file(path: Path | None) -> None:
    """Raise ``CodegroundError`` unless ``path`` (``None``: nothing asked) can be written (module rule)."""
    if path is None:
        return
    _check_folders_above(path)
    existed = os.path.lexists(path)  # a dangling link is the user's: written through, never removed
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise CodegroundError(f"cannot write {path}: {exc.strerror or exc}") from exc
    if not existed:
        path.unlink(missing_ok=True)
