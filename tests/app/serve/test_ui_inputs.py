"""A chat client may send anything in place of the picker's label: the app answers with the default
pipeline, never with a traceback (issue 55, item 11)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.reliability.helpers import QUERY_YAML


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def chat(indexed_sample, fake_ollama, monkeypatch) -> Iterator[str]:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    from codeground.app.serve.ui import serve

    port = _free_port()
    demo = serve(indexed_sample[1], QUERY_YAML, port=port, block=False, pipelines=[QUERY_YAML])
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
@pytest.mark.parametrize("label", [["query.yaml"], ["query.yaml", "query.yaml"]], ids=["list", "list-of-two"])
def test_a_malformed_picker_label_gets_the_default_pipeline_not_a_traceback(chat, capfd, label):
    """Gradio's dropdown refuses a value it does not offer (with its own error), but passes a list of
    offered ones through: that reached ``choices[label]`` as an unhashable list."""
    from gradio_client import Client

    client = Client(chat, verbose=False, download_files=False)
    _, history, _ = client.predict("How do I fit a Trainer?", [], label, api_name="/respond")
    assert history and "trainer" in str(history[-1]).lower()
    assert "ready" in client.predict(label, api_name="/status_for")
    assert client.predict(label, api_name="/warm") is not None
    err = capfd.readouterr().err
    assert "Traceback" not in err and "unhashable" not in err, err
