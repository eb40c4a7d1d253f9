"""QuestionPremise: what the question names is looked up in the whole repository before answering."""

from __future__ import annotations

import copy

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.grounding.checker import GroundingChecker
from codeground.components.grounding.extract import extract_identifiers
from codeground.components.grounding.premise import REFUSAL, QuestionPremise
from codeground.components.grounding.vocabulary import vocabulary_of
from codeground.components.notices import NO_ANSWER, kind_of
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed

RECORDS = [
    Document(
        content="class GPTQMarlin24Config:\n    def from_config(cls, config): ...",
        meta={"file_path": "pkg/quant/gptq_marlin_24.py", "symbol": "GPTQMarlin24Config"},
    ),
    Document(
        content="def serve(args):\n    parser.add_argument('--tensor-parallel-size', type=int)\n"
        "    app.post('/v1/chat/completions')(chat)",
        meta={"file_path": "pkg/serve.py", "symbol": "serve"},
    ),
    Document(
        content="Run `pkg serve --max-old-space-size 4` behind Nginx; metrics go to Prometheus.",
        meta={"file_path": "docs/serving.md", "symbol": "Serving"},
    ),
    Document(
        content="class Trainer:\n    def fit(self, data, device='cpu'): ...",
        meta={"file_path": "pkg/trainer.py", "symbol": "Trainer"},
    ),
]


@pytest.fixture(scope="module")
def store() -> SQLiteBM25DocumentStore:
    store = SQLiteBM25DocumentStore()
    store.write_documents(RECORDS)
    return store


@pytest.fixture()
def premise(store) -> QuestionPremise:
    premise = QuestionPremise(document_store=store)
    premise.warm_up()
    return premise


def test_a_question_asking_about_a_method_the_repository_lacks_is_refused_and_the_notice_names_it(premise):
    out = premise.run(query="How do I call `Trainer.fly_to_moon()` after fitting?")
    assert out["verdict"] == "refuse" and out["refusal"] == REFUSAL
    assert out["premise"]["absent"] == ["Trainer.fly_to_moon"]
    assert [kind_of(n) for n in out["notices"]] == [NO_ANSWER] and "Trainer.fly_to_moon" in out["notices"][0]


def test_names_the_repository_has_pass_without_a_note(premise):
    out = premise.run(query="What does `Trainer.fit` do with `device`? And GPTQMarlin24Config.from_config?")
    assert out["verdict"] == "answer" and out["note"] == "" and out["refusal"] == "" and out["notices"] == []


def test_a_name_the_repository_spells_otherwise_is_told_to_the_model_and_not_refused(premise):
    out = premise.run(query="How is GPTQMarlin24 configured, and what does gptqmarlin24config hold?")
    assert out["verdict"] == "note" and out["refusal"] == ""
    # the same letters first (the module gptq_marlin_24.py), then the longer names it heads
    assert out["premise"]["near"]["GPTQMarlin24"] == ["gptq_marlin_24", "GPTQMarlin24Config"]
    assert (
        "The question writes GPTQMarlin24; this repository writes gptq_marlin_24, GPTQMarlin24Config."
        in out["note"]
    )


def test_a_head_cut_inside_a_word_is_not_a_spelling_of_it(store):
    vocabulary = vocabulary_of(store)
    assert vocabulary.near("Trai") == [] and vocabulary.near("GPTQMarlin") == [
        "gptq_marlin_24",
        "GPTQMarlin24Config",
    ]
    assert vocabulary.near("gptq_marlin24")[0] == "gptq_marlin_24"  # case and separators ignored


def test_an_absent_flag_or_http_path_is_refused_and_a_written_one_is_not(premise):
    assert premise.run(query="What does --gpu-overclock do?")["premise"]["absent"] == ["--gpu-overclock"]
    assert premise.run(query="How do I call /v1/images/generations?")["verdict"] == "refuse"
    for written in (
        "What does --tensor-parallel-size do?",  # an argparse string
        "Is --max-old-space-size needed?",  # only in the docs
        "Which fields does /v1/chat/completions take?",
    ):
        assert premise.run(query=written)["verdict"] == "answer", written


def test_names_in_pasted_code_are_noted_never_refused(premise):
    question = (
        "Why does this fail?\n```python\nimport pandas as pd\nt = Trainer()\nt.fit(pd.read_csv(path))\n```\n"
    )
    out = premise.run(query=question)
    assert out["verdict"] == "note" and out["refusal"] == ""
    assert out["premise"]["pasted_absent"] == ["pandas", "pandas.read_csv"]
    assert "This repository has no pandas, pandas.read_csv." in out["note"]


def test_a_proper_noun_the_repository_never_mentions_is_told_to_the_model_and_one_it_mentions_is_not(
    premise, store
):
    out = premise.run(query="Which port does the PostgreSQL logger use? Nginx and Prometheus work.")
    assert out["verdict"] == "note" and out["premise"]["proper_absent"] == ["PostgreSQL"]
    assert "Nothing in this repository mentions PostgreSQL." in out["note"] and out["refusal"] == ""
    strict = QuestionPremise(document_store=store, refuse_unmentioned=True)
    out = strict.run(query="Which port does the PostgreSQL logger use?")
    assert out["verdict"] == "refuse" and out["notices"] == [
        "nothing in it mentions PostgreSQL; the model was not asked"
    ]


@pytest.mark.parametrize(
    "question",
    [
        "Does training stop early? Sometimes it hangs.",
        "# Why does fit hang?",
        "- How do I call fit?\n- Where is it?",
        "> Why does fit hang?",
        "**Why** does fit hang?",
        "1) How does fit work?",
        '"Why" is what I ask about fit.',
    ],
)
def test_a_capital_that_starts_a_sentence_or_a_markdown_line_is_not_a_proper_noun(premise, question):
    assert premise.run(query=question)["premise"]["proper_nouns"] == [], question


def test_standard_names_and_the_repositorys_language_are_not_proper_nouns(store):
    premise = QuestionPremise(document_store=store, allowlist=["CUDA"])
    assert premise.run(query="Does fit run on CUDA with Python and None?")["premise"]["proper_nouns"] == []


def test_a_file_path_is_not_an_http_path(premise):
    out = premise.run(query="I saved results to /home/me/out/x.txt; can fit read them?")
    assert out["premise"]["paths"] == [] and out["verdict"] == "answer"


def test_a_long_question_is_read_whole(premise):
    question = "Why does `Trainer.fit` hang? " + "It hangs again, Sometimes. " * 4000
    assert len(question) > 100_000
    assert premise.run(query=question)["verdict"] in ("answer", "note")


def test_a_flag_value_the_repository_never_mentions_is_noted(premise):
    out = premise.run(query="How do I run it with --tensor-parallel-size on a `--device ane` option?")
    assert out["premise"]["proper_absent"] == ["ane"] and out["verdict"] == "note"
    assert premise.run(query="Is --device=ane possible?")["premise"]["proper_absent"] == ["ane"]
    # a word after a flag in prose is English, not its value; backticks pair as written
    assert premise.run(query="Is --device needed?")["verdict"] == "answer"
    assert (
        premise.run(query="Does `serve` take --tensor-parallel-size twice with `Trainer`?")["verdict"]
        == "answer"
    )


def test_standard_library_names_are_not_looked_up(premise):
    assert premise.run(query="Should I pass `json.dumps` output or an `os.PathLike`?")["verdict"] == "answer"


def test_refuse_absent_off_tells_the_model_instead(store):
    premise = QuestionPremise(document_store=store, refuse_absent=False)
    out = premise.run(query="How do I call `Trainer.fly_to_moon()`?")
    assert out["verdict"] == "note" and out["refusal"] == "" and out["notices"] == []
    assert "This repository has no Trainer.fly_to_moon." in out["note"]


def test_the_refusal_names_nothing_the_grounding_check_would_mark():
    assert extract_identifiers(REFUSAL) == []


def test_the_premise_and_the_grounding_check_read_one_shared_vocabulary(store):
    premise, checker = QuestionPremise(document_store=store), GroundingChecker(document_store=store)
    premise.warm_up()
    checker.warm_up()
    assert premise._names is checker._names


def test_a_store_file_written_again_is_read_again(tmp_path):
    path = str(tmp_path / "bm25.sqlite3")
    store = SQLiteBM25DocumentStore(persist_path=path)
    store.write_documents(RECORDS[:1])
    store.save()
    first = vocabulary_of(SQLiteBM25DocumentStore(persist_path=path))
    assert vocabulary_of(SQLiteBM25DocumentStore(persist_path=path)) is first
    store.write_documents(RECORDS[3:])
    store.save()
    assert vocabulary_of(SQLiteBM25DocumentStore(persist_path=path)).is_known("Trainer")


def test_run_is_deterministic_and_round_trips_through_yaml(premise):
    question = "How do I call `Trainer.fly_to_moon()`?"
    kept = copy.deepcopy(question)
    assert premise.run(query=question) == premise.run(query=question) and question == kept
    data = component_to_dict(premise, "premise")
    with codeground_components_allowed():
        again = component_from_dict(QuestionPremise, data, "premise")
    assert again.refuse_absent is True and again.allowlist is None


def test_a_name_the_user_calls_their_own_is_noted_not_refused(premise):
    out = premise.run(query="My `process_batch` calls `Trainer.fit`; why does our process_batch hang?")
    assert out["verdict"] == "note" and out["premise"]["pasted_absent"] == ["process_batch"]
    assert premise.run(query="Why does `process_batch` hang in my code?")["verdict"] == "refuse"


def test_without_a_repository_nothing_is_decided():
    out = QuestionPremise(document_store=None).run(query="How do I call `Trainer.fly_to_moon()`?")
    assert out["verdict"] == "answer" and out["refusal"] == "" and out["notices"] == []


def test_a_class_the_question_names_in_prose_must_be_spelt_as_a_type_in_the_repository(premise):
    # `parser` is only a variable here: "the Parser class" names nothing the repository defines
    out = premise.run(query="What does pkg's Parser class return?")
    assert out["verdict"] == "refuse" and out["premise"]["absent"] == ["Parser"]
    assert premise.run(query="What does the Trainer class return from fit?")["verdict"] == "answer"
    # a sentence's first word is not a name ("Which class …"), nor is a language's name
    assert premise.run(query="Which class does serve use? Is it a Python class?")["verdict"] == "answer"
