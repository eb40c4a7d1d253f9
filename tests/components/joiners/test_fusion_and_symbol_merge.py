"""Tests for hybrid fusion (stock DocumentJoiner RRF, as pipelines/query.yaml uses it) and SymbolHitMerger."""

from __future__ import annotations

import pytest
from haystack import Document, Pipeline, component
from haystack.components.joiners import DocumentJoiner
from haystack.core.serialization import component_from_dict, component_to_dict

from components.joiners.symbol_merge import SymbolHitMerger

K = 61  # haystack.utils.misc._reciprocal_rank_fusion: 60 from the paper + 1 for 0-based ranks


def _doc(name: str, score: float | None = None, path: str = "a.py") -> Document:
    return Document(id=f"{path}:{name}:1", content=f"def {name}(): ...", score=score,
                    meta={"file_path": path, "symbol": name, "source_type": "impl", "start_line": 1,
                          "header": f"File: {path} | Symbol: {name} | Type: impl"})


def _rrf(**init) -> DocumentJoiner:
    return DocumentJoiner(join_mode="reciprocal_rank_fusion", **init)


def _snapshot(docs: list[Document]) -> list[tuple]:
    return [(d.id, d.score, d.content, dict(d.meta)) for d in docs]


# ---------------------------------------------------------------- fusion math


def test_rrf_scores_match_the_formula_with_k_61_and_equal_weights():
    bm25 = [_doc("a", 12.0), _doc("b", 9.0), _doc("c", 1.0)]
    dense = [_doc("b", 0.8), _doc("d", 0.7)]
    fused = _rrf().run(documents=[bm25, dense])["documents"]
    # score = sum over lists of  w_list * K / (K + rank), rank 0-based, w = 1/2 each
    expected = {
        "a": 0.5 * K / (K + 0),
        "b": 0.5 * K / (K + 1) + 0.5 * K / (K + 0),
        "c": 0.5 * K / (K + 2),
        "d": 0.5 * K / (K + 1),
    }
    assert [d.meta["symbol"] for d in fused] == ["b", "a", "d", "c"]  # sorted by fused score
    assert {d.meta["symbol"]: d.score for d in fused} == pytest.approx(expected)


def test_rrf_weights_are_normalised_and_scale_each_lists_contribution():
    bm25 = [_doc("a"), _doc("b")]
    dense = [_doc("b"), _doc("c")]
    fused = _rrf(weights=[2, 1]).run(documents=[bm25, dense])["documents"]
    w_bm25, w_dense = 2 / 3, 1 / 3
    expected = {
        "a": w_bm25 * K / K,
        "b": w_bm25 * K / (K + 1) + w_dense * K / K,
        "c": w_dense * K / (K + 1),
    }
    assert {d.meta["symbol"]: d.score for d in fused} == pytest.approx(expected)
    assert [d.meta["symbol"] for d in fused] == ["b", "a", "c"]


def test_rrf_ignores_the_retrievers_own_scores():
    first = _rrf().run(documents=[[_doc("a", 100.0), _doc("b", 0.0)], [_doc("c", 0.5)]])["documents"]
    second = _rrf().run(documents=[[_doc("a", 0.01), _doc("b", 0.001)], [_doc("c", 99.0)]])["documents"]
    assert [(d.id, d.score) for d in first] == [(d.id, d.score) for d in second]


def test_fused_pool_is_capped_at_top_k_24():
    bm25 = [_doc(f"s{i}", path="bm25.py") for i in range(24)]
    dense = [_doc(f"d{i}", path="dense.md") for i in range(24)]
    fused = _rrf(top_k=24).run(documents=[bm25, dense])["documents"]
    assert len(fused) == 24
    # equal weights: each list's top 12 ranks survive the cut
    assert {d.id for d in fused} == {d.id for d in bm25[:12] + dense[:12]}


@component
class _FixedRetriever:
    def __init__(self, symbol: str) -> None:
        self.symbol = symbol

    @component.output_types(documents=list[Document])
    def run(self, query: str):
        return {"documents": [_doc(self.symbol, path=f"{self.symbol}.py")]}


def test_rrf_weights_follow_alphabetical_run_order_not_connection_order_so_yaml_documents_weight_order():
    pipe = Pipeline()
    pipe.add_component("fusion", _rrf(weights=[0.9, 0.1], top_k=24))
    pipe.add_component("dense", _FixedRetriever("dense_hit"))
    pipe.add_component("bm25", _FixedRetriever("bm25_hit"))
    pipe.connect("dense.documents", "fusion.documents")  # dense connected FIRST
    pipe.connect("bm25.documents", "fusion.documents")
    out = pipe.run({"dense": {"query": "q"}, "bm25": {"query": "q"}})
    scores = {d.meta["symbol"]: d.score for d in out["fusion"]["documents"]}
    # the first weight went to bm25, which runs first ("bm25" < "dense"), not to dense, connected first
    assert scores["bm25_hit"] == pytest.approx(0.9)
    assert scores["dense_hit"] == pytest.approx(0.1)


# ---------------------------------------------------------------- symbol hits after fusion


def test_symbol_hits_are_appended_after_fused_docs_never_displacing_them():
    fused = [_doc("a", 0.03), _doc("b", 0.02), _doc("c", 0.01)]
    hits = [_doc("Trainer.fit", path="trainer.py"), _doc("load", path="x.py")]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=hits)
    assert [d.id for d in out["documents"]] == [d.id for d in fused + hits]


def test_symbol_hit_already_fused_is_not_added_twice():
    fused = [_doc("a", 0.03), _doc("b", 0.02)]
    hits = [_doc("b"), _doc("z"), _doc("z")]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=hits)
    ids = [d.id for d in out["documents"]]
    assert ids == [fused[0].id, fused[1].id, hits[1].id]
    assert out["documents"][1].score == 0.02  # the fused copy stays, with its fusion score


def test_symbol_documents_are_passed_through_unchanged():
    hits = [_doc("b"), _doc("z")]
    out = SymbolHitMerger().run(documents=[_doc("b", 0.5)], symbol_documents=hits)
    assert [d.id for d in out["symbol_documents"]] == [d.id for d in hits]
    assert SymbolHitMerger().run(documents=[_doc("a")])["symbol_documents"] == []


def test_no_symbol_hits_leaves_the_fused_list_as_is():
    fused = [_doc("a", 0.03), _doc("b", 0.02)]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=None)
    assert [d.id for d in out["documents"]] == [d.id for d in fused]


def test_hybrid_merge_does_not_mutate_inputs():
    bm25 = [_doc("a", 12.0), _doc("b", 9.0)]
    dense = [_doc("b", 0.8), _doc("c", 0.7)]
    hits = [_doc("c", 1.0), _doc("Trainer.fit", path="trainer.py")]
    before = [_snapshot(bm25), _snapshot(dense), _snapshot(hits)]
    lists = [bm25, dense]
    fused = _rrf(top_k=24).run(documents=lists)["documents"]
    merged = SymbolHitMerger().run(documents=fused, symbol_documents=hits)
    assert [_snapshot(bm25), _snapshot(dense), _snapshot(hits)] == before
    assert [len(x) for x in lists] == [2, 2]
    assert merged["documents"] is not fused
    assert fused[0].score == pytest.approx(0.5 * K / (K + 1) + 0.5)  # the copies carry RRF scores


def test_symbol_merge_round_trips_through_serialization():
    data = component_to_dict(SymbolHitMerger(), "merge")
    assert data == {"type": "components.joiners.symbol_merge.SymbolHitMerger", "init_parameters": {}}
    assert isinstance(component_from_dict(SymbolHitMerger, data, "merge"), SymbolHitMerger)
