"""``$OLLAMA_HOST`` is read as Ollama itself reads it (the server `codeground ollama serve` starts
listens there), and a value that is no address is named in one line only where a server is called."""

from __future__ import annotations

import pytest

from codeground.app.errors import CodegroundError
from codeground.app.pipeline.loader import check_ollama_host, check_server_variables, ollama_url

# Ollama's own reading of these values (its Go server's and its Python client's), except 0.0.0.0:
# a server listening on every interface is called on 127.0.0.1
AS_OLLAMA_READS_THEM = {
    "": "http://localhost:11434",
    "1.2.3.4": "http://1.2.3.4:11434",
    ":56789": "http://127.0.0.1:56789",
    "0.0.0.0": "http://127.0.0.1:11434",
    "1.2.3.4:56789": "http://1.2.3.4:56789",
    "http://1.2.3.4": "http://1.2.3.4:80",
    "https://example.com": "https://example.com:443",
    "https://example.com:56789/path": "https://example.com:56789/path",
    "example.com/path": "http://example.com:11434/path",
    "example.com:56789/path/": "http://example.com:56789/path",
    "[0001:002:003:0004::1]": "http://[0001:002:003:0004::1]:11434",
    "[::1]:5000": "http://[::1]:5000",
}


@pytest.mark.parametrize(("value", "url"), AS_OLLAMA_READS_THEM.items())
def test_ollama_host_is_read_as_ollama_reads_it(monkeypatch, value, url):
    monkeypatch.setenv("OLLAMA_HOST", value)
    assert ollama_url() == url
    check_ollama_host()  # each is an address


def test_an_ollama_host_that_is_no_address_is_named_only_where_a_built_component_calls_it(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "localhost:abc")
    assert ollama_url() == "http://localhost:abc"  # passed on: a search that calls no server runs
    on_ollama = {"components": {"llm": {"type": "x.Y", "init_parameters": {"url": "${ollama_url}"}}}}
    with pytest.raises(CodegroundError, match=r"^\$OLLAMA_HOST is 'localhost:abc', not a server address"):
        check_server_variables(on_ollama)
    check_server_variables(on_ollama, skip=["llm"])  # e.g. the rewriter, which a first question skips
    on_openai = {"components": {"llm": {"type": "x.Y", "init_parameters": {"url": "${openai_base_url}"}}}}
    with pytest.raises(CodegroundError):  # its default base URL is Ollama's
        check_server_variables(on_openai)
    monkeypatch.setenv("CODEGROUND_OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    check_server_variables(on_openai)
