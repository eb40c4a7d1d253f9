"""A disk that fills up during `codeground index` is named as the cause, with the room needed, and
the previous index is kept (issue 55, item 8)."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest

from codeground.app.index.disk_space import disk_full_hint, says_disk_full
from tests.reliability.helpers import assert_no_traceback, cg


def _generated_repo(root: Path, files: int = 200) -> Path:
    root.mkdir(parents=True)
    for i in range(files):
        body = "\n".join(
            f'def func_{i}_{j}(x, y):\n    """Step {j} of stage {i}."""\n    return x * {j} + y\n'
            for j in range(30)
        )
        (root / f"stage_{i}.py").write_text(body)
    return root


@pytest.fixture
def small_disk(tmp_path):
    """A 12 MB tmpfs (the index of the generated repository needs about 20 MB), unmounted after."""
    mount = tmp_path / "small"
    mount.mkdir()
    command = ["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mount)]
    made = subprocess.run(command, capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_index_on_a_full_disk_says_the_disk_is_full_and_how_much_it_needs(tmp_path, small_disk):
    repo = _generated_repo(tmp_path / "repo")
    result = cg("index", repo, "--index-dir", small_disk / "idx", "--no-fill")
    assert result.exit_code == 1
    assert_no_traceback(result)
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]  # after progress lines
    assert f"the disk holding {small_disk / 'idx'} is full (" in line
    assert "nothing in the index was changed" in line and "this index needs " in line
    assert "MB" in line.split("this index needs ", 1)[1]
    assert not list((small_disk / "idx").glob("gen-*")), "the half-built generation is left on the disk"


def test_a_disk_full_error_keeps_the_previous_index_searchable(tmp_path, small_disk):
    small = _generated_repo(tmp_path / "repo", files=3)
    assert cg("index", small, "--index-dir", small_disk / "idx", "--no-fill").exit_code == 0
    for i in range(3, 200):  # the repository grows past what the disk holds
        (small / f"stage_{i}.py").write_text((small / "stage_0.py").read_text().replace("_0_", f"_{i}_"))
    failed = cg("index", small, "--index-dir", small_disk / "idx", "--no-fill")
    assert failed.exit_code != 0 and "is full (" in failed.stderr, failed.output
    found = cg("search", "func_2_7", "-k", "1", "--index-dir", small_disk / "idx")
    assert found.exit_code == 0 and "stage_2.py" in found.stdout, found.output


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        RuntimeError("Query error: (code: 13) database or disk is full"),
    ],
    ids=["enospc", "sqlite-full"],
)
def test_the_disk_full_rule_reads_the_error_chain(exc):
    wrapped = RuntimeError("indexing failed")
    wrapped.__cause__ = exc
    assert says_disk_full(wrapped)


def test_an_ordinary_failure_on_a_roomy_disk_gets_no_disk_hint(tmp_path):
    hint = disk_full_hint(
        RuntimeError("connection refused"), tmp_path, written_bytes=10, done_files=1, total_files=2
    )
    assert hint == ""
