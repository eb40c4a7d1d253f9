"""AnswerFlags: an answer's command-line flags that the repository never writes are marked."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.dataclasses import ChatMessage

from codeground.components.grounding.flags import AnswerFlags
from codeground.components.notices import UNKNOWN_IDENTIFIERS, kind_of
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed

RECORDS = [
    Document(
        content="def serve(args):\n    parser.add_argument('--max-model-len', type=int)\n",
        meta={"file_path": "pkg/serve.py", "symbol": "serve"},
    ),
    Document(
        content="class EngineArgs:\n    tensor_parallel_size: int = 1\n",
        meta={"file_path": "pkg/args.py", "symbol": "EngineArgs"},
    ),
    Document(content="Run `docker run --runtime nvidia pkg`.", meta={"file_path": "docs/run.md"}),
]


@pytest.fixture(scope="module")
def check() -> AnswerFlags:
    store = SQLiteBM25DocumentStore()
    store.write_documents(RECORDS)
    check = AnswerFlags(document_store=store)
    check.warm_up()
    return check


def _unknown(check: AnswerFlags, text: str) -> list[str]:
    return check.run(replies=[ChatMessage.from_assistant(text)])["flags"]["unknown"]


def test_a_flag_the_repository_never_writes_is_unknown_and_marked(check):
    out = check.run(replies=[ChatMessage.from_assistant("Pass `--max-model-length=4096`.")])
    assert out["flags"] == {"flags": ["--max-model-length"], "unknown": ["--max-model-length"]}
    assert [kind_of(n) for n in out["notices"]] == [UNKNOWN_IDENTIFIERS]
    assert "--max-model-length" in out["notices"][0]


def test_a_flag_written_anywhere_or_spelled_as_an_identifier_is_known(check):
    # written in an argparse call; an identifier with its letters; written in a doc
    text = "```bash\npkg serve --max-model-len 4096 --tensor-parallel-size 2 --runtime nvidia\n```"
    assert _unknown(check, text) == []


def test_the_standard_tools_flags_are_known(check):
    assert (
        _unknown(check, "`pip install --upgrade --no-cache-dir pkg`, then `docker run --rm --gpus all`") == []
    )


def test_each_unknown_flag_is_listed_once_in_the_replys_order(check):
    text = "Use --fast-mode, or --turbo; --fast-mode also works with --max-model-len."
    assert _unknown(check, text) == ["--fast-mode", "--turbo"]


def test_a_dash_inside_a_word_or_an_em_dash_is_not_a_flag(check):
    assert check.run(replies=[ChatMessage.from_assistant("It is pre--processed -- and well-known.")])[
        "flags"
    ] == {"flags": [], "unknown": []}


def test_without_a_repository_or_a_reply_nothing_is_marked():
    lone = AnswerFlags(document_store=None)
    assert lone.run(replies=[ChatMessage.from_assistant("Use --turbo.")])["flags"]["unknown"] == []
    assert lone.run(replies=[]) == {"flags": {"flags": [], "unknown": []}, "notices": []}


def test_run_does_not_mutate_its_input_and_round_trips_through_yaml(check, tmp_path):
    replies = [ChatMessage.from_assistant("Use --turbo.")]
    kept = [m.text for m in replies]
    assert check.run(replies=replies) == check.run(replies=replies) and [m.text for m in replies] == kept
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    data = component_to_dict(AnswerFlags(document_store=store), "flags")
    with codeground_components_allowed():
        again = component_from_dict(AnswerFlags, data, "flags")
    assert isinstance(again.document_store, SQLiteBM25DocumentStore)
    assert again.document_store.persist_path == store.persist_path


def test_a_one_word_flag_must_be_written_as_a_flag_not_only_as_a_word(check):
    # `serve` is a word (an identifier) of the repository, `--serve` is written nowhere
    assert _unknown(check, "Start it with `pkg --serve`.") == ["--serve"]
