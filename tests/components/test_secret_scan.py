"""Tests for components.secret_scan: each key format is found and overwritten in place (same lines,
same offsets), code that only looks like a key is left alone, and this repository's own files hold
no false positive.

No key is written in this file: each is assembled at run time (``tests.fake_keys``), so that
indexing this repository redacts nothing here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeground.components.secret_scan import (
    KEY_FORMATS,
    PEM_MIN_UNTERMINATED,
    WHAT,
    find_keys,
    marker,
    redact,
    redaction_note,
)
from tests.fake_keys import B62, KEYS, UPPER36, fake, pem_body

ROOT = Path(__file__).resolve().parents[2]


def test_every_key_format_has_a_case_here():
    assert {kind for kind, _ in KEYS} == {f.kind for f in KEY_FORMATS} - {"aws-secret", "slack-webhook"}


@pytest.mark.parametrize(("kind", "key"), KEYS, ids=[f"{k}:{v[:8]}" for k, v in KEYS])
@pytest.mark.parametrize(
    "line",
    ['API_KEY = "{}"\n', "export TOKEN={}\n", '  "token": "{}",\n', "Authorization: Bearer {}\n"],
    ids=["python", "shell", "json", "header"],
)
def test_each_key_format_is_overwritten_in_place_keeping_lines_and_offsets(kind, key, line):
    text = "first line\n" + line.format(key) + "last line\n"
    found = redact(text)
    assert key not in found.text
    assert found.kinds == {kind: 1} and found.lines == 1
    assert len(found.text) == len(text) and found.text.count("\n") == text.count("\n")
    assert found.text == text.replace(key, marker(kind, len(key)))
    assert f"[REDACTED:{kind}]" in found.text


def test_a_secret_access_key_is_found_by_the_name_it_is_given():
    secret = fake("", 40, B62 + "/+")
    for text in (
        f"aws_secret_access_key = {secret}\n",
        f'AWS_SECRET_ACCESS_KEY="{secret}"\n',
        f'{{"SecretAccessKey": "{secret}"}}',
    ):
        found = redact(text)
        assert secret not in found.text and found.kinds == {"aws-secret": 1}, text
    assert redact(f"some_value = {secret}\n").lines == 0  # 40 characters alone say nothing


def test_a_slack_webhook_loses_its_secret_path():
    url = "https://hooks.slack.com/services/T0" + fake("", 8, UPPER36) + "/B0" + fake("", 8, UPPER36)
    url += "/" + fake("", 24)
    found = redact(f"WEBHOOK = '{url}'\n")
    assert found.kinds == {"slack-webhook": 1}
    assert "https://hooks.slack.com/services/" in found.text and url[-24:] not in found.text


@pytest.mark.parametrize(
    "label",
    [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "EC PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ],
)
def test_a_pem_private_key_block_keeps_its_begin_and_end_lines_and_loses_every_key_line(label):
    body = pem_body()
    block = f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----\n"
    text = "key = '''\n" + block + "'''\nprint(key)\n"
    found = redact(text)
    assert not [b for b in body if b in found.text]
    assert f"-----BEGIN {label}-----" in found.text and f"-----END {label}-----" in found.text
    assert found.lines == len(body) and found.kinds == {"private-key": len(body)}
    assert len(found.text) == len(text) and found.text.splitlines()[-1] == "print(key)"


def test_a_pem_block_is_found_in_string_literals_with_escapes_and_in_notebook_json():
    body = pem_body(3)
    one_line = (
        'K = "-----BEGIN RSA PRIVATE KEY-----\\n' + "\\n".join(body) + '\\n-----END RSA PRIVATE KEY-----"\n'
    )
    joined = "K = (\n" + "".join(f'    "{b}\\n"\n' for b in ["-----BEGIN PRIVATE KEY-----", *body])
    joined += '    "-----END PRIVATE KEY-----\\n"\n)\n'
    cell = {
        "cell_type": "code",
        "source": [
            "k = '''-----BEGIN RSA PRIVATE KEY-----\n",
            *(b + "\n" for b in body),
            "-----END RSA PRIVATE KEY-----'''\n",
        ],
    }
    notebook = json.dumps({"cells": [cell]}, indent=1)
    for text in (one_line, joined, notebook, json.dumps(one_line)):
        found = redact(text)
        assert not [b for b in body if b in found.text], text
        assert len(found.text) == len(text) and found.kinds == {"private-key": 3}
    json.loads(redact(notebook).text)  # still well-formed


def test_a_pem_block_without_end_counts_only_with_enough_key_material():
    body = pem_body(2)  # 128 key characters, cut off (a pasted fragment)
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n"
    assert redact(text).kinds == {"private-key": 2}
    short = "-----BEGIN RSA PRIVATE KEY-----\n" + fake("", PEM_MIN_UNTERMINATED - 1) + "\n"
    assert redact(short).lines == 0


@pytest.mark.parametrize(
    "code",
    [
        # code that names the markers, the way parsers and validators do
        'START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\nEND = b"-----END OPENSSH PRIVATE KEY-----"\n',
        'if "-----BEGIN PRIVATE KEY-----" in text and "-----END PRIVATE KEY-----" in text:\n    ok()\n',
        'MARKER = "PRIVATE KEY-----"  # RSA, EC, OpenSSH\n',
        # assignments that are not keys
        "password = getpass()\n",
        'password = os.environ["DB_PASSWORD"]\n',
        'api_key = "<your-api-key>"\n',
        'pad_token = "<pad>"; tokenizer = "bert-base-uncased"\n',
        'AWS_ACCESS_KEY_ID = os.environ.get("AWS_ACCESS_KEY_ID")\n',
        # identifiers and words with a key's prefix
        "from hf_AutoModelForCausalLMWithValueHeadAndMore import x\n",
        "hf_hub_download(repo_id, filename)\n",
        "sk-learn-compatible-estimator-wrappers-for-everything\n",
        "task-" + fake("", 40) + "\n",  # glued to a word: not an sk- token
        "def ghp_helper(): ...\nmask_AKIA = 1\n",
        "AKIAISTOOSHORT\n",
        "https://example.com/eyJhbGciOi\n",
    ],
)
def test_code_that_only_looks_like_a_key_is_left_exactly_as_it_is(code):
    found = redact(code)
    assert found.text is code and found.lines == 0 and found.kinds == {}


def test_this_repositorys_own_files_hold_no_false_positive():
    """Every hit in codeground's own source, tests, docs and YAML is listed here (a new one fails)."""
    expected = {("tests/conftest.py", "private-key")}  # FAKE_PEM, the sample repository's server.pem
    hits, scanned = set(), 0
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if not path.is_file() or rel.startswith((".venv/", ".git/")) or "/__pycache__/" in rel:
            continue
        if path.suffix not in {
            ".py",
            ".md",
            ".rst",
            ".yaml",
            ".yml",
            ".toml",
            ".json",
            ".txt",
            ".ipynb",
            ".cfg",
        }:
            continue
        scanned += 1
        hits |= {(rel, kind) for _, _, kind in find_keys(path.read_text(encoding="utf-8", errors="replace"))}
    assert scanned > 200
    assert hits == expected


def test_keys_are_counted_per_kind_and_lines_once_per_line():
    aws, github = fake("AKIA", 16, UPPER36), fake("ghp_", 36)
    found = redact(f"a = ['{aws}', '{github}']\nb = 1\nc = '{aws}'\n")
    assert found.lines == 2 and found.kinds == {"aws-key": 2, "github-token": 1}


def test_overlapping_finds_are_redacted_once():
    key = fake("sk-ant-api03-", 93)  # also an sk- token: counted once, as Anthropic's
    found = redact(f"KEY={key}\n")
    assert found.kinds == {"anthropic-key": 1}


def test_the_marker_is_as_long_as_the_key():
    assert marker("aws-key", 20) == "[REDACTED:aws-key]**"
    assert marker("anthropic-key", 12) == "*" * 12
    assert all(len(marker(k, n)) == n for k in WHAT for n in (1, 20, 64, 200))


def test_the_index_note_counts_lines_and_files_and_names_the_kinds():
    report = {"redacted": {"a.py": 2, "b.md": 1}, "redacted_kinds": {"aws-key": 1, "private-key": 2}}
    assert redaction_note(report) == "3 lines that look like keys (private key, AWS) redacted in 2 files"
    one = {"redacted": {"a.py": 1}, "redacted_kinds": {"jwt": 1}}
    assert redaction_note(one) == "1 line that look like keys (JWT) redacted in 1 file"
    assert redaction_note({"redacted": {}}) is None and redaction_note({}) is None
