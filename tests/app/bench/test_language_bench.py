"""The language benchmark's parts that need no registry: its question sets, corpus fetching, counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codeground.app.bench.corpora import LANGUAGE_CORPORA, Corpus
from codeground.app.bench.evaluation import load_questions
from codeground.app.bench.language_bench import QUESTIONS_DIR, code_symbols, naming_split
from codeground.app.errors import CodegroundError
from tests.conftest import FIXTURES


@pytest.mark.parametrize("language", sorted(LANGUAGE_CORPORA))
def test_each_language_has_a_question_set_of_15_or_more_a_third_naming_no_identifier(language):
    gold = QUESTIONS_DIR / f"{language}.json"
    questions = load_questions(gold)
    split = naming_split(gold)
    assert len(questions) >= 15
    assert len(split["names_none"]) * 3 >= len(questions)
    assert split["names_none"] | split["names_identifier"] == {q.question_id for q in questions}
    for row in json.loads(gold.read_text())["rag_questions"]:
        (source,) = row["sources"]
        assert 1 <= source["start_line"] <= source["end_line"]
        assert source["first_character_index"] < source["last_character_index"]


def test_a_corpus_is_fetched_once_and_a_failed_fetch_leaves_nothing(tmp_path: Path):
    calls = []

    def fetch(dest: Path) -> None:
        calls.append(dest)
        dest.mkdir()
        (dest / "a.go").write_text("package a\n")

    corpus = Corpus("demo", "go", "a test", fetch)
    root = corpus.ensure(tmp_path)
    assert (root / "a.go").is_file() and corpus.ensure(tmp_path) == root and len(calls) == 1

    def broken(dest: Path) -> None:
        dest.mkdir()
        raise CodegroundError("could not fetch demo from the npm registry")

    with pytest.raises(CodegroundError, match="could not fetch"):
        Corpus("broken", "go", "a test", broken).ensure(tmp_path)
    assert list((tmp_path / "corpora" / "broken").iterdir()) == []  # no partial tree left behind


def test_code_symbols_counts_the_distinct_symbols_of_one_language(tmp_path: Path):
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    counts = code_symbols(tmp_path / "idx", "go")
    # server.go: DefaultAddr Server Handler Pair NewServer Server.Start Pair.Key + the module "server"
    assert counts["all"] == 8 and counts["module"] == 1


def test_a_set_that_gives_kinds_is_also_split_by_kind():
    gold = QUESTIONS_DIR / "python.json"
    split = naming_split(gold)
    kinds = {k: v for k, v in split.items() if k.startswith("kind:")}
    assert set(kinds) == {"kind:api", "kind:docs", "kind:notebook"}
    assert set().union(*kinds.values()) == {q.question_id for q in load_questions(gold)}
    assert not any(k.startswith("kind:") for k in naming_split(QUESTIONS_DIR / "go.json"))
