"""The prompt's excerpts: the first sources, each string escaped for its place, within the budget."""

import pytest
from haystack import Document

from codeground.components.grounding.excerpts import PromptExcerpts


def _doc(content, impl=""):
    meta = {"file_path": "pkg/a.py", "start_line": 1, "end_line": 9, "symbol": "f"}
    if impl:
        meta |= {"impl": impl, "impl_start_line": 3, "impl_end_line": 9}
    return Document(content=content, meta=meta)


def test_only_the_first_max_excerpts_sources_are_quoted():
    docs = [_doc(f"text {i}") for i in range(5)]
    assert [e["content"] for e in PromptExcerpts(max_excerpts=2).run(documents=docs)["excerpts"]] == [
        "text 0",
        "text 1",
    ]


def test_a_budget_keeps_the_whole_lines_that_fit_and_the_cited_lines_stay():
    text = "def f(a):\n    return a + 1\n\nprint(f(2))\n"
    (excerpt,) = PromptExcerpts(content_chars=30).run(documents=[_doc(text)])["excerpts"]
    assert excerpt["content"] == "def f(a):\n    return a + 1\n" and excerpt["lines"] == "1-9"
    (long,) = PromptExcerpts(content_chars=4).run(documents=[_doc("abcdefgh")])["excerpts"]
    assert long["content"] == "abcd"  # one long line: its start
    (whole,) = PromptExcerpts(content_chars=100).run(documents=[_doc(text)])["excerpts"]
    assert whole["content"] == text


def test_no_implementation_is_quoted_when_its_budget_is_zero():
    (excerpt,) = PromptExcerpts(impl_chars=0).run(documents=[_doc("doc", impl="body()")])["excerpts"]
    assert excerpt["impl"] == "" and excerpt["impl_lines"] == ""
    (kept,) = PromptExcerpts().run(documents=[_doc("doc", impl="body()")])["excerpts"]
    assert kept["impl"] == "body()" and kept["impl_lines"] == "3-9"


def test_the_documents_are_not_changed():
    doc = _doc("line one\nline two")
    PromptExcerpts(content_chars=9).run(documents=[doc])
    assert doc.content == "line one\nline two"


@pytest.mark.parametrize("kwargs", [{"max_excerpts": -1}, {"impl_chars": -1}, {"content_chars": 0}])
def test_a_negative_or_empty_budget_is_refused(kwargs):
    with pytest.raises(ValueError):
        PromptExcerpts(**kwargs)
