"""Start a local Ollama server and pull the models the pipelines name (``codeground ollama serve``).

Rules:
- A server already answering ``GET /`` at ``$OLLAMA_HOST`` is used as it is: no second one is started.
- Otherwise ``ollama serve`` is started when the ``ollama`` binary is on ``PATH`` (no binary: one line
  with the install hint), in its own session so it outlives this command, with
  ``OLLAMA_KV_CACHE_TYPE=q8_0`` and ``OLLAMA_FLASH_ATTENTION=1`` unless the user set them, its output
  appended to a log file. It must answer ``GET /`` within ``wait_s`` seconds; if it exits or times out
  the error is one line naming the log, and a server this command started is stopped again.
- The models the given pipeline YAMLs name for an Ollama component (the chat model, the rewriter's
  model, ``nomic-embed-text`` for the Ollama embedding YAMLs) are pulled through ``/api/pull`` when
  ``/api/tags`` does not list them; a failed pull is one line naming the model.
- Only the Ollama HTTP API on the configured URL is used, with the standard library (no proxies).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.components.embedders.model_cache import cache_base

DEFAULT_ENV = {"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_FLASH_ATTENTION": "1"}
INSTALL_HINT = (
    "install it from https://ollama.com/download (Linux: `curl -fsSL https://ollama.com/install.sh | sh`)"
)
DEFAULT_LOG = cache_base() / "ollama.log"

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never via a proxy


@dataclass
class LaunchReport:
    """What ``serve`` did: the URL, whether it started a server (its pid and log), models pulled/present."""

    url: str
    started: bool = False
    pid: int | None = None
    log_path: Path | None = None
    version: str | None = None
    present: list[str] = field(default_factory=list)
    pulled: list[str] = field(default_factory=list)


def normalize_model(name: str) -> str:
    """Ollama's own resolution: a name without a tag means ``:latest``."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def ollama_models(pipeline_paths: Iterable[str | Path]) -> list[str]:
    """The models the YAMLs name for Ollama components (chat generators, embedders), each once, in order."""
    from codeground.app.pipeline.loader import _specs, read_pipeline_dict

    found: list[str] = []
    for path in pipeline_paths:
        for spec in _specs(read_pipeline_dict(path)["components"]):
            model = (spec.get("init_parameters") or {}).get("model")
            if ".ollama." in str(spec.get("type", "")) and isinstance(model, str) and model not in found:
                found.append(model)
    return found


def _request(url: str, *, body: Any = None, timeout: float = 5.0):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    if data:
        req.add_header("Content-Type", "application/json")
    return _OPENER.open(req, timeout=timeout)


def _server_error(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read() or b"{}").get("error") or exc.reason)
    except ValueError:
        return str(exc.reason)


def answers(url: str, timeout: float = 1.0) -> bool:
    """Whether an Ollama server answers ``GET /`` at ``url``."""
    try:
        with _request(f"{url}/", timeout=timeout) as reply:
            return reply.status == 200
    except (OSError, urllib.error.URLError):
        return False


def server_version(url: str, timeout: float = 2.0) -> str | None:
    """The server's version (``/api/version``), or ``None`` when it does not answer."""
    try:
        with _request(f"{url}/api/version", timeout=timeout) as reply:
            return str(json.loads(reply.read()).get("version") or "") or None
    except (OSError, ValueError, urllib.error.URLError):
        return None


def installed_models(url: str, timeout: float = 5.0) -> set[str]:
    """The models the server has (``/api/tags``), normalized to ``name:tag``."""
    try:
        with _request(f"{url}/api/tags", timeout=timeout) as reply:
            models = json.loads(reply.read()).get("models") or []
    except urllib.error.HTTPError as exc:
        raise CodegroundError(f"Ollama at {url} cannot list its models: {_server_error(exc)}") from exc
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise CodegroundError(f"Ollama at {url} cannot list its models: {exc}") from exc
    return {normalize_model(str(m.get("model") or m.get("name"))) for m in models}


def _progress_lines(reply) -> Iterator[dict[str, Any]]:
    for raw in reply:
        line = raw.strip()
        if line:
            yield json.loads(line)


def pull(url: str, model: str, on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Pull ``model`` through ``/api/pull``, progress to ``on_progress``; a one-line error on failure."""
    try:
        with _request(f"{url}/api/pull", body={"model": model, "stream": True}, timeout=600) as reply:
            last: dict[str, Any] = {}
            for event in _progress_lines(reply):
                if "error" in event:
                    raise CodegroundError(f"cannot pull {model}: {event['error']}")
                last = event
                if on_progress:
                    on_progress(event)
    except urllib.error.HTTPError as exc:
        raise CodegroundError(f"cannot pull {model}: {_server_error(exc)}") from exc
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise CodegroundError(f"cannot pull {model}: {exc}") from exc
    if last.get("status") != "success":
        raise CodegroundError(f"cannot pull {model}: the server stopped before reporting success")


def server_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for ``ollama serve``: the user's, plus ``DEFAULT_ENV`` for what they did not set."""
    env = dict(os.environ if environ is None else environ)
    for key, value in DEFAULT_ENV.items():
        if not env.get(key):
            env[key] = value
    return env


def stop(pid: int) -> None:
    """Stop a server this module started (its whole process group)."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def start_server(url: str, *, log_path: Path = DEFAULT_LOG, wait_s: float = 30.0) -> subprocess.Popen:
    """Start ``ollama serve`` in the background and wait until ``GET /`` answers at ``url``."""
    binary = shutil.which("ollama")
    if binary is None:
        raise CodegroundError(f"Ollama is not installed (no `ollama` on PATH): {INSTALL_HINT}")
    log_path = Path(log_path).expanduser()
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - handed to the child process
    except OSError as exc:
        raise CodegroundError(f"cannot write the Ollama log {log_path}: {exc.strerror or exc}") from exc
    with log:
        env = server_env()
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        settings = " ".join(f"{k}={env[k]}" for k in DEFAULT_ENV)
        log.write(f"--- codeground ollama serve {stamp}: {binary} serve ({settings}) ---\n")
        log.flush()
        proc = subprocess.Popen(
            [binary, "serve"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # keeps serving after this command exits; its own process group
        )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if answers(url, timeout=0.5):
            return proc
        status = proc.poll()
        if status is not None:
            raise CodegroundError(
                f"`ollama serve` exited with status {status} before answering at {url}; see {log_path}"
            )
        time.sleep(0.2)
    stop(proc.pid)
    raise CodegroundError(f"Ollama did not answer at {url} within {wait_s:g} s (stopped it); see {log_path}")


def serve(
    url: str,
    models: Iterable[str],
    *,
    log_path: Path = DEFAULT_LOG,
    wait_s: float = 30.0,
    on_event: Callable[[str], None] | None = None,
) -> LaunchReport:
    """Make sure an Ollama server answers at ``url`` (starting one if needed) and has ``models``."""
    say = on_event or (lambda _line: None)
    report = LaunchReport(url=url)
    if answers(url):
        say(f"Ollama already answers at {url}; not starting another")
    else:
        proc = start_server(url, log_path=log_path, wait_s=wait_s)
        report.started, report.pid, report.log_path = True, proc.pid, Path(log_path).expanduser()
        say(f"started `ollama serve` (pid {proc.pid}) at {url}; log: {report.log_path}")
    report.version = server_version(url)
    have = installed_models(url)
    for model in models:
        if normalize_model(model) in have:
            report.present.append(model)
            continue
        say(f"pulling {model} …")
        shown: set[str] = set()

        def progress(event: dict[str, Any], model: str = model, shown: set[str] = shown) -> None:
            status = str(event.get("status", ""))
            total, done = event.get("total"), event.get("completed")
            if total and done == total and status not in shown:
                shown.add(status)
                say(f"  {model}: {status} ({total / 1e6:,.0f} MB)")
            elif not total and status not in shown:
                shown.add(status)
                say(f"  {model}: {status}")

        try:
            pull(url, model, progress)
        except CodegroundError as exc:
            if report.started:  # say where the server this command started lives on
                where = f"pid {report.pid}, log {report.log_path}"
                raise CodegroundError(f"{exc} (Ollama keeps running: {where})") from exc
            raise
        report.pulled.append(model)
    return report
