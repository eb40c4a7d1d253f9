"""The live generation of an index folder, opened for reading: its manifest checked (a missing,
unreadable or foreign index is one line saying how to build one) and, with ``open_index_with_files``,
its per-file entries read under a reader's lease (``IndexDir.hold``)."""

from __future__ import annotations

from pathlib import Path

from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir, index_command
from codeground.app.index.manifest import READABLE_FORMATS, Manifest


def open_index(index_dir: str | Path) -> tuple[Path, Manifest]:
    """The live generation and its manifest, or a one-line error saying how to build one."""
    location = IndexDir(index_dir)
    gen = location.current()
    if gen is None and location.path.exists() and not location.path.is_dir():
        # `codeground index … --index-dir` refuses a file too: advise what works
        raise CodegroundError(
            f"no index in {location.path}: it is a file, not an index folder; pass --index-dir the "
            "folder an index was built into (`codeground index PATH` builds PATH/.codeground)"
        )
    if gen is None:
        raise CodegroundError(
            f"no index in {location.path}: run `{index_command(location.path, None)}` "
            "(or pass --index-dir to an existing one)"
        )
    manifest = Manifest.load(gen)
    if manifest is None:
        raise CodegroundError(
            f"the index in {location.path} has no readable manifest: "
            f"rebuild it with `{index_command(location.path, None, '--full')}`"
        )
    if manifest.format not in READABLE_FORMATS:
        rebuild = index_command(location.path, manifest.root, "--full")
        readable = " and ".join(map(str, READABLE_FORMATS))
        raise CodegroundError(
            f"the index in {location.path} was built by another codeground (index format {manifest.format}, "
            f"this one reads {readable}): rebuild it with `{rebuild}`"
        )
    return gen, manifest


def _open_held(index_dir: str | Path):
    """The live generation, its manifest and a reader's lease on it (``IndexDir.hold``)."""
    for _ in range(5):
        gen, manifest = open_index(index_dir)
        try:
            return gen, manifest, IndexDir(index_dir).hold(gen)
        except FileNotFoundError:  # replaced and removed between reading CURRENT and the lease
            continue
    raise CodegroundError(
        f"the index in {index_dir} keeps changing; try again when `codeground index` is done"
    )


def open_index_with_files(index_dir: str | Path) -> tuple[Path, Manifest]:
    """``open_index``, with the per-file entries (``files.json``) read under a reader's lease: an index
    run that replaces the generation meanwhile cannot remove them before they are read."""
    gen, manifest, lease = _open_held(index_dir)
    try:
        len(manifest.files)  # read now (FileEntries keeps them)
    finally:
        lease.close()
    return gen, manifest
