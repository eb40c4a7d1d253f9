"""`codeground ollama serve`: a stand-in `ollama` executable on PATH runs the fake server on $OLLAMA_HOST."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeground.app.cli import cli
from codeground.app.errors import CodegroundError
from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.serve.ollama_launcher import answers, installed_models, ollama_models, serve, stop
from tests.conftest import PROJECT_ROOT, closed_port

CHAT_MODELS = ["qwen2.5-coder:1.5b", "qwen2.5-coder:7b"]  # rewriter, answerer (in YAML order)
EMBED_PIPELINE_MODELS = ["qwen2.5-coder:1.5b", "nomic-embed-text", "qwen2.5-coder:7b"]

# `ollama serve` stand-in: logs the settings it was started with, then serves the fake on $OLLAMA_HOST.
FAKE_OLLAMA_BIN = """#!{python}
import os, signal, sys, time
sys.path.insert(0, {root!r})
from tests.fake_ollama import FakeOllama

if sys.argv[1:] != ["serve"]:
    sys.exit("usage: ollama serve")
for key in ("OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION"):
    print(f"{{key}}={{os.environ.get(key)}}", flush=True)
mode = os.environ.get("FAKE_OLLAMA_MODE", "serve")
if mode == "crash":
    sys.exit("Error: listen tcp: address already in use")
if mode == "silent":
    time.sleep(3600)
port = int(os.environ["OLLAMA_HOST"].rsplit(":", 1)[1])
FakeOllama(models=[], pullable={pullable!r}, port=port).start()
print(f"Listening on 127.0.0.1:{{port}}", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(1)
"""


@pytest.fixture
def fake_bin(tmp_path, monkeypatch) -> Path:
    """A PATH holding only a stand-in `ollama`, and $OLLAMA_HOST on a free port."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "ollama"
    pullable = [*CHAT_MODELS, "nomic-embed-text"]
    exe.write_text(FAKE_OLLAMA_BIN.format(python=sys.executable, root=str(PROJECT_ROOT), pullable=pullable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    for key in ("OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "FAKE_OLLAMA_MODE"):
        monkeypatch.delenv(key, raising=False)
    return exe


@pytest.fixture
def started():
    """Pids of servers a test started, stopped afterwards."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        stop(pid)


def _wait_gone(url: str) -> None:
    deadline = time.monotonic() + 5
    while answers(url) and time.monotonic() < deadline:
        time.sleep(0.1)


def test_models_are_the_ones_the_yamls_name_for_ollama_components():
    assert ollama_models([PIPELINES_DIR / "query.yaml"]) == CHAT_MODELS
    assert ollama_models([PIPELINES_DIR / "query_ollama_embed.yaml"]) == EMBED_PIPELINE_MODELS
    assert ollama_models([PIPELINES_DIR / "index_ollama.yaml"]) == ["nomic-embed-text"]
    assert ollama_models([PIPELINES_DIR / "index.yaml"]) == []


def test_starts_ollama_serve_with_q8_kv_cache_and_flash_attention_then_pulls_missing_models(
    fake_bin, tmp_path, started
):
    url = os.environ["OLLAMA_HOST"]
    log = tmp_path / "logs" / "ollama.log"
    events: list[str] = []
    report = serve(url, CHAT_MODELS, log_path=log, wait_s=20, on_event=events.append)
    started.append(report.pid)
    assert report.started and report.pid and report.log_path == log
    assert report.pulled == CHAT_MODELS and report.present == []
    assert set(CHAT_MODELS) <= installed_models(url)
    text = log.read_text()
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in text and "OLLAMA_FLASH_ATTENTION=1" in text
    assert "Listening on" in text
    assert any(str(log) in e for e in events) and any("pulling qwen2.5-coder:7b" in e for e in events)

    # a second run finds the server answering: nothing started, nothing pulled
    again = serve(url, CHAT_MODELS, log_path=log, wait_s=20)
    assert not again.started and again.pulled == [] and again.present == CHAT_MODELS
    stop(report.pid)
    _wait_gone(url)
    assert not answers(url)


def test_user_settings_win_over_the_defaults(fake_bin, tmp_path, started, monkeypatch):
    monkeypatch.setenv("OLLAMA_KV_CACHE_TYPE", "f16")
    report = serve(os.environ["OLLAMA_HOST"], [], log_path=tmp_path / "o.log", wait_s=20)
    started.append(report.pid)
    text = (tmp_path / "o.log").read_text()
    assert "OLLAMA_KV_CACHE_TYPE=f16" in text and "OLLAMA_FLASH_ATTENTION=1" in text


def test_a_server_already_answering_is_not_started_again_and_only_missing_models_are_pulled(
    fake_bin, fake_ollama, monkeypatch, tmp_path
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models={"qwen2.5-coder:7b"}, pullable=set(CHAT_MODELS))
    report = serve(fake_ollama.url, CHAT_MODELS, log_path=tmp_path / "o.log", wait_s=5)
    assert not report.started and not (tmp_path / "o.log").exists()
    assert report.present == ["qwen2.5-coder:7b"] and report.pulled == ["qwen2.5-coder:1.5b"]
    assert [r.body["model"] for r in fake_ollama.requests_to("/api/pull")] == ["qwen2.5-coder:1.5b"]


def test_ollama_not_installed_is_one_line_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    result = CliRunner().invoke(cli, ["ollama", "serve", "--log", str(tmp_path / "o.log")])
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert "Ollama is not installed" in lines[0] and "https://ollama.com/download" in lines[0]


def test_server_that_exits_at_start_is_one_line_naming_the_log(fake_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_OLLAMA_MODE", "crash")
    log = tmp_path / "o.log"
    with pytest.raises(CodegroundError, match=rf"exited with status 1 .*see {log}"):
        serve(os.environ["OLLAMA_HOST"], CHAT_MODELS, log_path=log, wait_s=20)
    assert "address already in use" in log.read_text()


def test_server_that_never_answers_times_out_naming_the_log_and_is_stopped(fake_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_OLLAMA_MODE", "silent")
    log = tmp_path / "o.log"
    t0 = time.monotonic()
    with pytest.raises(CodegroundError, match=rf"did not answer .* within 2 s \(stopped it\); see {log}"):
        serve(os.environ["OLLAMA_HOST"], CHAT_MODELS, log_path=log, wait_s=2)
    assert time.monotonic() - t0 < 6


def test_a_model_the_registry_lacks_is_one_line_naming_it(fake_ollama, monkeypatch, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=set(), pullable=set())
    bad = tmp_path / "query_typo.yaml"
    bad.write_text((PIPELINES_DIR / "query.yaml").read_text().replace("qwen2.5-coder:7b", "qwen9-coder:7b"))
    result = CliRunner().invoke(cli, ["ollama", "serve", "--pipeline", str(bad)])
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 1 and len(errors) == 1 and "Traceback" not in result.output
    assert "cannot pull qwen2.5-coder:1.5b" in errors[0] and "file does not exist" in errors[0]


def test_cli_pulls_the_models_of_the_given_pipelines_from_a_running_server(fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=set(), pullable=None)
    result = CliRunner().invoke(
        cli, ["ollama", "serve", "--pipeline", str(PIPELINES_DIR / "query_ollama_embed.yaml")]
    )
    assert result.exit_code == 0, result.output
    assert "already answers" in result.output and "ready at" in result.output
    pulled = [r.body["model"] for r in fake_ollama.requests_to("/api/pull")]
    assert pulled == EMBED_PIPELINE_MODELS


def test_a_failed_pull_after_starting_says_where_the_started_server_runs(fake_bin, tmp_path, started):
    import re

    log = tmp_path / "o.log"
    with pytest.raises(CodegroundError) as err:
        serve(os.environ["OLLAMA_HOST"], ["qwen9-coder:7b"], log_path=log, wait_s=20)
    message = str(err.value)
    pid = re.search(r"Ollama keeps running: pid (\d+), log ", message)
    assert pid and str(log) in message and message.startswith("cannot pull qwen9-coder:7b:")
    started.append(int(pid.group(1)))
    assert answers(os.environ["OLLAMA_HOST"])
