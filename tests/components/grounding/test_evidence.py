"""AnswerEvidence: whether the retrieved excerpts look like they answer, from retrieval alone."""

from __future__ import annotations

import pytest
from haystack import Document

from codeground.components.grounding.evidence import (
    REFUSAL,
    AnswerEvidence,
    evidence,
    key_terms,
    named_identifiers,
)
from codeground.components.notices import NO_ANSWER, kind_of

DOCS = [
    Document(
        id="a",
        content="def fit(self, data, epochs=1):\n    '''Train the model on data.'''",
        meta={"header": "File: pkg/trainer.py | Symbol: Trainer.fit | Type: api"},
    ),
    Document(
        id="b", content="## Training\nCall fit with your data loader.", meta={"header": "File: docs/guide.md"}
    ),
]


def test_key_terms_drop_stop_and_question_words_and_names_keep_dotted_paths_whole():
    assert key_terms("How do I train the model with more epochs?") == {"train", "model", "epochs"}
    assert named_identifiers("Does `Trainer.fit` call Vec::with_capacity?") == [
        "Vec.with_capacity",
        "Trainer.fit",
    ]


def test_the_decision_on_fixed_excerpts_is_deterministic_and_follows_the_two_lines():
    judge = AnswerEvidence(caution_below=0.5, refuse_below=0.2)
    answered = judge.run(query="How do I train a model on my data with `Trainer.fit`?", documents=DOCS)
    assert answered["verdict"] == "answer" and answered["refusal"] == "" and answered["notices"] == []
    invented = judge.run(query="How do I use `Trainer.fly_to_moon`?", documents=DOCS)
    assert invented["verdict"] == "refuse" and invented["refusal"] == REFUSAL
    assert [kind_of(n) for n in invented["notices"]] == [NO_ANSWER] and "Trainer.fly_to_moon" in invented[
        "notices"
    ][0]
    partial = judge.run(query="How do I train a model on a GPU cluster with Kubernetes?", documents=DOCS)
    assert partial["verdict"] == "caution" and partial["note"].startswith(
        "Note: these excerpts may not answer"
    )
    assert all(
        judge.run(query="How do I use `Trainer.fly_to_moon`?", documents=DOCS) == invented for _ in range(3)
    )


def test_no_documents_is_left_to_the_generator_and_inputs_are_not_mutated():
    judge = AnswerEvidence()
    assert judge.run(query="anything at all", documents=[])["verdict"] == "answer"
    before = [d.to_dict() for d in DOCS]
    judge.run(query="How do I use `Trainer.fly_to_moon`?", documents=DOCS)
    assert [d.to_dict() for d in DOCS] == before


def test_score_is_term_share_times_name_share():
    found = evidence("How does `Trainer.fit` train with epochs?", DOCS, top_n=1)
    assert found["names_found"] == ["Trainer.fit"] and set(found["terms_found"]) >= {
        "trainer",
        "fit",
        "epochs",
    }
    assert found["score"] == round(len(found["terms_found"]) / len(found["terms"]), 4)


@pytest.mark.parametrize("caution, refuse, top_n", [(0.3, 0.5, 3), (1.5, 0.2, 3), (0.5, 0.2, 0)])
def test_bad_settings_are_refused(caution, refuse, top_n):
    with pytest.raises(ValueError):
        AnswerEvidence(caution_below=caution, refuse_below=refuse, top_n=top_n)
