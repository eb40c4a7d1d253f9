"""A query's shape (codeground/components/query_shape.py): question, one identifier, or search phrase."""

import pytest

from codeground.components.query_shape import is_question, is_search_phrase, is_symbol_query


@pytest.mark.parametrize(
    "query",
    ["What does `get_num_new_matched_tokens` return?", "Why?", 'Is it "fit?"', "What is (x)?  \n"],
)
def test_a_query_ending_with_a_question_mark_is_a_question(query):
    assert is_question(query) and not is_search_phrase(query)


@pytest.mark.parametrize(
    "query", ["HTTPAdapter", "serde::de::Deserializer", "Circle#area", "_helper", "fit()", "`z.object`"]
)
def test_one_identifier_is_a_symbol_lookup_not_a_phrase(query):
    assert is_symbol_query(query) and not is_search_phrase(query)


@pytest.mark.parametrize(
    "query",
    [
        "JSON response rendering",
        "how does dependency injection work",
        "session",
        "security and OAuth2 authentication",
    ],
)
def test_anything_else_is_a_search_phrase(query):
    assert is_search_phrase(query) and not is_question(query)
