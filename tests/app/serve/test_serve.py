"""`codeground serve` started as a process on loopback: the `openai` client streams an answer (fake
Ollama behind it), `/ask/run` and `/search/run` answer JSON, no deploy route exists, a wrong token
gets 401; what outside clients found: bodies are capped, one client's request does not hold
another's, a bad ``k`` is a one-line 422, and the OpenAI routes follow OpenAI's API (``[DONE]``,
usage, only chat models listed, HTTP statuses). The OpenAI handlers' rules one by one:
tests/app/serve/test_openai_api.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import closed_port

CODEGROUND = str(Path(sys.executable).parent / "codeground")
TOKEN = "test-token-0123"


@pytest.fixture(scope="module")
def server(indexed_sample, tmp_path_factory):
    from tests.fake_ollama import FakeOllama

    fake = FakeOllama()
    fake.start()
    port = closed_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "OLLAMA_HOST": fake.url, "CODEGROUND_API_TOKEN": TOKEN}
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [CODEGROUND, "serve", "--index-dir", str(indexed_sample[1]), "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{base}/status", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"codeground serve did not start: {log.read_text()[-2000:]}")
        time.sleep(0.3)
    try:
        yield base, fake, proc, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        fake.stop()


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def test_the_openai_client_streams_a_cited_answer_and_lists_the_pipeline(server):
    from openai import OpenAI

    base, fake, *_ = server
    fake.configure(reply="`Trainer.fit(data)` trains the model. `Trainer.fit_fast` is faster.")
    client = OpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0)
    assert "ask" in {m.id for m in client.models.list().data}
    stream = client.chat.completions.create(
        model="ask", messages=[{"role": "user", "content": "How do I fit a Trainer?"}], stream=True
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    text = "".join(pieces)
    assert len([p for p in pieces if p]) > 2  # streamed, not one block
    assert text.startswith("`Trainer.fit(data)` trains the model.")
    assert "\n\nSources:\n- pkg/trainer.py:" in text
    assert "codeground notices:" in text and "not found in this repository: Trainer.fit_fast" in text


def test_ask_and_search_answer_json_with_the_same_fields_as_mcp(server):
    base, fake, *_ = server
    fake.configure(reply="Use `Trainer.fit(data)`.")
    ask = httpx.post(
        f"{base}/ask/run", json={"question": "How do I fit a Trainer?"}, headers=_auth(), timeout=60
    )
    assert ask.status_code == 200
    result = ask.json()["result"]
    assert result["answer"] == "Use `Trainer.fit(data)`." and result["unknown_identifiers"] == []
    assert result["citations"] and isinstance(result["notices"], list)
    search = httpx.post(
        f"{base}/search/run",
        json={"question": "Gemma2DecoderLayer.forward", "k": 2},
        headers=_auth(),
        timeout=60,
    )
    assert search.json()["result"]["sources"][0]["symbol"] == "Gemma2DecoderLayer.forward"
    empty = httpx.post(f"{base}/search/run", json={"question": " "}, headers=_auth(), timeout=60)
    assert empty.status_code == 400 and empty.json()["detail"] == "the question is empty"


def test_no_route_deploys_or_undeploys_and_a_wrong_token_gets_401(server):
    base, *_ = server
    for path in ("/deploy-yaml", "/deploy_files", "/undeploy/ask", "/draw/ask", "/v1/files"):
        assert httpx.post(f"{base}{path}", json={}, headers=_auth()).status_code == 404, path
    assert httpx.get(f"{base}/v1/models").status_code == 401
    assert httpx.get(f"{base}/v1/models", headers={"Authorization": "Bearer wrong"}).status_code == 401


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("VmRSS:")).split()[1]) / 1024


def test_a_body_over_the_cap_is_413_at_once_and_the_server_does_not_grow(server):
    """A 100 MB ``Content-Length`` is refused before a byte is read, 200,000 messages (8.8 MB) are
    refused at the cap, neither grows the server (they had taken 20 s and 500 MB)."""
    from codeground.app.serve.http_server import MAX_BODY_BYTES

    base, _, proc, log = server
    before = _rss_mb(proc.pid)
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"POST /ask/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n".encode()
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 413")
    messages = [{"role": "user", "content": f"question {i}"} for i in range(200_000)]
    started = time.monotonic()
    refused = httpx.post(
        f"{base}/v1/chat/completions",
        json={"model": "ask", "messages": messages},
        headers=_auth(),
        timeout=60,
    )
    assert refused.status_code == 413 and time.monotonic() - started < 10
    assert f"over {MAX_BODY_BYTES:,} bytes" in refused.json()["error"]["message"]
    assert _rss_mb(proc.pid) - before < 50
    assert "Traceback" not in log.read_text()


def test_a_slow_answer_does_not_hold_another_clients_status(server):
    """Answers run off the event loop: while one streams slowly, ``/status`` answers at once (a
    large request had held another client's ``/status`` for 15 s)."""
    base, fake, *_ = server
    fake.configure(reply=" ".join(["`Trainer.fit(data)` trains."] * 8), token_delay=0.15)
    try:
        done = threading.Event()

        def ask() -> None:
            body = {"model": "ask", "messages": [{"role": "user", "content": "How do I fit a Trainer?"}]}
            with httpx.stream(
                "POST",
                f"{base}/v1/chat/completions",
                json={**body, "stream": True},
                headers=_auth(),
                timeout=60,
            ) as response:
                for _ in response.iter_lines():
                    pass
            done.set()

        asker = threading.Thread(target=ask, daemon=True)
        asker.start()
        waits = []
        while not done.is_set() and len(waits) < 40:
            started = time.monotonic()
            assert httpx.get(f"{base}/status", headers=_auth(), timeout=10).status_code == 200
            waits.append(time.monotonic() - started)
            time.sleep(0.1)
        asker.join(60)
    finally:
        fake.configure(token_delay=0.0)
    assert len(waits) >= 5 and max(waits) < 1.0, waits


@pytest.mark.parametrize("k", ["1e400", "-1e400", "3.5", "3.0", "true", '"3"', "0", "-2", "51", "null"])
def test_a_k_that_is_not_a_whole_number_from_1_to_max_k_is_a_one_line_422(server, k):
    """``{"k": 1e400}`` had been a 500 with a traceback in the log."""
    base, _, _, log = server
    got = httpx.post(
        f"{base}/search/run",
        content=f'{{"question": "fit", "k": {k}}}',
        headers={**_auth(), "Content-Type": "application/json"},
        timeout=60,
    )
    assert got.status_code == 422, got.text
    detail = got.json()["detail"]
    assert isinstance(detail, str) and detail.startswith("k: ") and "\n" not in detail
    assert "Traceback" not in log.read_text()


def test_the_openai_routes_follow_the_openai_api(server):
    """A stream ends ``data: [DONE]``, a plain answer has usage, only ``ask`` is listed, ``n=3`` is a
    400, ``bearer`` in lower case is accepted, and an LLM server that fails is a 503 (these had been:
    no ``[DONE]``, ``usage: null``, ``search`` listed, one choice, 401, a 200 with the error as text)."""
    from openai import OpenAI

    base, fake, *_ = server
    fake.configure(reply="Use `Trainer.fit(data)`.")
    body = {"model": "ask", "messages": [{"role": "user", "content": "How do I fit a Trainer?"}]}
    lower = {"Authorization": f"bearer {TOKEN}"}
    with httpx.stream(
        "POST", f"{base}/v1/chat/completions", json={**body, "stream": True}, headers=lower, timeout=60
    ) as response:
        assert response.status_code == 200
        events = [line for line in response.iter_lines() if line]
    assert events[-1] == "data: [DONE]" and all(e.startswith("data: {") for e in events[:-1])
    client = OpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0)
    done = client.chat.completions.create(**body)
    assert done.choices[0].message.content.startswith("Use `Trainer.fit(data)`.")
    assert done.usage.total_tokens == done.usage.prompt_tokens + done.usage.completion_tokens > 0
    assert [m.id for m in client.models.list().data] == ["ask"]
    assert httpx.post(f"{base}/chat/completions", json={**body, "n": 3}, headers=_auth()).status_code == 400
    fake.configure(status_code=500)
    try:
        failed = httpx.post(f"{base}/v1/chat/completions", json=body, headers=_auth(), timeout=60)
    finally:
        fake.configure(status_code=None)
    assert failed.status_code == 503 and "HTTP 500" in failed.json()["error"]["message"]


def test_serve_without_an_index_is_one_line(tmp_path):
    done = subprocess.run(
        [CODEGROUND, "serve", "--index-dir", str(tmp_path / "none"), "--port", str(closed_port())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and done.stderr.strip().count("\n") == 0 and "no index" in done.stderr


@pytest.mark.parametrize("command", ["serve", "chat"])
def test_a_port_in_use_is_one_line_before_anything_loads(indexed_sample, command):
    """Another program listening on the port: the one line says so at once (the chat had said
    "Cannot find empty port" and the HTTP server had failed only after loading its pipelines)."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [CODEGROUND, command, "--index-dir", str(indexed_sample[1]), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert done.stderr == f"error: cannot serve on 127.0.0.1:{port}: Address already in use\n"


def _ipv6_loopback_port() -> int:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
            return s.getsockname()[1]
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")


@pytest.mark.parametrize(("command", "host"), [("serve", "[::1]"), ("serve", "::1"), ("chat", "::1")])
def test_a_server_asked_for_an_ipv6_address_listens_there_and_announces_it(indexed_sample, command, host):
    """``--host [::1]`` as a URL writes it, or ``::1`` bare: both servers listen on ::1 and announce
    ``http://[::1]:PORT`` (serve had failed on the brackets after loading everything, "Name or service
    not known"; the chat had ended in a traceback on a bare ``::1``); ::1 is this machine only, so no
    warning about a missing token."""
    port = _ipv6_loopback_port()
    url = f"http://[::1]:{port}"
    proc = subprocess.Popen(
        [CODEGROUND, command, "--index-dir", str(indexed_sample[1]), "--host", host, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/" if command == "chat" else f"{url}/status").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"{command} --host {host} did not answer on {url}"
            time.sleep(0.3)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    said = out + err
    assert f"on {url}" in said, said
    assert "warning: serving" not in said and "Traceback" not in said, said
    assert "| INFO" not in said, said  # Hayhooks' start-up lines left out
