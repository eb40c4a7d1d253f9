"""`codeground mcp` through a real MCP client session (``mcp.client.stdio``) that spawns it, on the
sample repository's real index, with the fake Ollama server behind ``ask``."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest

from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.serve.repo_tools import RepositoryTools
from tests.conftest import FIXTURES

CODEGROUND = str(Path(sys.executable).parent / "codeground")


def _session_calls(index_dir: Path, env: dict[str, str], calls: list[tuple[str, dict]]) -> tuple[list, list]:
    """Spawn `codeground mcp`, list its tools, run ``calls`` in order; ``(tools, results)``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=CODEGROUND, args=["mcp", "--index-dir", str(index_dir)], env=env)

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            results = [await session.call_tool(name, arguments) for name, arguments in calls]
            return tools, results

    return anyio.run(main)


@pytest.fixture(scope="module")
def index_dir(indexed_sample) -> Path:
    return indexed_sample[1]


def test_a_real_client_lists_the_tools_and_each_finds_the_right_file(index_dir, fake_ollama):
    fake_ollama.configure(
        reply="`Trainer.fit(data)` trains the model (pkg/trainer.py). `Trainer.fit_fast` too."
    )
    env = {**os.environ, "OLLAMA_HOST": fake_ollama.url}
    calls = [
        ("search_code", {"question": "What does Gemma2DecoderLayer.forward return?", "k": 3}),
        ("find_symbol", {"name": "Gemma2DecoderLayer.forward"}),
        ("get_source", {"path": "pkg/trainer.py", "start_line": 60, "end_line": 61}),
        ("ask", {"question": "How do I fit a Trainer?"}),
        ("get_source", {"path": "../../etc/passwd", "start_line": 1, "end_line": 2}),
        ("get_source", {"path": "/etc/passwd", "start_line": 1, "end_line": 2}),
        ("search_code", {"question": "   "}),
    ]
    tools, results = _session_calls(index_dir, env, calls)
    assert {t.name for t in tools} == {"search_code", "ask", "get_source", "find_symbol"}
    assert all(t.description and t.inputSchema["properties"] for t in tools)
    search, symbol, source, answer, escape, absolute, empty = results

    assert not search.isError
    top = search.structuredContent["sources"][0]
    assert (top["path"], top["symbol"]) == ("pkg/trainer.py", "Gemma2DecoderLayer.forward")
    assert json.loads(search.content[0].text)["sources"][0]["symbol"] == top["symbol"]  # JSON, not a repr

    assert [r["symbol"] for r in symbol.structuredContent["records"]][:1] == ["Gemma2DecoderLayer.forward"]

    text = (FIXTURES / "sample_repo" / "pkg" / "trainer.py").read_text().splitlines(keepends=True)
    assert source.structuredContent["text"] == "".join(text[59:61])

    got = answer.structuredContent  # the model names Trainer.fit_fast again when asked again: withheld
    assert got["answer"].startswith("This repository material does not answer the question")
    assert got["withheld"].startswith("`Trainer.fit(data)`") and got["repaired"] == ["Trainer.fit_fast"]
    assert got["citations"] and all(":" in c and "-" in c for c in got["citations"])
    assert got["unknown_identifiers"] == ["Trainer.fit_fast"]

    for refused in (escape, absolute):
        assert refused.isError and "not a file of the indexed repository" in refused.content[0].text
    assert empty.isError and "the question is empty" in empty.content[0].text


def test_no_index_is_one_line_and_no_server(tmp_path):
    import subprocess

    done = subprocess.run(
        [CODEGROUND, "mcp", "--index-dir", str(tmp_path / "none")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "no index" in done.stderr


def test_a_server_started_before_a_reindex_answers_from_the_new_generation(tmp_path):
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    tools = RepositoryTools(tmp_path / "idx", PIPELINES_DIR / "query.yaml")
    assert tools.find_symbol("Server::Start").records[0].path == "server.go"
    assert tools.find_symbol("Server.Stop").records == []
    with (repo / "server.go").open("a") as fh:
        fh.write("\n// Stop stops the server.\nfunc (s *Server) Stop() error {\n\treturn nil\n}\n")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    assert tools.search_code("What does Server.Stop do?", k=3).sources[0].symbol == "Server.Stop"
    assert tools.find_symbol("Server.Stop").records[0].start_line == 47


def test_get_source_reads_the_file_list_once_per_generation_and_sees_a_new_one_at_once(tmp_path, monkeypatch):
    import codeground.app.index.live as live
    from codeground.app.errors import CodegroundError
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    tools = RepositoryTools(tmp_path / "idx", PIPELINES_DIR / "query.yaml")
    reads = []
    read_with_files = live.open_index_with_files
    monkeypatch.setattr(live, "open_index_with_files", lambda d: reads.append(d) or read_with_files(d))
    first = (repo / "server.go").read_text(encoding="utf-8").splitlines(keepends=True)[0]
    for _ in range(3):
        assert tools.get_source("server.go", 1, 1).text == first
    assert len(reads) == 1

    (repo / "server.go").unlink()
    (repo / "added.py").write_text("def added():\n    return 1\n", encoding="utf-8")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    assert tools.get_source("added.py", 1, 1).text == "def added():\n"
    with pytest.raises(CodegroundError, match="server.go: not a file of the indexed repository"):
        tools.get_source("server.go", 1, 1)
    assert len(reads) == 2


def test_every_tool_parameter_has_a_description_and_its_bounds_in_the_schema_a_real_client_lists(index_dir):
    """Listed over stdio by a real client: each parameter is described, ``k`` is an integer from 1 to
    ``MAX_K`` (the one bound of every way in), lines start at 1, strings are not empty; a call that
    breaks a bound (k = 51, true, 2.0, 1e400) is refused with the field named, before anything runs
    (the schemas had had names and types only)."""
    from codeground.app.query.engine import MAX_QUESTION_CHARS
    from codeground.app.serve.repo_tools import MAX_K

    calls = [("search_code", {"question": "fit", "k": k}) for k in (51, 0, True, 2.0, float("inf"))]
    calls.append(("get_source", {"path": "pkg/trainer.py", "start_line": 0, "end_line": 1}))
    tools, results = _session_calls(index_dir, dict(os.environ), calls)
    schemas = {t.name: t.inputSchema["properties"] for t in tools}
    for name, properties in schemas.items():
        for param, schema in properties.items():
            assert schema.get("description"), (name, param)
    k = schemas["search_code"]["k"]
    assert (k["type"], k["minimum"], k["maximum"], k["default"]) == ("integer", 1, MAX_K, 8)
    question = schemas["search_code"]["question"]
    assert (question["minLength"], question["maxLength"]) == (1, MAX_QUESTION_CHARS)
    assert schemas["ask"]["question"] == question
    assert schemas["get_source"]["start_line"]["minimum"] == 1 == schemas["get_source"]["end_line"]["minimum"]
    assert (
        schemas["get_source"]["path"]["minLength"] == 1 and schemas["find_symbol"]["name"]["minLength"] == 1
    )
    assert all(t.outputSchema for t in tools)  # the results' schemas are kept
    for (_, arguments), result in zip(calls, results, strict=True):
        assert result.isError, arguments
        said = result.content[0].text
        assert ("k" in said or "start_line" in said) and "\n" not in said.strip().split("\n")[0], said


def test_text_content_escapes_repository_names_and_structured_content_keeps_them_exact(tmp_path):
    """A file named ``<img …>.py``, ``two\\nlines.py`` or with a bidi override: the tool's text (what
    clients show, or give a model) writes each control or bidi character out (``one_line``: a name
    cannot split a line or reorder one), the structured content keeps the exact path ``get_source``
    needs; a tool error naming such a path is one line too."""
    from mcp.shared.memory import create_connected_server_and_client_session

    from codeground.app.serve.mcp_server import build_server
    from tests.app.fake_engine import BIDI_PATH, NEWLINE_PATH, ODD_SYMBOL, FakeEngine, tools_over

    server = build_server(tmp_path / "idx", tmp_path / "q.yaml", tools_over(tmp_path, FakeEngine()))

    async def main():
        async with create_connected_server_and_client_session(server) as session:
            found = await session.call_tool("search_code", {"question": "fit", "k": 3})
            refused = await session.call_tool("search_code", {"question": "refuse x\n\u202e.py"})
            return found, refused

    found, refused = anyio.run(main)
    assert not found.isError
    exact = [s["path"] for s in found.structuredContent["sources"]]
    assert (
        NEWLINE_PATH in exact
        and BIDI_PATH in exact
        and found.structuredContent["sources"][0]["symbol"] == ODD_SYMBOL
    )
    text = found.content[0].text
    assert "\u202e" not in text and "\\u202e" in text
    shown = json.loads(text)["sources"]
    assert [s["path"] for s in shown][1:] == ["two\\nlines.py", "rtl\\u202eyp.txt"]
    assert (
        shown[0]["symbol"] == "<b>fit</b>\\nInjected: line"
        and shown[0]["text"] == "def fit(data):\n    return data\n"
    )
    assert (
        refused.isError
        and "\n" not in refused.content[0].text
        and "refuse x\\n\\u202e.py: refused" in refused.content[0].text
    )


@pytest.mark.parametrize("k", [0, 51, -1, True, 3.0, float("inf"), float("nan"), "3", None])
def test_the_one_k_bound_refuses_anything_but_a_whole_number_from_1_to_max_k(k):
    """``repo_tools.check_k`` is the bound behind every way in, even for a caller that skips a schema."""
    from codeground.app.errors import CodegroundError
    from codeground.app.serve.repo_tools import MAX_K, check_k

    assert check_k(1) == 1 and check_k(MAX_K) == MAX_K
    with pytest.raises(CodegroundError, match=f"between 1 and {MAX_K}"):
        check_k(k)


def test_get_source_serves_a_pasted_key_overwritten_and_says_when_the_file_changed(tmp_path):
    """``get_source`` reads the file from disk: a key pasted into it is overwritten there too (as the
    index read it, lines unchanged), and an edit since the index was built is said, not hidden."""
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
    from tests.fake_keys import fake

    key = fake("ghp_", 36)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "settings.py").write_text(f'TOKEN = "{key}"\n\n\ndef load():\n    return TOKEN\n')
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    tools = RepositoryTools(tmp_path / "idx", PIPELINES_DIR / "query.yaml")
    served = tools.get_source("settings.py", 1, 5)
    assert key not in served.text and "[REDACTED:github-token]" in served.text
    assert served.text.splitlines()[3] == "def load():" and not served.changed_since_index
    (repo / "settings.py").write_text("# moved\n" + (repo / "settings.py").read_text())
    assert tools.get_source("settings.py", 1, 2).changed_since_index


def test_get_source_never_serves_a_file_secret_by_its_name_from_an_older_index(tmp_path):
    from codeground.app.errors import CodegroundError
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    (repo / "secrets.toml").write_text('api_key = "abc"\n')
    tools = RepositoryTools(tmp_path / "idx", PIPELINES_DIR / "query.yaml")
    root, digests = tools._indexed_files()
    tools._files = (tools._files[0], root, {**digests, "secrets.toml": "0" * 64})  # as an old index lists it
    with pytest.raises(CodegroundError, match="a secret file by its name"):
        tools.get_source("secrets.toml", 1, 1)
