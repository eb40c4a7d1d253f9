"""Find keys pasted into a file's text and redact them, before anything else reads the text.

Rules:
- ``KEY_FORMATS`` is the table of what is found: PEM private key blocks (``-----BEGIN ... PRIVATE
  KEY-----`` through ``END``, PGP private key blocks too, also inside string literals with ``\\n``
  escapes or a notebook's JSON), AWS access key ids (``AKIA``/``ASIA`` + 16) and a secret access key
  assigned to ``aws_secret_access_key``, GitHub (``ghp_ gho_ ghu_ ghs_ ghr_ github_pat_``), GitLab
  (``glpat-``), Slack tokens (``xox[abprs]-``) and webhooks, Stripe live keys (``sk_live_``,
  ``rk_live_``), Google API keys (``AIza`` + 35), OpenAI (``sk-`` + 32 or more letters and digits,
  ``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``), Anthropic (``sk-ant-``), Hugging Face (``hf_``),
  npm (``npm_``) and PyPI (``pypi-AgEI...``) tokens, and JSON Web Tokens. A token must stand alone
  (no letter or digit glued to either end) and look random (letters *and* digits, or mixed case
  that does not read as CamelCase words), so ``hf_AutoModelForCausalLMWithValueHead`` stays.
- There is no rule for ``password = "..."`` and the like: a value assigned to a name carries no
  format to tell a key from a placeholder or a test literal. Measured on codeground's dependencies
  (22,872 files of its virtualenv), such a rule (``password``, ``secret``, ``api_key``, ``*_token``
  names; a quoted value of 8+ characters) fired 212 times; the 45 values that looked random were
  documentation examples and test literals, and some were code (``"V1Secret": ".models.v1_secret"``
  in kubernetes' import table). Files that hold such values by convention are refused by name
  (``secret_files``). The formats above fired twice in that virtualenv's 34,339 text files, both
  times on a test token (a Hugging Face CI token in transformers, a fake ``sk-proj-`` in posthog).
- Redaction overwrites each key *in place* with a marker of the same length,
  ``[REDACTED:<kind>]`` padded with ``*`` (only ``*`` when the key is shorter than the marker): line
  breaks and every character offset stay as they were, so line numbers, record ids and char ranges
  still point into the file on disk, and JSON or a string literal stays well-formed. In a PEM
  block the ``BEGIN``/``END`` lines stay (they name what was there); each run of key characters
  between them is overwritten. A ``BEGIN`` line with no ``END`` counts when at least 64 key
  characters follow it; text that only *names* the markers (``if "-----BEGIN ... PRIVATE
  KEY-----" in text``) is left alone.
- ``redact(text)`` returns the text unchanged (the same object) when nothing is found; each format
  is tried only when one of its fixed anchors is in the text (about 90 MB/s in all).
- A change to these rules bumps ``records.RECORDS_VERSION``: every index is then rebuilt, and no
  index run trusts an earlier verdict that a file is clean (``app.index.indexing``).

Usage:
```python
from codeground.components.secret_scan import redact

key = "AKIA" + "Z7Q2JX5LMN3P8RTV"  # spelled in two parts so this file holds no key
found = redact(f"aws_access_key_id = {key}\\nregion = eu-west-1\\n")
print(found.text.splitlines()[0])  # aws_access_key_id = [REDACTED:aws-key]**
assert found.lines == 1 and found.kinds == {"aws-key": 1} and len(found.text) == 60
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# what may sit between BEGIN and END: header lines, \n escapes, key characters, quotes, separators
_PEM_BODY = re.compile(r"(?:[A-Za-z][A-Za-z-]*+: [^\n\"'\\]*+|\\\\?[nrt]|[A-Za-z0-9+/=]++|[\s\"',+]++)*+")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_RUN = re.compile(r"\\\\?[nrt]|(?P<key>[A-Za-z0-9+/=]{8,})")
PEM_MIN_UNTERMINATED = 64  # key characters after a BEGIN line with no END


@dataclass(frozen=True)
class KeyFormat:
    """One kind of key: its marker name, the words a report uses, its anchors and its pattern (the
    key is the group ``key`` if the pattern has one, else the whole match)."""

    kind: str
    what: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    random_looking: bool = True  # the key must mix letters and digits, or cases
    standalone: bool = True  # nothing glued to its start (its end is the pattern's look-ahead)


def _token(body: str) -> str:
    """A token with no letter, digit, ``_`` or ``-`` glued to its end (``find_keys`` checks its
    start: a look-behind here would cost the regex engine its literal-prefix search)."""
    return rf"(?P<key>{body})(?![A-Za-z0-9_-])"


_GLUED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


KEY_FORMATS: tuple[KeyFormat, ...] = (
    KeyFormat("aws-key", "AWS", ("AKIA", "ASIA"), re.compile(_token(r"(?:AKIA|ASIA)[A-Z0-9]{16}"))),
    KeyFormat(
        "aws-secret",
        "AWS",
        ("ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey"),
        re.compile(
            r"(?i:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<key>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        standalone=False,
    ),
    KeyFormat("github-token", "GitHub", ("gh",), re.compile(_token(r"gh[pousr]_[A-Za-z0-9]{36,255}"))),
    KeyFormat(
        "github-token", "GitHub", ("github_pat_",), re.compile(_token(r"github_pat_[A-Za-z0-9_]{60,255}"))
    ),
    KeyFormat("gitlab-token", "GitLab", ("glpat-",), re.compile(_token(r"glpat-[A-Za-z0-9_-]{20,64}"))),
    KeyFormat("slack-token", "Slack", ("xox",), re.compile(_token(r"xox[abprs]-[0-9]+-[A-Za-z0-9-]{8,}"))),
    KeyFormat(
        "slack-webhook",
        "Slack",
        ("hooks.slack.com/",),
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows)/(?P<key>T[A-Z0-9]+/[A-Z0-9]+/[A-Za-z0-9]{16,})"
        ),
        standalone=False,
    ),
    KeyFormat("stripe-key", "Stripe", ("_live_",), re.compile(_token(r"(?:sk|rk)_live_[A-Za-z0-9]{16,247}"))),
    KeyFormat("google-api-key", "Google API", ("AIza",), re.compile(_token(r"AIza[0-9A-Za-z_-]{35}"))),
    KeyFormat("anthropic-key", "Anthropic", ("sk-ant-",), re.compile(_token(r"sk-ant-[A-Za-z0-9_-]{32,}"))),
    KeyFormat(
        "openai-key",
        "OpenAI",
        ("sk-",),
        re.compile(_token(r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|[A-Za-z0-9]{32,})")),
    ),
    KeyFormat("huggingface-token", "Hugging Face", ("hf_",), re.compile(_token(r"hf_[A-Za-z0-9]{30,40}"))),
    KeyFormat("npm-token", "npm", ("npm_",), re.compile(_token(r"npm_[A-Za-z0-9]{36}"))),
    KeyFormat("pypi-token", "PyPI", ("pypi-AgE",), re.compile(_token(r"pypi-AgE[A-Za-z0-9_-]{50,}"))),
    KeyFormat(
        "jwt",
        "JWT",
        ("eyJ",),
        re.compile(_token(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}")),
        random_looking=False,
    ),
)
PRIVATE_KEY = ("private-key", "private key")  # kind, what: the PEM blocks (not a KEY_FORMATS row)
WHAT: dict[str, str] = {PRIVATE_KEY[0]: PRIVATE_KEY[1], **{f.kind: f.what for f in KEY_FORMATS}}


_LOWER_RUN = re.compile(r"[a-z]{3,}")


def _random_looking(key: str) -> bool:
    """Letters and digits; or both cases, unless it reads as CamelCase words (at least 45% of the
    letters in lower-case runs of three or more and 30% vowels: ``AutoModelForCausalLM``, while a
    random 34-letter token looks like that once in 500)."""
    letters = sum(c.isalpha() for c in key)
    if not letters:
        return False
    if any(c.isdigit() for c in key):
        return True
    if not 0 < sum(c.isupper() for c in key) < letters:
        return False
    runs = sum(len(r) for r in _LOWER_RUN.findall(key))
    vowels = sum(c in "aeiouAEIOU" for c in key)
    return not (runs >= 0.45 * letters and vowels >= 0.3 * letters)


@dataclass(frozen=True)
class Redaction:
    """What ``redact`` made of a text: the text to index, how many lines it changed and which kinds
    of key it overwrote (kind -> keys)."""

    text: str
    lines: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


def marker(kind: str, length: int) -> str:
    """The overwrite of a ``length``-character key: ``[REDACTED:<kind>]`` padded with ``*``."""
    mark = f"[REDACTED:{kind}]"
    return mark.ljust(length, "*") if len(mark) <= length else "*" * length


def _pem_spans(text: str) -> list[tuple[int, int]]:
    """The runs of key characters inside each PEM private key block."""
    spans: list[tuple[int, int]] = []
    for begin in PEM_BEGIN.finditer(text):
        if spans and begin.start() < spans[-1][1]:
            continue
        body = _PEM_BODY.match(text, begin.end())
        closed = _PEM_END.match(text, body.end()) is not None
        runs = [m.span("key") for m in _PEM_RUN.finditer(text, begin.end(), body.end()) if m.group("key")]
        if closed and runs or sum(b - a for a, b in runs) >= PEM_MIN_UNTERMINATED:
            spans.extend(runs)
    return spans


def find_keys(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every key in ``text``, in order, none overlapping."""
    found = [(a, b, PRIVATE_KEY[0]) for a, b in _pem_spans(text)] if "PRIVATE KEY" in text else []
    for fmt in KEY_FORMATS:
        if not any(anchor in text for anchor in fmt.anchors):
            continue
        key = "key" if "key" in fmt.pattern.groupindex else 0
        for m in fmt.pattern.finditer(text):
            start, end = m.span(key)
            if fmt.standalone and text[start - 1 : start] in _GLUED:
                continue  # glued to what precedes it: part of a longer word
            if fmt.random_looking and not _random_looking(text[start:end]):
                continue
            found.append((start, end, fmt.kind))
    found.sort()
    kept: list[tuple[int, int, str]] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def redact(text: str) -> Redaction:
    """``text`` with every key found overwritten in place (see the module docstring)."""
    spans = find_keys(text)
    if not spans:
        return Redaction(text)
    parts, at, kinds, lines, line = [], 0, {}, set(), 0  # line: 0-based line number of ``at``
    for start, end, kind in spans:
        first = line + text.count("\n", at, start)
        line = first + text.count("\n", start, end)
        lines.update(range(first, line + 1))
        parts += [text[at:start], marker(kind, end - start)]
        at = end
        kinds[kind] = kinds.get(kind, 0) + 1
    parts.append(text[at:])
    return Redaction("".join(parts), len(lines), dict(sorted(kinds.items())))


def redaction_note(report: dict) -> str | None:
    """The index summary's line on redacted keys (from a walk report), or ``None`` when none was:
    ``3 lines that look like keys (private key, AWS) redacted in 2 files``."""
    redacted = report.get("redacted") or {}
    if not redacted:
        return None
    lines = sum(redacted.values())
    kinds = report.get("redacted_kinds") or {}
    whats = list(dict.fromkeys(w for k, w in WHAT.items() if k in kinds))
    files = len(redacted)
    return (
        f"{lines} line{'s' if lines != 1 else ''} that look like keys ({', '.join(whats)}) "
        f"redacted in {files} file{'s' if files != 1 else ''}"
    )
