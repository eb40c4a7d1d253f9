"""The file-level rules of codeground/components/file_ranking/, one test per rule they state."""

import pytest
from haystack import Document

from codeground.components.file_ranking.coherence import FileCoherence
from codeground.components.file_ranking.named_definition import NamedDefinitionPrior
from codeground.components.file_ranking.path_words import PathWordPrior
from codeground.components.file_ranking.rank_scores import RankScores
from codeground.components.file_ranking.saturation import FileSaturation
from codeground.components.query_shape import is_symbol_query


def _doc(id_, path, score=None, symbol="", kind="api"):
    return Document(
        id=id_, content=id_, score=score, meta={"file_path": path, "symbol": symbol, "source_type": kind}
    )


def _ids(docs):
    return [d.id for d in docs]


# RankScores
def test_scores_come_from_the_order_and_the_unjudged_pool_follows_without_repeats():
    ranked = [_doc("a", "a.py", 0.99), _doc("b", "b.py", 0.01)]
    pool = [_doc("c", "c.py", 3.0), _doc("a", "a.py", 2.0), _doc("d", "d.py", 1.0), _doc("c", "c.py", 0.5)]
    out = RankScores(k=10).run(documents=ranked, rest=pool)["documents"]
    assert _ids(out) == ["a", "b", "c", "d"]
    assert [d.score for d in out] == [1 / 11, 1 / 12, 1 / 13, 1 / 14]
    assert ranked[0].score == 0.99  # copies


def test_a_negative_rank_constant_is_refused():
    with pytest.raises(ValueError):
        RankScores(k=-1)


# PathWordPrior
def test_a_file_named_by_the_question_s_words_comes_up_prefixes_included():
    docs = [
        _doc("doc", "docs/guide.md", 0.5, kind="docs"),
        _doc("cors", "middleware/cors.py", 0.3),
        _doc("dep", "fastapi/dependencies/utils.py", 0.3),
        _doc("other", "app/main.py", 0.45),
    ]
    out = _ids(PathWordPrior(boost=1.0).run(query="middleware stack and CORS", documents=docs)["documents"])
    assert out[0] == "cors"
    out = _ids(
        PathWordPrior(boost=1.0).run(query="How is a dependency resolved?", documents=docs)["documents"]
    )
    assert out[0] == "dep"


def test_grammar_words_and_a_symbol_query_move_nothing():
    docs = [_doc("a", "a.py", 0.5), _doc("how", "how/the.py", 0.4)]
    assert _ids(PathWordPrior().run(query="how does the", documents=docs)["documents"]) == ["a", "how"]
    docs = [_doc("a", "a.py", 0.5), _doc("r", "router.py", 0.4)]
    assert _ids(PathWordPrior().run(query="Router", documents=docs)["documents"]) == ["a", "r"]


# NamedDefinitionPrior
@pytest.mark.parametrize(
    "query",
    [
        "HTTPAdapter",
        "Flask",
        "serde::Deserializer",
        "Router.route",
        "_private",
        "camelCase",
        "Circle#area",
        "`Session`",
        "build()",
    ],
)
def test_one_identifier_is_a_symbol_query(query):
    assert is_symbol_query(query)


@pytest.mark.parametrize("query", ["session", "How does routing work?", "what is HTTP", ""])
def test_words_and_sentences_are_not_symbol_queries(query):
    assert not is_symbol_query(query)


def test_the_defining_record_in_the_file_named_after_the_symbol_comes_first():
    docs = [
        _doc("use", "gin/context.go", 0.5, "Context.Next"),
        _doc("doc", "docs/api.md", 0.49, "Router", "docs"),
        _doc("other", "gin/tree.go", 0.3, "Router"),
        _doc("def", "gin/router.go", 0.2, "Router"),
    ]
    out = _ids(NamedDefinitionPrior().run(query="Router", documents=docs)["documents"])
    assert out[:2] == ["def", "other"] and out.index("doc") > out.index("other")


def test_a_qualified_name_matches_the_member_and_a_sentence_moves_nothing():
    docs = [_doc("x", "a.rs", 0.5, "Other"), _doc("m", "de.rs", 0.1, "Deserializer::deserialize_any")]
    out = NamedDefinitionPrior().run(query="Deserializer::deserialize_any", documents=docs)["documents"]
    assert _ids(out)[0] == "m"
    docs = [_doc("x", "a.py", 0.5), _doc("s", "state.py", 0.4, "StateManager")]
    out = NamedDefinitionPrior().run(query="how does StateManager persist", documents=docs)["documents"]
    assert _ids(out) == ["x", "s"] and [d.score for d in out] == [0.5, 0.4]


# FileCoherence
def test_a_sentence_naming_code_keeps_the_record_order():
    docs = [_doc("x", "one.py", 0.50), _doc("a", "many.py", 0.45), _doc("b", "many.py", 0.40)]
    query = "What does `step` return in many?"
    assert _ids(FileCoherence(boost=0.4).run(documents=docs, query=query)["documents"]) == ["x", "a", "b"]
    docs = [_doc("a1", "a.py", 0.9), _doc("a2", "a.py", 0.8), _doc("b1", "b.py", 0.5)]
    assert _ids(
        FileSaturation(decay=0.5).run(documents=docs, query="default of max_len in a?")["documents"]
    ) == ["a1", "a2", "b1"]
    assert _ids(
        FileSaturation(decay=0.5).run(documents=docs, query="how are lengths capped?")["documents"]
    ) == ["a1", "b1", "a2"]


def test_a_search_phrase_naming_a_type_gets_the_file_rules_and_one_naming_a_member_does_not():
    docs = [_doc("a1", "oauth2.py", 0.9), _doc("a2", "oauth2.py", 0.8), _doc("b1", "models.py", 0.5)]
    spread = FileSaturation(decay=0.5)
    assert _ids(spread.run(documents=docs, query="security and OAuth2 authentication")["documents"]) == [
        "a1", "b1", "a2"
    ]
    assert _ids(spread.run(documents=docs, query="z.transform and z.pipe chaining")["documents"]) == [
        "a1", "a2", "b1"
    ]
    assert _ids(spread.run(documents=docs, query="the `refresh` flow of tokens")["documents"]) == [
        "a1", "a2", "b1"
    ]
    # the same type named in a question keeps the order
    assert _ids(spread.run(documents=docs, query="How does OAuth2 read the token?")["documents"]) == [
        "a1", "a2", "b1"
    ]


def test_a_file_with_several_strong_records_lifts_only_its_best_one():
    docs = [
        _doc("x", "one.py", 0.50),
        _doc("a", "many.py", 0.45),
        _doc("b", "many.py", 0.40),
        _doc("c", "many.py", 0.35),
    ]
    out = FileCoherence(boost=0.4).run(documents=docs)["documents"]
    assert _ids(out)[0] == "a" and {d.id: d.score for d in out}["b"] == 0.40


def test_for_one_identifier_only_the_records_that_write_it_are_a_file_s_evidence():
    docs = [
        Document(id="nb", content="no_kernel_call()", score=0.50, meta={"file_path": "nb.ipynb"}),
        *(
            Document(id=f"n{i}", content=f"class C{i}:", score=0.45, meta={"file_path": "nested.py"})
            for i in range(5)
        ),
    ]
    out = FileCoherence(boost=0.4).run(documents=docs, query="no_kernel_call")["documents"]
    assert _ids(out)[0] == "nb" and {d.id: d.score for d in out}["n0"] == 0.45
    spread = FileCoherence(boost=0.4).run(documents=docs, query="How are classes nested?")["documents"]
    assert _ids(spread)[0] == "n0"  # a sentence: every record is evidence


# FileSaturation
def test_each_further_record_of_a_file_counts_less_and_top_k_per_run_wins():
    docs = [
        _doc("a1", "a.py", 0.9),
        _doc("a2", "a.py", 0.8),
        _doc("a3", "a.py", 0.7),
        _doc("b1", "b.py", 0.3),
    ]
    sat = FileSaturation(decay=0.5, top_k=3)
    assert _ids(sat.run(documents=docs)["documents"]) == ["a1", "a2", "b1"]  # a2 0.4, b1 0.3, a3 0.175
    assert _ids(sat.run(documents=docs, top_k=4)["documents"]) == ["a1", "a2", "b1", "a3"]


def test_a_decay_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError):
        FileSaturation(decay=0)


def test_the_same_input_gives_the_same_order_every_time():
    docs = [_doc(str(i), f"{i % 3}.py", 0.5) for i in range(9)]
    runs = {tuple(_ids(FileSaturation(decay=0.5).run(documents=docs)["documents"])) for _ in range(5)}
    assert len(runs) == 1
