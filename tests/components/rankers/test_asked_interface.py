"""Tests for AskedInterfacePrior: a question about what something accepts, returns, raises or
defaults to puts its definition above the notebooks and examples that call it; other questions, and
docs and tests, keep the fused order."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.components.rankers.asked_interface import AskedInterfacePrior, asks_interface


def _docs(*pairs: tuple[str, str]) -> list[Document]:
    """Fused candidates, best first: (id, file_path) with RRF-like falling scores."""
    return [
        Document(id=i, content=f"content of {i}", meta={"file_path": p}, score=16 / (11 + n))
        for n, (i, p) in enumerate(pairs)
    ]


def _ids(question: str, docs: list[Document], factor: float = 0.5) -> list[str]:
    prior = AskedInterfacePrior(usage_factor=factor)
    return [d.id for d in prior.run(query=question, documents=docs)["documents"]]


def test_an_interface_question_puts_the_definition_above_the_examples_that_use_it():
    docs = _docs(
        ("notebook", "examples/tutorials/part_1_linear_regression.ipynb"),
        ("example", "examples/control/Part_2_pwa.py"),
        ("definition", "src/neuromancer/system.py"),
    )
    assert _ids("What arguments does Node's constructor accept?", docs) == [
        "definition",
        "notebook",
        "example",
    ]


@pytest.mark.parametrize(
    "question",
    [
        "How do I wrap a PyTorch network in a Node?",
        "Which tutorial shows how to train a neural ODE?",
        "What is a Node used for?",
    ],
)
def test_a_how_to_or_concept_question_keeps_the_fused_order(question):
    docs = _docs(("notebook", "examples/tutorials/part_1.ipynb"), ("definition", "src/pkg/system.py"))
    assert _ids(question, docs) == ["notebook", "definition"]


def test_docs_and_tests_keep_their_scores_for_an_interface_question():
    docs = _docs(
        ("guide", "docs/usage/engine_args.md"),
        ("test", "tests/test_system.py"),
        ("example", "examples/offline_inference/basic.py"),
        ("definition", "vllm/engine/arg_utils.py"),
    )
    out = AskedInterfacePrior(usage_factor=0.5).run(query="What does LLM.generate return?", documents=docs)
    by_id = {d.id: d.score for d in out["documents"]}
    assert [d.id for d in out["documents"]] == ["guide", "test", "definition", "example"]
    assert by_id["guide"] == docs[0].score and by_id["test"] == docs[1].score
    assert by_id["example"] == pytest.approx(docs[2].score * 0.5)


@pytest.mark.parametrize(
    "question",
    [
        "What arguments does `Trainer` accept?",
        "What parameters does the PenaltyLoss constructor take?",
        "What does Problem.forward return?",
        "What is the return type of make_layer?",
        "Which exception does load() raise on a missing file?",
        "What is the default value of lr in Trainer?",
        "Which attributes does a System hold?",
        "What happens if I pass nsteps=0 to System?",
        "Which keyword arguments does it take?",
        "What is the signature of ErrorMap?",
    ],
)
def test_questions_about_what_something_accepts_returns_raises_or_defaults_to_ask_an_interface(question):
    assert asks_interface(question)


@pytest.mark.parametrize(
    "question",
    ["How do I serve a model with audio input?", "Why is my loss NaN?", "Where are the tutorials?", ""],
)
def test_how_to_and_concept_questions_do_not(question):
    assert not asks_interface(question)


@pytest.mark.parametrize(
    "question",
    [
        "In the Node tutorial, how do I wrap a function that returns two outputs?",
        "Which arguments does the parameter-estimation example pass to the ODE?",
        "What does the notebook's training cell return?",
        "What do the demo scripts set as default batch size?",
    ],
)
def test_a_question_naming_a_usage_area_asks_about_that_usage_and_keeps_the_fused_order(question):
    assert not asks_interface(question)
    docs = _docs(("notebook", "examples/tutorials/part_3_node.ipynb"), ("definition", "src/pkg/system.py"))
    assert _ids(question, docs) == ["notebook", "definition"]


def test_for_example_only_introduces_an_example_of_the_questions_own():
    assert asks_interface("What arguments does `Node` accept, for example for a lambda?")


def test_a_factor_of_one_turns_the_rule_off_and_inputs_are_never_changed():
    docs = _docs(("example", "examples/a.py"), ("definition", "pkg/a.py"))
    scores = [d.score for d in docs]
    assert _ids("What does f return?", docs, factor=1.0) == ["example", "definition"]
    assert _ids("What does f return?", docs) == ["definition", "example"]
    assert [d.score for d in docs] == scores and [d.id for d in docs] == ["example", "definition"]


def test_a_factor_that_is_not_positive_is_refused_and_the_parameters_round_trip():
    with pytest.raises(ValueError, match="must be positive"):
        AskedInterfacePrior(usage_factor=0)
    data = component_to_dict(AskedInterfacePrior(usage_factor=0.7), "asked_interface")
    assert data["init_parameters"] == {"usage_factor": 0.7}
    again = component_from_dict(AskedInterfacePrior, data, "asked_interface")
    assert component_to_dict(again, "asked_interface") == data


def test_query_yaml_applies_the_rule_after_the_version_rule_and_before_the_bi_encoders_vote():
    data = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    edges = {(c["sender"], c["receiver"]) for c in data["connections"]}
    assert {
        ("asked_version.documents", "asked_interface.documents"),
        ("rewriter.query", "asked_interface.query"),
        ("asked_interface.documents", "bi_encoder.documents"),
        ("asked_interface.documents", "revote.fused"),
    } <= edges
