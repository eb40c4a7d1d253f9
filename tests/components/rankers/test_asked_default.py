"""Tests for AskedDefaultPrior: a question asking a name's default puts the records giving it a value
first among the fused candidates; every other question and record keeps its place."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.components.rankers.asked_default import AskedDefaultPrior, asked_names


def _docs(*pairs: tuple[str, str]) -> list[Document]:
    return [Document(id=i, content=c, score=2.0 - n * 0.1) for n, (i, c) in enumerate(pairs)]


def _ids(question: str, docs: list[Document], boost: float = 1.5) -> list[str]:
    return [d.id for d in AskedDefaultPrior(boost=boost).run(query=question, documents=docs)["documents"]]


def test_a_default_question_puts_the_record_that_gives_the_name_a_value_first():
    docs = _docs(
        ("caller", "out = self.run(x)\nif self.pp_locks is None:\n    return out"),
        ("other", "def execute(self):\n    return self.pp_locks[0]"),
        ("init", "def _init_executor(self):\n    self.pp_locks = None"),
    )
    assert _ids("What is the default value of pp_locks in RayDistributedExecutor?", docs) == [
        "init",
        "caller",
        "other",
    ]


@pytest.mark.parametrize(
    "content",
    [
        "def forward(self, x, kv_states: Optional[torch.Tensor] = None):",
        "def forward(self, x, kv_states=None):",
        '"KV_STATES": lambda: int(os.getenv("KV_STATES", "10000")),',
        'value = getattr(param, "kv_states", False)',
        'defaults = {"kv_states": 4}',
    ],
)
def test_signature_defaults_assignments_and_lookups_with_a_default_all_count(content):
    docs = _docs(("user", "y = model(kv_states)  # kv_states passed on"), ("giver", content))
    question = "What is the default of kv_states (or KV_STATES)?"
    assert _ids(question, docs) == ["giver", "user"]


@pytest.mark.parametrize(
    "content",
    ["if kv_states == 2: pass", "return x.kv_states", "my_kv_states = 3", "kv_states_total = 1"],
)
def test_a_record_that_only_uses_the_name_or_a_longer_one_keeps_its_place(content):
    docs = _docs(("first", "unrelated text"), ("user", content))
    assert _ids("What is the default value of kv_states?", docs) == ["first", "user"]


def test_a_question_not_asking_for_a_default_changes_nothing():
    docs = _docs(("caller", "x = run()"), ("init", "self.pp_locks = None"))
    assert _ids("Where is pp_locks set?", docs) == ["caller", "init"]
    assert asked_names("Where is pp_locks set?") == []
    assert asked_names("What is the default timeout?") == []  # no name written: nothing to look for


def test_the_names_asked_about_are_the_code_words_and_backticked_words_but_not_dotted_owners():
    names = asked_names(
        "What are the default values for `alpha` and FP8_MIN in `Layer.forward`'s pin_memory?"
    )
    assert "alpha" in names and "FP8_MIN" in names and "pin_memory" in names
    assert "Layer.forward" not in names


def test_a_boost_of_one_turns_the_rule_off_and_inputs_are_never_changed():
    docs = _docs(("caller", "x = run()"), ("init", "self.pp_locks = None"))
    scores = [d.score for d in docs]
    assert _ids("What is the default of pp_locks?", docs, boost=1.0) == ["caller", "init"]
    assert _ids("What is the default of pp_locks?", docs) == ["init", "caller"]
    assert [d.score for d in docs] == scores and [d.id for d in docs] == ["caller", "init"]


def test_a_boost_that_is_not_positive_is_refused_and_the_parameters_round_trip():
    with pytest.raises(ValueError, match="boost must be positive"):
        AskedDefaultPrior(boost=0)
    data = component_to_dict(AskedDefaultPrior(boost=2.0), "asked_default")
    assert data["init_parameters"] == {"boost": 2.0}
    again = component_from_dict(AskedDefaultPrior, data, "asked_default")
    assert component_to_dict(again, "asked_default") == data


def test_query_yaml_applies_the_rule_between_fusion_and_the_symbol_merge():
    data = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    edges = {(c["sender"], c["receiver"]) for c in data["connections"]}
    assert {
        ("fusion.documents", "asked_default.documents"),
        ("rewriter.query", "asked_default.query"),
        ("asked_default.documents", "asked_version.documents"),  # the version rule, then the vote
    } <= edges
    assert ("fusion.documents", "merge.documents") not in edges
