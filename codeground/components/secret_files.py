"""Which files are secret stores by their name: one table, matched before anything is read.

Rules:
- ``SECRET_FILES`` is the table: ``(pattern, what)``, each pattern a glob naming files people keep
  secrets in by convention (dotenv files, private keys and keystores, ``secret(s).*``, credential
  files, the rc files of ``netrc``/npm/PyPI/PostgreSQL/Docker/git, Terraform variables and state,
  kubeconfigs, ...). A pattern without ``/`` is matched on the file name, one with ``/`` on the
  end of the path (``.aws/credentials`` matches ``deploy/.aws/credentials``; ``*`` crosses ``/``).
- Matching ignores case (``Secrets.TOML`` and ``ID_RSA`` are refused on every file system: on
  macOS and Windows they *are* ``secrets.toml`` and ``id_rsa``).
- A file named like source code or documentation that codeground parses (``CODE_SUFFIXES``:
  Python, notebooks, Markdown, reST, the tree-sitter languages) is not a secret by a *wildcard*
  row: ``secrets.py`` is Django's settings module or Python's own ``secrets`` module, ``secret.go``,
  ``credentials.ts`` and ``docs/secrets.md`` are code and prose *about* secrets. A key pasted in
  one is still found and redacted by ``secret_scan`` (which covers every file). Two exceptions:
  shell scripts and C/C++ headers (``SETTINGS_SUFFIXES``) are where people keep secrets as
  ``export``/``#define`` lines, so ``secrets.sh`` and ``secrets.h`` are refused; and a row that
  names one file exactly (``wp-config.php``, ``arduino_secrets.h``) refuses it whatever its
  suffix. Other suffixes are not exempt: ``secrets.ini`` is refused.
- Not in the table on purpose: ``.env.example``-like names are still dotenv files (refused);
  ``*.crt``/``*.cer``/``*.asc`` (certificates, public keys and signatures are public; an armoured
  private key is caught by its ``BEGIN ... PRIVATE KEY`` line), ``auth.json``/``config.json``
  (too common for fixtures; only ``.docker/config.json`` is named), ``.aws/config`` (no keys).

Usage:
```python
from codeground.components.secret_files import is_secret_file, secret_rule

assert is_secret_file(".streamlit/secrets.toml") and is_secret_file("keys/ID_RSA")
assert secret_rule("deploy/terraform.tfvars") == ("*.tfvars", "Terraform variables")
assert not is_secret_file("app/secrets.py") and not is_secret_file("src/secret_manager.py")
```
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import cache

from codeground.components.languages import MIME_BY_SUFFIX as LANGUAGE_MIMES

# (pattern, what people keep in it). Lower case; matched case-insensitively.
SECRET_FILES: tuple[tuple[str, str], ...] = (
    (".env", "dotenv file"),
    (".env.*", "dotenv file"),
    ("*.env", "dotenv file"),
    (".envrc", "direnv exports"),
    ("secret", "secret store"),
    ("secrets", "secret store"),
    ("secret.*", "secret store"),
    ("secrets.*", "secret store"),
    (".secret", "secret store"),
    (".secrets", "secret store"),
    (".secret.*", "secret store"),
    (".secrets.*", "secret store"),
    ("*.secret", "secret store"),
    ("*.secrets", "secret store"),
    ("arduino_secrets.h", "Arduino sketch secrets"),
    ("id_rsa*", "SSH private key"),
    ("id_dsa*", "SSH private key"),
    ("id_ecdsa*", "SSH private key"),
    ("id_ed25519*", "SSH private key"),
    (".ssh/*", "SSH keys and config"),
    ("*.pem", "PEM key or certificate"),
    ("*.key", "private key"),
    ("*.p8", "PKCS#8 private key"),
    ("*.p12", "PKCS#12 keystore"),
    ("*.pfx", "PKCS#12 keystore"),
    ("*.jks", "Java keystore"),
    ("*.keystore", "keystore"),
    ("*.ppk", "PuTTY private key"),
    ("*.kdbx", "KeePass database"),
    ("*.kdb", "KeePass database"),
    ("secring.*", "GnuPG secret keyring"),
    (".gnupg/*", "GnuPG keyring"),
    ("credentials", "credentials file"),
    ("credentials.*", "credentials file"),
    (".credentials", "credentials file"),
    (".credentials.*", "credentials file"),
    ("*-credentials.json", "credentials file"),
    ("*_credentials.json", "credentials file"),
    ("client_secret*.json", "OAuth client secret"),
    ("token.json", "OAuth tokens"),
    ("service-account*.json", "service-account key"),
    ("service_account*.json", "service-account key"),
    ("serviceaccount*.json", "service-account key"),
    (".netrc", "login passwords"),
    ("_netrc", "login passwords"),
    (".npmrc", "npm token"),
    (".pypirc", "PyPI token"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL password"),
    (".htpasswd", "password hashes"),
    (".git-credentials", "git passwords"),
    (".dockercfg", "registry logins"),
    (".docker/config.json", "registry logins"),
    (".vault-token", "Vault token"),
    (".boto", "cloud keys"),
    (".s3cfg", "S3 keys"),
    (".terraformrc", "Terraform token"),
    ("terraform.rc", "Terraform token"),
    ("*.tfvars", "Terraform variables"),
    ("*.tfvars.json", "Terraform variables"),
    ("*.tfstate", "Terraform state"),
    ("*.tfstate.*", "Terraform state"),
    ("kubeconfig", "Kubernetes credentials"),
    ("kubeconfig.*", "Kubernetes credentials"),
    ("*.kubeconfig", "Kubernetes credentials"),
    (".kube/config", "Kubernetes credentials"),
    ("wp-config.php", "WordPress database password"),
)

# Parsed suffixes that hold settings as often as code: ``export KEY=...``, ``#define KEY "..."``.
SETTINGS_SUFFIXES: frozenset[str] = frozenset({".sh", ".bash", ".h", ".hh", ".hpp", ".hxx", ".h++"})

# Suffixes of the code and prose codeground parses: not a secret file by a wildcard row (see the rules).
CODE_SUFFIXES: frozenset[str] = (
    frozenset({*LANGUAGE_MIMES, ".py", ".pyi", ".ipynb", ".md", ".markdown", ".rst"}) - SETTINGS_SUFFIXES
)

# Rows that name one file exactly: they refuse it even with a code suffix.
_EXACT_NAMES: frozenset[str] = frozenset(
    p for p, _ in SECRET_FILES if "/" not in p and not any(c in p for c in "*?[")
)


@cache
def _union(paths: bool) -> re.Pattern[str]:
    """One compiled pattern for the name rules (``paths=False``) or the path-tail rules."""
    globs = [p for p, _ in SECRET_FILES if ("/" in p) == paths]
    if paths:
        globs = [g for p in globs for g in (p, "*/" + p)]
    return re.compile("|".join(fnmatch.translate(g) for g in globs))


def is_secret_file(path: str) -> bool:
    """Whether the file at ``path`` (POSIX, relative to the repository root) is a secret store."""
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    if name in _EXACT_NAMES:
        return True
    if os.path.splitext(name)[1] in CODE_SUFFIXES:
        return False
    return _union(False).match(name) is not None or ("/" in low and _union(True).match(low) is not None)


def secret_rule(path: str) -> tuple[str, str] | None:
    """The first table row that refuses ``path``, or ``None`` (for reports and tests; slower)."""
    if not is_secret_file(path):
        return None
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    for pattern, what in SECRET_FILES:
        if "/" in pattern:
            if fnmatch.fnmatchcase(low, pattern) or fnmatch.fnmatchcase(low, "*/" + pattern):
                return pattern, what
        elif fnmatch.fnmatchcase(name, pattern):
            return pattern, what
    return None  # pragma: no cover - is_secret_file and the table agree
