"""Tests for the walker's rule 7: keys in an indexed file's text are overwritten before the file
leaves the walker, and the report says where."""

from __future__ import annotations

import hashlib
from pathlib import Path

from codeground.components import walker as walker_module
from codeground.components.secret_scan import marker
from codeground.components.walker import RepositoryWalker
from tests.fake_keys import UPPER36, fake, pem_body

AWS = fake("AKIA", 16, UPPER36)
GITHUB = fake("ghp_", 36)


def test_keys_in_source_are_overwritten_in_the_stream_and_counted_in_the_report(tmp_path: Path):
    body = pem_body(3)
    source = f'AWS_KEY = "{AWS}"\nTOKEN = "{GITHUB}"\n\ndef f():\n    return 1\n'
    pem = (
        "KEY = '''-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(body)
        + "\n-----END RSA PRIVATE KEY-----'''\n"
    )
    (tmp_path / "settings.py").write_text(source)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "keys.md").write_text("# Keys\n\n```python\n" + pem + "```\n")
    (tmp_path / "clean.py").write_text("def g():\n    return 2\n")
    result = RepositoryWalker().run(root=str(tmp_path))
    streams = {s.meta["file_path"]: s for s in result["files"]}

    settings = streams["settings.py"]
    text = settings.data.decode()
    assert AWS not in text and GITHUB not in text
    assert text == source.replace(AWS, marker("aws-key", 20)).replace(GITHUB, marker("github-token", 40))
    assert settings.meta["sha256"] == hashlib.sha256(source.encode()).hexdigest()  # the file on disk
    doc = streams["docs/keys.md"].data.decode()
    assert not [b for b in body if b in doc] and len(doc.splitlines()) == len(pem.splitlines()) + 4
    assert streams["clean.py"].data == (tmp_path / "clean.py").read_bytes()

    report = result["report"]
    assert report["redacted"] == {"docs/keys.md": 3, "settings.py": 2}
    assert report["redacted_kinds"] == {"aws-key": 1, "github-token": 1, "private-key": 3}
    assert report["indexed"] == 3 and report["skipped"] == {}


def test_a_walk_with_no_key_reports_empty_redactions(tmp_path: Path):
    (tmp_path / "a.py").write_text("x = 1\n")
    report = RepositoryWalker().run(root=str(tmp_path))["report"]
    assert report["redacted"] == {} and report["redacted_kinds"] == {}


def test_contents_the_caller_knows_clean_are_not_scanned_again(tmp_path: Path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text(f"K = '{AWS}'\n")
    scanned = []
    real = walker_module.redact
    monkeypatch.setattr(walker_module, "redact", lambda text: scanned.append(text) or real(text))
    known = hashlib.sha256(b"x = 1\n").hexdigest()
    result = RepositoryWalker().run(root=str(tmp_path), clean=[known])
    assert scanned == [f"K = '{AWS}'\n"]  # only the file not known clean
    assert result["report"]["redacted"] == {"b.py": 1}
