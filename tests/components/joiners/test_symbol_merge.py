"""Tests for SymbolHitMerger: exact-symbol hits join the pool after fusion (RankFusion has its own file)."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.joiners.rank_fusion import RankFusion
from codeground.components.joiners.symbol_merge import SymbolHitMerger


def _doc(name: str, score: float | None = None, path: str = "a.py") -> Document:
    return Document(
        id=f"{path}:{name}:1",
        content=f"def {name}(): ...",
        score=score,
        meta={
            "file_path": path,
            "symbol": name,
            "source_type": "impl",
            "start_line": 1,
            "header": f"File: {path} | Symbol: {name} | Type: impl",
        },
    )


def _snapshot(docs: list[Document]) -> list[tuple]:
    return [(d.id, d.score, d.content, dict(d.meta)) for d in docs]


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
    fused = RankFusion(weights={"bm25": 4.0, "dense": 1.0}, k=10, top_k=24).run(bm25=bm25, dense=dense)
    merged = SymbolHitMerger().run(documents=fused["documents"], symbol_documents=hits)
    assert [_snapshot(bm25), _snapshot(dense), _snapshot(hits)] == before
    assert merged["documents"] is not fused["documents"]
    assert fused["documents"][0].score == pytest.approx(4 / 12 + 1 / 11)  # the copies carry RRF scores


def test_symbol_merge_round_trips_through_serialization():
    data = component_to_dict(SymbolHitMerger(), "merge")
    kind = "codeground.components.joiners.symbol_merge.SymbolHitMerger"
    assert data == {"type": kind, "init_parameters": {}}
    assert isinstance(component_from_dict(SymbolHitMerger, data, "merge"), SymbolHitMerger)


def _named(i, symbol, score=None):
    return Document(id=i, content=i, meta={"symbol": symbol}, score=score)


def test_a_named_symbols_records_lead_in_fusions_order_and_the_scores_still_read_best_first():
    fused = [_named("x", "X.other", 0.9), _named("body", "T.fit", 0.5), _named("y", "Y", 0.4)]
    named = [_named("api", "T.fit")]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=named, named_documents=named)["documents"]
    assert [d.id for d in out] == ["body", "api", "x", "y"]
    scores = [d.score for d in out]
    assert scores == sorted(scores, reverse=True) and scores[0] == 0.9
    assert fused[1].score == 0.5 and named[0].score is None  # inputs are not changed


def test_without_named_symbols_the_hits_are_appended_as_before():
    fused = [_named("x", "X", 0.9)]
    out = SymbolHitMerger().run(documents=fused, symbol_documents=[_named("s", "S")])["documents"]
    assert [d.id for d in out] == ["x", "s"]
