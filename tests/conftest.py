"""Shared test setup: offline, loopback-only networking, fixture repositories."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Answers come from Ollama's protocol (a fake on 127.0.0.1) unless a test chooses otherwise: the suite
# never fetches or loads the embedded model by accident (the choice's tests set `auto` themselves);
# pip, which fetches that model, reaches no index from a test.
os.environ.setdefault("CODEGROUND_ANSWERS", "ollama")
os.environ.setdefault("PIP_NO_INDEX", "1")
# The suite measures the OpenVINO exports for `precision: auto` itself, busy as the machine is: that
# choice is the suite's, never this machine's recorded one (subprocesses inherit this). The folder is
# made only when none is given (`just test-avx2` gives its own) and removed when the run ends.
if "CODEGROUND_PRECISION_DIR" not in os.environ:
    os.environ["CODEGROUND_PRECISION_DIR"] = tempfile.mkdtemp(prefix="codeground-precision-")
    atexit.register(
        lambda folder=os.environ["CODEGROUND_PRECISION_DIR"], pid=os.getpid(): (
            os.getpid() == pid and shutil.rmtree(folder, ignore_errors=True)
        )
    )
# `codeground index` would start the re-vote's background fill after each run; the tests that need
# it start it themselves (subprocesses inherit this)
os.environ.setdefault("CODEGROUND_FILL", "0")

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE_REPO = FIXTURES / "sample_repo"
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class NetworkBlocked(RuntimeError):
    pass


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    """Fail any connection that leaves this machine: tests may only talk to 127.0.0.1."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(address):
        if not _is_loopback(address):
            raise NetworkBlocked(f"test tried to reach {address!r}; only loopback is allowed")

    def connect(self, address):
        guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


PLANTED_SECRETS = ("sk-live-FAKE", "FAKEKEYDATA")
FAKE_PEM = "-----BEGIN RSA PRIVATE KEY-----\nFAKEKEYDATA\n-----END RSA PRIVATE KEY-----\n"


def search_reporting_modules(modules: dict[str, str]) -> str:
    """A script that runs `codeground search` in-process on the index named by its first argument
    and, as the process exits (``os._exit``), prints ``<label> loaded: True|False`` for each
    ``label: module`` of ``modules``: which libraries a search process imported."""
    lines = "".join(
        f"    print({label + ' loaded:'!r}, {module!r} in sys.modules, flush=True)\n"
        for label, module in modules.items()
    )
    return (
        "import os, sys\n"
        "from codeground.app.cli import main\n"
        "question = 'How does Trainer.fit run epochs?'\n"
        "sys.argv = ['codeground', 'search', question, '--index-dir', sys.argv[1]]\n"
        "real_exit = os._exit\n"
        "def report(code):\n"
        f"{lines}"
        "    real_exit(code)\n"
        "os._exit = report\n"
        "main()\n"
    )


def hub_cache_with(model_dir: Path, cache: Path, repo_id: str) -> Path:
    """Put ``model_dir``'s files in ``cache`` as the Hugging Face hub cache holds a downloaded model
    (``models--org--name/{blobs,refs/main,snapshots/<commit>}``, snapshot files linked to blobs);
    returns the snapshot folder. Stands in for a download, which no test may make."""
    import hashlib
    import os

    root = cache / ("models--" + repo_id.replace("/", "--"))
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    snapshot = root / "snapshots" / commit
    for folder in (root / "refs", root / "blobs", snapshot):
        folder.mkdir(parents=True, exist_ok=True)
    (root / "refs" / "main").write_text(commit)
    for path in sorted(model_dir.iterdir()):
        if path.is_file():
            blob = root / "blobs" / hashlib.sha256(path.read_bytes()).hexdigest()
            shutil.copy2(path, blob)
            (snapshot / path.name).unlink(missing_ok=True)
            (snapshot / path.name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


def make_sample_repo(repo: Path) -> Path:
    """Copy tests/fixtures/sample_repo to ``repo`` and add files that must never be indexed.

    They are made here, not committed: planted fake secrets, a .gitignore'd directory, binaries.
    """
    shutil.copytree(SAMPLE_REPO, repo)
    (repo / ".env").write_text("API_KEY=sk-live-FAKE-0123456789\n")
    (repo / "server.pem").write_text(FAKE_PEM)
    (repo / "poetry.lock").write_text("# lock\n")
    (repo / ".gitignore").write_text("ignored_dir/\n*.log\n")
    (repo / "ignored_dir").mkdir()
    (repo / "ignored_dir" / "hidden.py").write_text("def hidden_function(x):\n    return x\n")
    (repo / "run.log").write_text("log line\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (repo / "pkg" / "fake.py").write_bytes(b"\x00\x01\x02binary with a .py name")
    (repo / "latin1.txt").write_bytes("caf\xe9 latin-1 text\n".encode("latin-1"))
    return repo


@pytest.fixture
def sample_repo(tmp_path) -> Path:
    """A fresh copy of the sample repository with its never-indexed extras."""
    return make_sample_repo(tmp_path / "repo")


from tests.fake_ollama import fake_ollama  # noqa: E402,F401 - the fake Ollama server fixture


@pytest.fixture(scope="module")
def indexed_sample(tmp_path_factory) -> tuple[Path, Path]:
    """``(repo, index_dir)``: the sample repository indexed once per test module (real model, real stores)."""
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    base = tmp_path_factory.mktemp("indexed")
    repo = make_sample_repo(base / "repo")
    run_index(repo, base / "idx", DEFAULT_INDEX_PIPELINE)
    return repo, base / "idx"


def closed_port() -> int:
    """A loopback port nothing listens on (an LLM server that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def codeground_components_allowed():
    """Let Haystack deserialize codeground's own components (its public, process-wide allowlist, as
    ``codeground.components.inner`` does); a context so call sites read as a scope."""
    import contextlib

    from haystack.core.serialization import allow_deserialization_module

    from codeground.components.inner import ALLOWED_MODULES

    for pattern in ALLOWED_MODULES:
        allow_deserialization_module(pattern)
    return contextlib.nullcontext()


@contextlib.contextmanager
def started_while_locked(target: Path, args: list[str]):
    """Hold ``target``'s build lock (``model_cache.folder_lock``), as another run making that model
    would, start ``args`` in a new process and yield ``(proc, stderr_lines, result)`` once it says it
    is waiting (a ``note: waiting while`` line); the lock is released as the block ends, and then
    ``result`` gets the process's ``stdout`` and ``returncode``."""
    from codeground.components.embedders.model_cache import folder_lock

    lines: list[str] = []
    result: dict = {}
    with folder_lock(target, fcntl.LOCK_EX) as held:
        assert held
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT
        )
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 120
        while not any(line.startswith("note: waiting while") for line in lines):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.05)
        yield proc, lines, result
    result["stdout"] = proc.stdout.read()
    result["returncode"] = proc.wait(timeout=300)
    reader.join(10)
