"""Tests for RankFusion: RRF with a chosen k, weights bound to named lists, and path priors."""

from __future__ import annotations

import copy

import pytest
from haystack import Document, Pipeline, component

from codeground.components.joiners.rank_fusion import RankFusion


def _doc(name: str, path: str = "pkg/a.py", score: float | None = None) -> Document:
    meta = {"file_path": path}
    return Document(id=f"{path}:{name}:1", content=f"def {name}(): ...", score=score, meta=meta)


def _ids(docs: list[Document]) -> list[str]:
    return [d.id.split(":")[1] for d in docs]


def test_scores_follow_the_formula_with_the_configured_k_and_weights():
    fusion = RankFusion(weights={"bm25": 2.0, "dense": 1.0}, k=10)
    out = fusion.run(bm25=[_doc("a"), _doc("b")], dense=[_doc("b"), _doc("c")])["documents"]
    scores = {d.id.split(":")[1]: d.score for d in out}
    assert scores == pytest.approx({"a": 2 / 11, "b": 2 / 12 + 1 / 11, "c": 1 / 12})
    assert _ids(out) == ["b", "a", "c"]


def test_weights_bind_to_the_named_list_whatever_order_the_retrievers_run_in():
    # the stock joiner applies weights by run order (alphabetical names); here the name decides
    bm25, dense = [_doc("lexical")], [_doc("semantic")]
    heavy_bm25 = RankFusion(weights={"dense": 1.0, "bm25": 4.0}, k=60)
    heavy_dense = RankFusion(weights={"bm25": 1.0, "dense": 4.0}, k=60)
    assert _ids(heavy_bm25.run(dense=dense, bm25=bm25)["documents"])[0] == "lexical"
    assert _ids(heavy_dense.run(dense=dense, bm25=bm25)["documents"])[0] == "semantic"


def test_small_k_lets_the_top_of_the_heavier_list_win():
    bm25 = [_doc("top"), _doc("x1"), _doc("x2"), _doc("x3")]
    dense = [_doc("d0"), _doc("d1"), _doc("d2"), _doc("top")]  # "top" is also last in dense
    both = {"bm25": bm25, "dense": [_doc("x3"), _doc("x2"), *dense]}
    small = RankFusion(weights={"bm25": 2.0, "dense": 1.0}, k=1).run(**both)["documents"]
    assert _ids(small)[0] == "top"


def test_path_priors_demote_matching_files_first_match_wins():
    fusion = RankFusion(
        weights={"bm25": 1.0}, k=10, path_priors={"tests/*": 0.5, "tests/keep/*": 2.0, "benchmarks/*": 0.7}
    )
    docs = [_doc("t", "tests/test_a.py"), _doc("lib", "pkg/lib.py"), _doc("k", "tests/keep/x.py")]
    out = fusion.run(bm25=docs)["documents"]
    assert _ids(out) == ["lib", "t", "k"]  # tests/keep/x.py matched "tests/*" first
    assert out[1].score == pytest.approx(0.5 / 11)


def test_duplicates_are_returned_once_with_their_first_content_and_ties_keep_first_appearance():
    first = _doc("a")
    other = Document(id=first.id, content="another copy", meta={"file_path": "pkg/a.py"})
    out = RankFusion(weights={"bm25": 1.0, "dense": 1.0}, k=10).run(
        bm25=[first, _doc("b")], dense=[_doc("b"), other]
    )["documents"]
    assert sorted(_ids(out)) == ["a", "b"] and len(out) == 2
    assert next(d for d in out if d.id == first.id).content == first.content
    tie = RankFusion(weights={"bm25": 1.0, "dense": 1.0}, k=10).run(bm25=[_doc("x")], dense=[_doc("y")])
    assert _ids(tie["documents"]) == ["x", "y"]


def test_top_k_cuts_and_empty_or_missing_lists_are_fine():
    fusion = RankFusion(weights={"bm25": 1.0, "dense": 1.0}, k=10, top_k=2)
    assert len(fusion.run(bm25=[_doc(c) for c in "abc"], dense=[])["documents"]) == 2
    assert fusion.run(bm25=None, dense=None)["documents"] == []


def test_inputs_are_never_changed():
    bm25 = [_doc("a", score=12.5), _doc("b", score=3.0)]
    before = copy.deepcopy(bm25)
    RankFusion(weights={"bm25": 1.0}, k=10).run(bm25=bm25)
    assert bm25 == before


@pytest.mark.parametrize(
    "init, message",
    [
        ({"weights": {}}, "at least one"),
        ({"weights": {"bm25": 0.0}}, "positive"),
        ({"weights": {"bm25": 1.0}, "k": 0}, "k must be"),
        ({"weights": {"bm25": 1.0}, "path_priors": {"tests/*": -1}}, "priors must be positive"),
    ],
)
def test_bad_settings_are_refused_at_construction(init, message):
    with pytest.raises(ValueError, match=message):
        RankFusion(**init)


def test_a_list_without_a_weight_is_an_error_not_silently_dropped():
    with pytest.raises(ValueError, match="no weight"):
        RankFusion(weights={"bm25": 1.0}).run(bm25=[], dense=[_doc("a")])


@component
class _Fixed:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict:
        return {"documents": [_doc(n) for n in self.names]}


def test_sockets_are_named_after_the_weights_and_survive_a_yaml_round_trip():
    pipe = Pipeline()
    pipe.add_component("bm25", _Fixed(["a", "b"]))
    pipe.add_component("dense", _Fixed(["b", "c"]))
    pipe.add_component("fusion", RankFusion(weights={"bm25": 2.0, "dense": 1.0}, k=10, top_k=3))
    pipe.connect("bm25.documents", "fusion.bm25")
    pipe.connect("dense.documents", "fusion.dense")
    data = pipe.to_dict()
    assert data["components"]["fusion"]["init_parameters"] == {
        "weights": {"bm25": 2.0, "dense": 1.0}, "k": 10, "top_k": 3, "path_priors": {},
        "phrase_weights": None, "phrase_k": None,
    }
    fused = pipe.run({"bm25": {"query": "q"}, "dense": {"query": "q"}})["fusion"]["documents"]
    rebuilt = RankFusion(**data["components"]["fusion"]["init_parameters"])
    direct = rebuilt.run(bm25=[_doc("a"), _doc("b")], dense=[_doc("b"), _doc("c")])["documents"]
    assert _ids(fused) == _ids(direct)


def _blend() -> RankFusion:
    return RankFusion(weights={"bm25": 16.0, "dense": 1.0}, k=10,
                      phrase_weights={"bm25": 1.0, "dense": 1.0}, phrase_k=60)


def test_a_question_keeps_the_bm25_led_blend():
    # BM25's first outvotes dense's first: 16/11 against 1/11 + 16/12
    lists = {"bm25": [_doc("a"), _doc("b")], "dense": [_doc("b"), _doc("c")]}
    fused = _blend().run(query="What does load return?", **lists)["documents"]
    assert _ids(fused) == ["a", "b", "c"]


def test_a_search_phrase_gives_the_dense_list_an_equal_say():
    # 1 : 1 over k 60: the record both lists hold wins, and dense's only record ties with BM25's
    lists = {"bm25": [_doc("a"), _doc("b")], "dense": [_doc("b"), _doc("c")]}
    fused = _blend().run(query="JSON response rendering", **lists)["documents"]
    assert _ids(fused) == ["b", "a", "c"]
    assert fused[1].score == pytest.approx(1 / 61) and fused[2].score == pytest.approx(1 / 62)


def test_without_a_query_the_weights_hold():
    lists = {"bm25": [_doc("a"), _doc("b")], "dense": [_doc("b"), _doc("c")]}
    assert _ids(_blend().run(**lists)["documents"]) == ["a", "b", "c"]


def test_without_a_phrase_blend_every_query_gets_the_weights():
    plain = RankFusion(weights={"bm25": 16.0, "dense": 1.0}, k=10)
    lists = {"bm25": [_doc("a"), _doc("b")], "dense": [_doc("b"), _doc("c")]}
    assert _ids(plain.run(query="JSON rendering", **lists)["documents"]) == ["a", "b", "c"]


def test_a_phrase_blend_must_name_the_same_lists():
    with pytest.raises(ValueError, match="same lists"):
        RankFusion(weights={"bm25": 1.0, "dense": 1.0}, phrase_weights={"bm25": 1.0})
    with pytest.raises(ValueError, match="phrase_k"):
        RankFusion(weights={"bm25": 1.0}, phrase_k=0)
