"""Tests for RelativeScoreFloor: drop reranked candidates below 2% of the best, keep at least 3."""

from __future__ import annotations

from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.rankers.score_floor import RelativeScoreFloor


def _docs(*scores: float) -> list[Document]:
    return [Document(id=f"a.py:f{i}:{i + 1}", content=f"def f{i}(): ...", score=s,
                     meta={"file_path": "a.py", "symbol": f"f{i}", "source_type": "impl",
                           "start_line": i + 1})
            for i, s in enumerate(scores)]


def _ids(docs: list[Document]) -> list[str]:
    return [d.id for d in docs]


def test_drops_candidates_below_two_percent_of_the_best():
    docs = _docs(1.0, 0.5, 0.3, 0.02, 0.0199, 0.01)
    kept = RelativeScoreFloor().run(documents=docs)["documents"]
    # floor = 1.0 * 0.02: exactly at the floor is kept, below it is dropped
    assert [d.score for d in kept] == [1.0, 0.5, 0.3, 0.02]


def test_keeps_at_least_three_even_when_they_are_below_the_floor():
    docs = _docs(0.95, 0.001, 0.0005, 0.0001)
    kept = RelativeScoreFloor(ratio=0.02, min_keep=3).run(documents=docs)["documents"]
    assert _ids(kept) == _ids(docs[:3])


def test_later_candidates_above_the_floor_survive_after_the_minimum():
    docs = _docs(0.8, 0.001, 0.001, 0.5)
    kept = RelativeScoreFloor().run(documents=docs)["documents"]
    assert _ids(kept) == _ids(docs)


def test_no_op_when_reranker_had_no_opinion_because_scores_are_fusion_scores():
    docs = _docs(0.03, 0.0003, 0.0002, 0.0001, 0.00001)
    out = RelativeScoreFloor().run(documents=docs, reranked=False)["documents"]
    assert _ids(out) == _ids(docs)
    assert [d.score for d in out] == [d.score for d in docs]


def test_empty_input_gives_empty_output():
    assert RelativeScoreFloor().run(documents=[])["documents"] == []
    assert RelativeScoreFloor().run(documents=[], reranked=False)["documents"] == []


def test_does_not_mutate_the_input_list():
    docs = _docs(0.9, 0.001, 0.001, 0.001, 0.001)
    before = [(d.id, d.score) for d in docs]
    RelativeScoreFloor().run(documents=docs)
    assert [(d.id, d.score) for d in docs] == before


def test_init_parameters_round_trip():
    floor = RelativeScoreFloor(ratio=0.05, min_keep=4)
    data = component_to_dict(floor, "floor")
    assert data["init_parameters"] == {"ratio": 0.05, "min_keep": 4}
    again = component_from_dict(RelativeScoreFloor, data, "floor")
    assert (again.ratio, again.min_keep) == (0.05, 4)
    assert component_to_dict(again, "floor") == data
