"""Tests for components.secret_files through the walker: every name people keep secrets in is refused
as ``secret`` (whatever its case, wherever it sits, whatever ignore file re-includes it), and the
code and prose named like them are still indexed."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from codeground.components.secret_files import SECRET_FILES, is_secret_file, secret_rule
from codeground.components.walker import RepositoryWalker

# every file name here is a secret store by convention: refused by name
SECRET_NAMES = [
    ".env",
    ".env.local",
    ".env.production",
    ".env.example",
    "prod.env",
    ".envrc",
    "secret",
    "secrets",
    "secret.yaml",
    "secret.txt",
    "secrets.toml",
    ".streamlit/secrets.toml",
    "secrets.ini",
    "secrets.txt",
    "secrets.json",
    "secrets.yml",
    "secrets.sh",
    "secrets.h",
    "secrets.tfvars",
    ".secret",
    ".secrets",
    ".secrets.toml",
    ".secret.json",
    "app.secret",
    "prod.secrets",
    "arduino_secrets.h",
    "id_rsa",
    "id_rsa.pub",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ed25519-cert.pub",
    ".ssh/config",
    ".ssh/authorized_keys",
    "server.pem",
    "tls.key",
    "master.key",
    "AuthKey_ABC123.p8",
    "cert.p12",
    "cert.pfx",
    "store.jks",
    "release.keystore",
    "putty.ppk",
    "vault.kdbx",
    "old.kdb",
    "secring.gpg",
    ".gnupg/pubring.kbx",
    "credentials",
    ".aws/credentials",
    "credentials.json",
    "credentials.yml.enc",
    "credentials.toml",
    ".credentials",
    ".credentials.json",
    "gcp-credentials.json",
    "application_default_credentials.json",
    "client_secret.json",
    "client_secret_1234-abc.apps.googleusercontent.com.json",
    "token.json",
    "service-account.json",
    "service-account-key.json",
    "service_account.json",
    "serviceAccountKey.json",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".htpasswd",
    ".git-credentials",
    ".dockercfg",
    ".docker/config.json",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".terraformrc",
    "terraform.rc",
    "terraform.tfvars",
    "prod.auto.tfvars",
    "vars.tfvars.json",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    "kubeconfig",
    "kubeconfig.yaml",
    "prod.kubeconfig",
    ".kube/config",
    "wp-config.php",
]
# named like the above, but code, prose or ordinary config: still indexed
NEAR_MISSES = [
    "secrets.py",  # Django settings, Python's own ``secrets`` module
    "secret.go",
    "secrets.ts",
    "Secrets.java",
    "secrets.rs",
    "credentials.py",
    "credentials.js",
    "id_rsa_parser.py",
    "docs/secrets.md",
    "docs/credentials.rst",
    "kubeconfig.md",
    "secret_manager.py",
    "secrets_test.go",
    "secretary.txt",
    "my_secrets_loader.yaml",
    "keys.py",
    "key.txt",
    "monkey.txt",
    "token.py",
    "tokenizer.json",
    "token_config.json",
    "environment.yml",
    "env.py",
    "envs.toml",
    ".environment.toml",
    "netrc.txt",
    "docker/config.json",
    "config.json",
    "auth.json",
    "kube/config.yaml",
    "main.tf",
    "variables.tf",
    "tfvars.txt",
    "public.crt",
    "passwords.md",
    "credential_helpers.sh",
    "service.json",
]
# suffixes the walker would otherwise refuse as unsupported: accepted here, so the secret rule decides
EVERY_SUFFIX = (
    ".json .toml .yaml .yml .txt .ini .sh .h .tf .tfvars .crt .php .pub .key .pem .p8 .p12 .pfx .jks"
    " .keystore .ppk .kdbx .kdb .gpg .kbx .enc .backup .local .production .example .env"
    " .secret .secrets .cnf .rc"
).split()


def walk(root: Path, **kwargs) -> tuple[set[str], dict[str, str]]:
    result = RepositoryWalker(text_extensions=EVERY_SUFFIX, **kwargs).run(root=str(root))
    return {s.meta["file_path"] for s in result["files"]}, dict(result["report"]["skipped_files"])


def plant(root: Path, rel: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("value = 1\n")


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_file_named_as_a_secret_store_is_refused_as_secret_even_when_re_included(tmp_path, name):
    for rel in (name, f"deploy/{name}"):
        plant(tmp_path, rel)
    (tmp_path / ".gitignore").write_text(f"!{name}\n!**/{name}\n")
    files, skipped = walk(tmp_path, ignore=[f"!{name}", f"!deploy/{name}"])
    assert files == set()
    assert {p: r for p, r in skipped.items() if p != ".gitignore"} == {
        name: "secret",
        f"deploy/{name}": "secret",
    }


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_are_matched_whatever_their_case(name):
    for variant in (name.upper(), name.title(), name.swapcase()):
        assert is_secret_file(variant), variant
        assert is_secret_file(f"a/b/{variant}"), variant


@pytest.mark.parametrize("name", NEAR_MISSES)
def test_a_near_miss_name_is_still_indexed(tmp_path, name):
    plant(tmp_path, name)
    files, skipped = walk(tmp_path)
    assert files == {name}, skipped
    assert secret_rule(name) is None


def test_every_row_of_the_table_is_exercised_by_a_name_here():
    def rows_of(name: str) -> set[str]:
        low, base = name.lower(), name.lower().rsplit("/", 1)[-1]
        return {
            p
            for p, _ in SECRET_FILES
            if ("/" in p and (fnmatch.fnmatchcase(low, p) or fnmatch.fnmatchcase(low, "*/" + p)))
            or ("/" not in p and fnmatch.fnmatchcase(base, p))
        }

    covered = set().union(*(rows_of(n) for n in SECRET_NAMES))
    assert covered == {p for p, _ in SECRET_FILES}
    assert len({p for p, _ in SECRET_FILES}) == len(SECRET_FILES)  # no row twice


def test_the_rule_that_refused_a_file_is_named():
    assert secret_rule(".streamlit/secrets.toml") == ("secrets.*", "secret store")
    assert secret_rule("home/.aws/credentials") == ("credentials", "credentials file")
    assert secret_rule("x/.docker/config.json") == (".docker/config.json", "registry logins")
    assert secret_rule("src/secrets.py") is None
