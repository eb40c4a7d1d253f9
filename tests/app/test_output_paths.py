"""What a command will write is checked before its work, and the check leaves nothing behind."""

from __future__ import annotations

import os

import pytest

from codeground.app.errors import CodegroundError
from codeground.app.output_paths import check_output_file, check_output_folder


def test_checking_an_output_file_leaves_its_new_folders_but_no_file_and_keeps_a_users_link(tmp_path):
    check_output_file(tmp_path / "runs" / "today.json")
    assert (tmp_path / "runs").is_dir() and not (tmp_path / "runs" / "today.json").exists()
    os.symlink(tmp_path / "elsewhere.json", tmp_path / "report.json")  # a link to a file not yet written
    check_output_file(tmp_path / "report.json")
    assert os.path.islink(tmp_path / "report.json")


def test_checking_an_output_folder_removes_every_folder_it_made_and_refuses_what_cannot_hold_one(tmp_path):
    check_output_folder(tmp_path / "a" / "b" / "c", empty=False)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "CURRENT").write_text("gen-1")
    check_output_folder(tmp_path / "index", empty=False)  # an index folder holds the index it updates
    with pytest.raises(CodegroundError, match="it exists and is not empty"):
        check_output_folder(tmp_path / "index")
    with pytest.raises(CodegroundError, match="CURRENT is not a folder"):
        check_output_folder(tmp_path / "index" / "CURRENT" / "x", empty=False)
    os.symlink(tmp_path / "gone", tmp_path / "dangling")
    with pytest.raises(CodegroundError, match="it is a link to nothing"):
        check_output_folder(tmp_path / "dangling", empty=False)
