"""Bad user input through the real CLI: one ``error:`` line on stderr, a non-zero exit, nothing on
stdout, no traceback anywhere -- and nothing run that the input names (``os.system`` in a YAML)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from codeground.app.pipeline.loader import PIPELINES_DIR
from tests.conftest import closed_port
from tests.reliability.helpers import assert_one_line_error, cg

INDEX_YAML = PIPELINES_DIR / "index.yaml"
HUGE_QUESTION = ("How does the trainer fit the data? " * 3_000)[:100_000]


@dataclass(frozen=True)
class Ctx:
    """Where the inputs live: an indexed sample repository and a folder of bad files."""

    repo: Path
    idx: Path
    files: Path


def _component_yaml(type_name: str, params: str = "{}") -> str:
    return f"components:\n  x:\n    type: {type_name}\n    init_parameters: {params}\nconnections: []\n"


BAD_FILES = {
    "malformed.yaml": "components: [\n  - {unclosed\n",
    "not_a_pipeline.yaml": "- just\n- a list\n",
    "no_components.yaml": "connections: []\n",
    "unknown_component.yaml": _component_yaml("codeground.components.nope.Missing"),
    "unknown_module.yaml": _component_yaml("no_such_package.Thing"),
    "os_system.yaml": _component_yaml("os.system", "{command: 'touch {marker}'}"),
    "subprocess.yaml": _component_yaml("subprocess.Popen", "{args: ['touch', '{marker}']}"),
    "builtin_eval.yaml": _component_yaml("builtins.eval", '{source: \'open("{marker}", "w")\'}'),
    "gold_not_json.json": "this is not JSON {",
    "gold_list.json": "[1, 2, 3]",
    "gold_no_questions.json": json.dumps({"questions": []}),
    "gold_no_id.json": json.dumps({"rag_questions": [{"question": "q"}]}),
    "gold_no_sources.json": json.dumps({"rag_questions": [{"question_id": "q1", "question": "What?"}]}),
    "gold_bad_span.json": json.dumps(
        {
            "rag_questions": [
                {
                    "question_id": "q1",
                    "question": "What?",
                    "sources": [
                        {"file_path": "a.py", "first_character_index": "x", "last_character_index": 5}
                    ],
                }
            ]
        }
    ),
}

Args = Callable[[Ctx], list]

# (id, argv, fragment of the one error line)
BAD_INPUTS: list[tuple[str, Args, str]] = [
    ("empty question", lambda c: ["search", "", "--index-dir", c.idx], "the question is empty"),
    ("whitespace question", lambda c: ["search", " \t\n ", "--index-dir", c.idx], "the question is empty"),
    ("empty question to query", lambda c: ["query", "   ", "--index-dir", c.idx], "the question is empty"),
    ("100 KB question", lambda c: ["search", HUGE_QUESTION, "--index-dir", c.idx], "100,000 characters"),
    (
        "100 KB question to query",
        lambda c: ["query", HUGE_QUESTION, "--index-dir", c.idx],
        "100,000 characters",
    ),
    # "café" typed in a Latin-1 terminal: the byte 0xe9 reached the embedder as a lone surrogate
    # ("TextEncodeInput must be Union[...]" after the models had loaded)
    (
        "a question that is not UTF-8",
        lambda c: ["search", "caf\udce9 trainer", "--index-dir", c.idx],
        "the question is not UTF-8 text (byte 0xe9 at character 4)",
    ),
    ("-k abc", lambda c: ["search", "trainer", "-k", "abc", "--index-dir", c.idx], "Invalid value for '-k'"),
    ("-k -1", lambda c: ["search", "trainer", "-k", "-1", "--index-dir", c.idx], "-k must be a whole number"),
    ("-k 0", lambda c: ["search", "trainer", "-k", "0", "--index-dir", c.idx], "-k must be a whole number"),
    # MCP and HTTP refuse more than 50; the CLI returned the pipeline's 24 without a word
    (
        "-k 100000",
        lambda c: ["search", "trainer", "-k", "100000", "--index-dir", c.idx],
        "-k must be a whole number from 1 to 50, got 100000",
    ),
    (
        "search-file -k abc",
        lambda c: ["search-file", c.files / "gold_no_sources.json", "--out", c.files / "o.json", "-k", "abc"],
        "Invalid value for '-k'",
    ),
    ("missing index", lambda c: ["search", "trainer", "--index-dir", c.files / "none"], "no index in"),
    (
        # it advised `codeground index PATH --index-dir <that file>`, which `index` refuses
        "--index-dir is a file",
        lambda c: ["search", "trainer", "--index-dir", c.repo / "NOTES.txt"],
        "it is a file, not an index folder; pass --index-dir the folder an index was built into",
    ),
    ("--index-dir is the repository", lambda c: ["search", "trainer", "--index-dir", c.repo], "no index in"),
    ("--repo without an index", lambda c: ["query", "trainer", "--repo", c.files], "no index in"),
    ("chat without an index", lambda c: ["chat", "--index-dir", c.files / "none"], "no index in"),
    (
        "malformed YAML",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "malformed.yaml"],
        "not valid YAML",
    ),
    (
        "YAML that is a list",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "not_a_pipeline.yaml"],
        "not a Haystack pipeline",
    ),
    (
        "YAML without components",
        lambda c: ["query", "x", "--index-dir", c.idx, "--pipeline", c.files / "no_components.yaml"],
        "not a Haystack pipeline",
    ),
    (
        "YAML that does not exist",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "nope.yaml"],
        "pipeline file not found",
    ),
    (
        "YAML naming an unknown component",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "unknown_component.yaml"],
        "cannot build pipeline",
    ),
    (
        "YAML naming an unknown module",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "unknown_module.yaml"],
        "cannot build pipeline",
    ),
    (
        "YAML naming os.system",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "os_system.yaml"],
        "cannot build pipeline",
    ),
    (
        "YAML naming subprocess.Popen",
        lambda c: ["query", "x", "--index-dir", c.idx, "--pipeline", c.files / "subprocess.yaml"],
        "a YAML may name components of",
    ),
    (
        "YAML naming builtins.eval",
        lambda c: ["search", "x", "--index-dir", c.idx, "--pipeline", c.files / "builtin_eval.yaml"],
        "cannot build pipeline",
    ),
    (
        "index YAML naming os.system",
        lambda c: [
            "index",
            c.repo,
            "--index-dir",
            c.files / "idx2",
            "--pipeline",
            c.files / "os_system.yaml",
        ],
        "cannot build pipeline",
    ),
    ("gold file not JSON", lambda c: ["eval", c.files / "gold_not_json.json", "--index-dir", c.idx], "JSON"),
    (
        "gold file a JSON list",
        lambda c: ["eval", c.files / "gold_list.json", "--index-dir", c.idx],
        "rag_questions",
    ),
    (
        "gold file without rag_questions",
        lambda c: ["eval", c.files / "gold_no_questions.json", "--index-dir", c.idx],
        "rag_questions",
    ),
    (
        "gold question without id",
        lambda c: ["eval", c.files / "gold_no_id.json", "--index-dir", c.idx],
        "question_id",
    ),
    (
        "gold question without sources",
        lambda c: ["eval", c.files / "gold_no_sources.json", "--index-dir", c.idx],
        "sources",
    ),
    (
        "gold source with a bad offset",
        lambda c: ["eval", c.files / "gold_bad_span.json", "--index-dir", c.idx],
        "character indices must be integers",
    ),
    ("gold file missing", lambda c: ["eval", c.files / "missing.json", "--index-dir", c.idx], "missing.json"),
    (
        "questions file not JSON",
        lambda c: [
            "search-file",
            c.files / "gold_not_json.json",
            "--out",
            c.files / "o.json",
            "--index-dir",
            c.idx,
        ],
        "JSON",
    ),
    (
        "eval-answers --limit 0",
        lambda c: ["eval-answers", c.files / "gold_no_sources.json", "--limit", "0", "--index-dir", c.idx],
        "--limit must be positive",
    ),
    (
        "fetch-model with an unknown model",
        lambda c: ["fetch-model", "gpt-5", "--work-dir", c.files / "cache"],
        "unknown model 'gpt-5'",
    ),
    ("index a missing directory", lambda c: ["index", c.files / "nope"], "not a directory"),
    (
        "index a file",
        lambda c: ["index", c.repo / "NOTES.txt", "--index-dir", c.files / "idx3"],
        "not a directory",
    ),
    # the servers check the same before they load a model or listen (a bad port had ended the chat in
    # a traceback; a missing YAML started the chat and the HTTP server, which then failed every question)
    ("chat --port 99999", lambda c: ["chat", "--index-dir", c.idx, "--port", "99999"], "between 1 and 65535"),
    ("serve --port 0", lambda c: ["serve", "--index-dir", c.idx, "--port", "0"], "between 1 and 65535"),
    (
        "chat on an address not on this machine",
        lambda c: ["chat", "--index-dir", c.idx, "--host", "192.0.2.1", "--port", closed_port()],
        "cannot serve on 192.0.2.1:",
    ),
    (
        "chat with a missing YAML",
        lambda c: ["chat", "--index-dir", c.idx, "--pipeline", c.files / "nope.yaml"],
        "pipeline file not found",
    ),
    (
        "serve with a missing YAML",
        lambda c: ["serve", "--index-dir", c.idx, "--pipeline", c.files / "no.yaml", "--port", closed_port()],
        "pipeline file not found",
    ),
    (
        "serve with an index YAML",
        lambda c: ["serve", "--index-dir", c.idx, "--port", closed_port(), "--pipeline", INDEX_YAML],
        "index.yaml: an index pipeline, where a query pipeline is needed (such as pipelines/query.yaml)",
    ),
    (
        "mcp with a missing YAML",
        lambda c: ["mcp", "--index-dir", c.idx, "--pipeline", c.files / "nope.yaml"],
        "pipeline file not found",
    ),
    (
        "mcp with a YAML that embeds questions with another model",
        lambda c: ["mcp", "--index-dir", c.idx, "--pipeline", PIPELINES_DIR / "query_ollama_embed.yaml"],
        "embeds questions with nomic-embed-text",
    ),
    # an output path that cannot be written, refused before the questions run (it had been a traceback
    # after all of them)
    (
        "search-file --out under a file",
        lambda c: ["search-file", c.files / "gold_no_id.json", "--out", c.files / "gold_list.json" / "o"],
        "gold_list.json is not a folder",
    ),
    (
        "search-file --out a folder",
        lambda c: ["search-file", c.files / "gold_no_sources.json", "--out", c.files, "--index-dir", c.idx],
        "Is a directory",
    ),
    (
        "eval --json under a file",
        lambda c: ["eval", c.files / "gold_no_sources.json", "--json", c.files / "gold_list.json" / "r"],
        "gold_list.json is not a folder",
    ),
    (
        "eval-answers --log under a file",
        lambda c: ["eval-answers", c.files / "gold_no_id.json", "--log", c.files / "gold_list.json" / "l"],
        "gold_list.json is not a folder",
    ),
    (
        "index into a file",
        lambda c: ["index", c.repo, "--index-dir", c.files / "gold_list.json"],
        "it is a file, not a folder",
    ),
    (
        "index into a folder under a file",
        lambda c: ["index", c.repo, "--index-dir", c.files / "gold_list.json" / "idx"],
        "gold_list.json is not a folder",
    ),
    (
        "serve with a YAML naming os.system",
        lambda c: ["serve", "--index-dir", c.idx, "--pipeline", c.files / "os_system.yaml"],
        "a YAML may name components of codeground.components, haystack, haystack_integrations only",
    ),
    (
        "fetch-model into a work folder that is a file",
        lambda c: ["fetch-model", "--work-dir", c.files / "gold_list.json"],
        "it is a file, not a folder",
    ),
    (
        "bench --languages into a work folder that is a file",
        lambda c: ["bench", "--languages", "--language", "python", "--work-dir", c.files / "gold_list.json"],
        "it is a file, not a folder",
    ),
    ("unknown option", lambda c: ["search", "x", "--bogus", "--index-dir", c.idx], "No such option"),
    ("missing question", lambda c: ["search", "--index-dir", c.idx], "Missing argument"),
    ("unknown command", lambda c: ["serach", "x"], "No such command"),
]


@pytest.fixture(scope="module")
def ctx(indexed_sample, tmp_path_factory) -> Ctx:
    repo, idx = indexed_sample
    files = tmp_path_factory.mktemp("bad_inputs")
    marker = files / "MARKER"
    for name, text in BAD_FILES.items():
        (files / name).write_text(text.replace("{marker}", str(marker)))
    return Ctx(repo=repo, idx=idx, files=files)


@pytest.fixture(autouse=True)
def _llm_unreachable(monkeypatch):
    # none of these inputs may get as far as the LLM; if one did, it would find nothing listening
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")


@pytest.mark.parametrize(
    "args,fragment", [(a, f) for _, a, f in BAD_INPUTS], ids=[i for i, _, _ in BAD_INPUTS]
)
def test_bad_input_is_one_error_line_and_a_non_zero_exit(ctx, args, fragment):
    result = cg(*args(ctx))
    assert_one_line_error(result, fragment)
    assert not (ctx.files / "MARKER").exists(), "a YAML made codeground run what it named"


def test_the_index_still_answers_after_every_bad_input(ctx):
    result = cg("search", "Trainer.fit", "-k", "1", "--index-dir", ctx.idx)
    assert result.exit_code == 0 and result.stdout.startswith("pkg/trainer.py:")
