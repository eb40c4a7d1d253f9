"""Tests for SymbolReseater: symbol hits ranked too low move up to ``seat``; without it, missing hits
overwrite the lowest non-symbol entries."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.rankers.reseat import SymbolReseater


def _doc(name: str, score: float = 0.5) -> Document:
    return Document(
        id=f"a.py:{name}:1",
        content=f"def {name}(): ...",
        score=score,
        meta={"file_path": "a.py", "symbol": name, "source_type": "impl", "start_line": 1},
    )


def _docs(*names: str) -> list[Document]:
    return [_doc(n) for n in names]


def _names(docs: list[Document]) -> list[str]:
    return [d.meta["symbol"] for d in docs]


def test_demoted_symbol_hit_evicts_lowest_non_symbol_entry():
    out = SymbolReseater().run(documents=_docs("a", "b", "c", "d"), symbol_documents=_docs("s1"))
    assert _names(out["documents"]) == ["a", "b", "c", "s1"]


def test_four_symbol_hits_reseat_at_most_two_and_no_id_twice():
    docs = _docs("a", "s1", "b", "c", "d")
    out = SymbolReseater(max_reseat=2).run(documents=docs, symbol_documents=_docs("s1", "s2", "s3", "s4"))
    result = out["documents"]
    ids = [d.id for d in result]
    assert len(ids) == len(set(ids)) == 5
    assert set(_names(result)) == {"a", "s1", "b", "s2", "s3"}  # the first two missing hits, in lookup order
    assert "s4" not in _names(result)


def test_never_appends_list_length_unchanged():
    reseater = SymbolReseater()
    out = reseater.run(documents=_docs("a"), symbol_documents=_docs("s1", "s2"))["documents"]
    assert len(out) == 1 and _names(out) == ["s1"]
    assert reseater.run(documents=[], symbol_documents=_docs("s1"))["documents"] == []


def test_symbol_hits_already_present_are_not_moved():
    docs = _docs("a", "b", "c", "s1")
    out = SymbolReseater().run(documents=docs, symbol_documents=_docs("s1", "s2"))["documents"]
    assert _names(out)[3] == "s1"  # s1 keeps its seat, the next-lowest non-symbol entry is evicted
    assert _names(out) == ["a", "b", "s2", "s1"]


def test_present_symbol_hits_are_never_evicted_by_other_symbol_hits():
    docs = _docs("s1", "s2", "s3")
    out = SymbolReseater().run(documents=docs, symbol_documents=_docs("s1", "s2", "s3", "s4"))["documents"]
    assert _names(out) == ["s1", "s2", "s3"]


def test_nothing_missing_returns_the_list_unchanged():
    docs = _docs("a", "s1", "b")
    out = SymbolReseater().run(documents=docs, symbol_documents=_docs("s1"))["documents"]
    assert [d.id for d in out] == [d.id for d in docs]
    assert SymbolReseater().run(documents=docs)["documents"] == docs


def test_top_k_cut_happens_before_reseating():
    names = [f"d{i}" for i in range(11)] + ["s1"]  # s1 ranked 12th: below the cut, so it counts as demoted
    out = SymbolReseater(top_k=10).run(documents=_docs(*names), symbol_documents=_docs("s1"))["documents"]
    assert len(out) == 10
    assert _names(out) == [f"d{i}" for i in range(9)] + ["s1"]


def test_does_not_mutate_inputs():
    docs = _docs("a", "b", "c")
    symbols = _docs("s1")
    before = [d.id for d in docs]
    SymbolReseater().run(documents=docs, symbol_documents=symbols)
    assert [d.id for d in docs] == before and [d.id for d in symbols] == [symbols[0].id]


def test_reseated_hits_keep_the_order_symbol_lookup_found_them():
    out = SymbolReseater().run(documents=_docs("a", "b", "c", "d"), symbol_documents=_docs("s1", "s2"))
    assert _names(out["documents"]) == ["a", "b", "s1", "s2"]


def test_init_parameters_round_trip():
    reseater = SymbolReseater(max_reseat=3, top_k=10, seat=4)
    data = component_to_dict(reseater, "reseat")
    assert data["init_parameters"] == {"max_reseat": 3, "top_k": 10, "seat": 4}
    again = component_from_dict(SymbolReseater, data, "reseat")
    assert component_to_dict(again, "reseat") == data


def test_a_named_symbol_ranked_below_the_seat_moves_up_to_it_and_the_rest_move_down():
    docs = _docs("a", "b", "c", "d", "e", "s1", "f")
    out = SymbolReseater(seat=4).run(documents=docs, symbol_documents=_docs("s1"))["documents"]
    assert _names(out) == ["a", "b", "c", "s1", "d", "e", "f"]


def test_a_missing_symbol_hit_enters_at_the_seat_and_the_list_keeps_its_length():
    docs = _docs("a", "b", "c", "d", "e")
    out = SymbolReseater(seat=4).run(documents=docs, symbol_documents=_docs("s1", "s2", "s3"))["documents"]
    assert _names(out) == ["a", "b", "c", "s1", "s2"]  # max_reseat 2, in lookup order; d and e pushed out


def test_symbol_hits_above_the_seat_keep_their_places():
    docs = _docs("s1", "a", "b", "c", "d")
    out = SymbolReseater(seat=4).run(documents=docs, symbol_documents=_docs("s1", "s2"))["documents"]
    assert _names(out) == ["s1", "a", "b", "s2", "c"]


def test_the_seat_rule_respects_the_run_top_k_before_moving():
    names = [f"d{i}" for i in range(12)] + ["s1"]
    out = SymbolReseater(seat=4, top_k=8).run(documents=_docs(*names), symbol_documents=_docs("s1"), top_k=10)
    assert _names(out["documents"]) == ["d0", "d1", "d2", "s1"] + [f"d{i}" for i in range(3, 9)]


def test_on_a_list_shorter_than_the_seat_hits_take_its_last_places_and_no_id_appears_twice():
    out = SymbolReseater(seat=4).run(documents=_docs("a", "b"), symbol_documents=_docs("s1"))["documents"]
    assert _names(out) == ["a", "s1"]
    docs = _docs("s1", "s2", "x", "y")
    out = SymbolReseater(seat=4, max_reseat=3).run(documents=docs, symbol_documents=_docs("s1", "s2", "s3"))
    assert _names(out["documents"]) == ["s1", "s2", "x", "s3"]
    out = SymbolReseater(seat=4).run(documents=_docs("a"), symbol_documents=_docs("s1", "s2"))["documents"]
    assert _names(out) == ["s1"]
    assert SymbolReseater(seat=4).run(documents=[], symbol_documents=_docs("s1"))["documents"] == []


def test_the_seat_rule_does_not_mutate_inputs():
    docs = _docs("a", "b", "c", "d", "s1")
    before = [d.id for d in docs]
    SymbolReseater(seat=2).run(documents=docs, symbol_documents=_docs("s1"))
    assert [d.id for d in docs] == before


def test_a_seat_below_one_is_refused():
    with pytest.raises(ValueError, match="seat must be 1 or more"):
        SymbolReseater(seat=0)


def test_a_hit_already_in_the_list_moves_with_its_own_score_and_a_missing_one_comes_from_lookup():
    docs = [*_docs("a", "b", "c", "d"), _doc("s1", score=0.3)]
    lookup = [Document(id=d.id, content=d.content, meta=d.meta) for d in _docs("s1", "s2")]  # no scores
    out = SymbolReseater(seat=2).run(documents=docs, symbol_documents=lookup)["documents"]
    assert _names(out) == ["a", "s1", "s2", "b", "c"]
    assert out[1].score == 0.3 and out[2].score is None
