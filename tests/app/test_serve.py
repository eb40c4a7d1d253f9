"""`codeground serve` started as a process on loopback: the `openai` client streams an answer (fake
Ollama behind it), `/ask/run` and `/search/run` answer JSON, no deploy route exists, a wrong token
gets 401."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
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
        yield base, fake
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

    base, fake = server
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
    base, fake = server
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
    base, _ = server
    for path in ("/deploy-yaml", "/deploy_files", "/undeploy/ask", "/draw/ask", "/v1/files"):
        assert httpx.post(f"{base}{path}", json={}, headers=_auth()).status_code == 404, path
    assert httpx.get(f"{base}/v1/models").status_code == 401
    assert httpx.get(f"{base}/v1/models", headers={"Authorization": "Bearer wrong"}).status_code == 401


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
