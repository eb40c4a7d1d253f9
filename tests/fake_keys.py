"""Fake keys in every format ``secret_scan`` knows, assembled at run time: no test file holds a key,
so indexing this repository redacts nothing in its tests."""

from __future__ import annotations

import random
import string

B62 = string.ascii_letters + string.digits
UPPER36 = string.ascii_uppercase + string.digits


def fake(prefix: str, n: int, alphabet: str = B62, seed: int = 7) -> str:
    """``prefix`` + ``n`` random characters (the same on every run)."""
    rng = random.Random(f"{prefix}{n}{seed}")
    return prefix + "".join(rng.choice(alphabet) for _ in range(n))


def pem_body(lines: int = 4, width: int = 64) -> list[str]:
    """The base64 lines of a fake PEM key."""
    return [fake("", width, B62 + "+/", seed=i) for i in range(lines)]


# (kind, key): one per format of secret_scan.KEY_FORMATS (and both GitHub shapes)
KEYS = [
    ("aws-key", fake("AKIA", 16, UPPER36)),
    ("aws-key", fake("ASIA", 16, UPPER36)),
    ("github-token", fake("ghp_", 36)),
    ("github-token", fake("gho_", 36)),
    ("github-token", fake("ghs_", 36)),
    ("github-token", fake("github_pat_", 22) + "_" + fake("", 59)),
    ("gitlab-token", fake("glpat-", 20)),
    (
        "slack-token",
        "xoxb-" + fake("", 12, string.digits) + "-" + fake("", 13, string.digits) + fake("-", 24),
    ),
    ("stripe-key", fake("sk_" + "live_", 24)),
    ("stripe-key", fake("rk_" + "live_", 24)),
    ("google-api-key", fake("AIza", 35)),
    ("anthropic-key", fake("sk-ant-api03-", 93)),
    ("openai-key", fake("sk-", 48)),
    ("openai-key", fake("sk-proj-", 120)),
    ("huggingface-token", fake("hf_", 34, string.ascii_letters)),
    ("npm-token", fake("npm_", 36)),
    ("pypi-token", "pypi-" + "AgEIcHlwaS5vcmc" + fake("", 70)),
    ("jwt", "eyJ" + fake("", 30) + ".eyJ" + fake("", 40) + "." + fake("", 43)),
]
