"""An index run scans for keys only what it does not already know to be clean: the contents its
previous index, built under the same settings (the key-scan rules among them), found no key in."""

from __future__ import annotations

from pathlib import Path

from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
from codeground.components import records
from codeground.components import walker as walker_module
from tests.fake_keys import UPPER36, fake

AWS = fake("AKIA", 16, UPPER36, seed=3)


def _counting(monkeypatch) -> list[str]:
    scanned: list[str] = []
    real = walker_module.redact
    monkeypatch.setattr(walker_module, "redact", lambda text: scanned.append(text) or real(text))
    return scanned


def test_an_index_run_rescans_only_new_changed_or_redacted_files_unless_the_settings_changed(
    tmp_path: Path, monkeypatch
):
    repo, idx = tmp_path / "repo", tmp_path / "idx"
    repo.mkdir()
    (repo / "a.py").write_text("def a():\n    return 1\n")
    (repo / "b.py").write_text(f"KEY = '{AWS}'\n\n\ndef b():\n    return 2\n")
    scanned = _counting(monkeypatch)
    first = run_index(repo, idx, DEFAULT_INDEX_PIPELINE)
    assert len(scanned) == 2 and first.walk["redacted"] == {"b.py": 1}

    scanned.clear()
    again = run_index(repo, idx, DEFAULT_INDEX_PIPELINE)
    assert again.up_to_date and again.walk["redacted"] == {"b.py": 1}
    assert scanned == [(repo / "b.py").read_text()]  # a.py is known clean; b.py is redacted again

    scanned.clear()
    (repo / "a.py").write_text("def a():\n    return 3\n")
    run_index(repo, idx, DEFAULT_INDEX_PIPELINE)
    assert len(scanned) == 2  # a.py changed

    scanned.clear()
    monkeypatch.setattr(records, "RECORDS_VERSION", records.RECORDS_VERSION + 1)  # new scan rules
    rebuilt = run_index(repo, idx, DEFAULT_INDEX_PIPELINE)
    assert rebuilt.full and len(scanned) == 2
