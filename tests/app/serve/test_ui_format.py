"""How the chat renders sources and notices (pure strings; no Gradio, no models)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from codeground.app.serve.ui_format import (
    EMPTY_INDEX,
    NO_SOURCES,
    fenced,
    format_error,
    format_notices,
    format_partial,
    format_source,
    format_sources,
    format_turn,
    language_for,
    line_range,
    mark_unknown,
    notice_marker,
    source_label,
)


def doc(path: str, symbol: str | None, start: int, end: int, content: str, **meta):
    return SimpleNamespace(
        content=content,
        meta={
            "file_path": path,
            "symbol": symbol,
            "start_line": start,
            "end_line": end,
            "source_type": meta.pop("source_type", "impl"),
            **meta,
        },
    )


TRAINER = doc("pkg/trainer.py", "Trainer.fit", 33, 35, "def fit(self, data):\n    return self.step(data)\n")
GUIDE = doc("docs/guide.md", "Guide > Training", 1, 12, "# Training\nCall `fit`.\n", source_type="doc")


def test_sources_are_listed_in_retrieval_order():
    out = format_sources([GUIDE, TRAINER])
    assert out.index("docs/guide.md:1-12") < out.index("pkg/trainer.py:33-35")
    assert out.startswith("**Sources** (2)")
    assert "1. <code>docs/guide.md:1-12</code>" in out and "2. <code>pkg/trainer.py:33-35</code>" in out


def test_each_source_is_expandable_with_path_lines_symbol_and_excerpt():
    out = format_source(TRAINER, 1)
    assert out.startswith('<details class="cg-source"><summary>') and out.endswith("</details>")
    summary = re.search(r"<summary>(.*?)</summary>", out).group(1)
    assert "pkg/trainer.py:33-35" in summary and "Trainer.fit" in summary and "(impl)" in summary
    assert "```python\ndef fit(self, data):\n    return self.step(data)\n```" in out


def test_excerpt_is_a_fenced_block_separated_by_blank_lines_so_markdown_renders_it():
    out = format_source(GUIDE, 1)
    assert "</summary>\n\n```markdown\n" in out and "\n```\n\n</details>" in out


def test_sources_are_collapsed_by_default():
    assert "<details open" not in format_sources([TRAINER, GUIDE])


def test_paths_and_symbols_are_html_escaped():
    nasty = doc("a/<b>&c.py", "f<script>", 1, 2, "x = 1")
    summary = re.search(r"<summary>(.*?)</summary>", format_source(nasty, 1)).group(1)
    assert "<b>" not in summary and "<script>" not in summary
    assert "a/&lt;b&gt;&amp;c.py" in summary and "f&lt;script&gt;" in summary


def test_excerpt_markup_stays_inside_its_code_fence():
    code = "html = '</details><script>alert(1)</script>'\n```\nnot = 'the end of the fence'\n"
    out = format_source(doc("pkg/x.py", "html", 1, 3, code), 1)
    body = out.split("</summary>\n\n", 1)[1]
    fence = re.match(r"(`{3,})python\n", body).group(1)
    assert len(fence) > 3  # longer than the triple backtick inside the excerpt
    inside = body[len(fence) + len("python\n") :].split("\n" + fence + "\n", 1)[0]
    assert inside == code.rstrip("\n")


def test_fence_is_longer_than_any_backtick_run():
    assert fenced("plain", "text") == "```text\nplain\n```"
    assert fenced("a ```` b", "text").startswith("`````text\n")


def test_documented_symbol_shows_its_implementation_in_a_nested_expandable():
    api = doc(
        "pkg/trainer.py",
        "Trainer.fit",
        33,
        40,
        'def fit(self, data):\n    """Train."""',
        source_type="api",
        impl="def fit(self, data):\n    return 1\n",
    )
    out = format_source(api, 1)
    assert out.count("<details") == 2 and "<summary>implementation</summary>" in out
    assert "    return 1" in out


def test_long_implementation_is_capped():
    api = doc("pkg/big.py", "big", 1, 900, "def big(): ...", source_type="api", impl="x = 1\n" * 2000)
    assert len(format_source(api, 1)) < 2600


def test_line_ranges():
    assert line_range(12, 30) == "12-30"
    assert line_range(7, 7) == "7"
    assert line_range(None, None) == ""
    assert source_label({"file_path": "NOTES.txt", "start_line": 1, "end_line": 3}) == "NOTES.txt:1-3"
    assert source_label(TRAINER.meta) == "pkg/trainer.py:33-35 — Trainer.fit"


def test_language_comes_from_the_file_extension():
    assert language_for("pkg/trainer.py") == "python"
    assert language_for("notebooks/tour.ipynb") == "python"
    assert language_for("docs/guide.md") == "markdown"
    assert language_for("docs/concepts.rst") == "rst"
    assert language_for("config/x.YAML") == "yaml"
    assert language_for("Dockerfile") == "docker"
    assert language_for("NOTES.txt") == "text"
    assert language_for("weird.xyz") == "text"


def test_no_sources_says_the_repository_has_nothing_on_this():
    assert format_sources([]) == NO_SOURCES
    assert "nothing on this" in NO_SOURCES


def test_empty_index_says_how_to_build_one():
    assert format_sources([], empty_index=True) == EMPTY_INDEX
    assert "codeground index" in EMPTY_INDEX


def test_rewrite_notice_is_rendered_as_searched_for():
    out = format_notices(["searched for: What arguments does Trainer.fit take?"])
    assert out == "> → searched for: What arguments does Trainer.fit take?"


def test_question_searched_as_typed_is_rendered():
    out = format_notices(["question searched as typed: the rewrite model failed (timeout)"])
    assert out.startswith("> → question searched as typed:")


def test_reranker_fallback_and_llm_down_are_warnings_with_their_fix_kept():
    notices = [
        "reranking unavailable: model 'cross-encoder/ms-marco-MiniLM-L-6-v2' not found; fused order kept",
        "cannot reach the LLM server at http://localhost:11434: start it with `ollama serve`",
        "model 'qwen2.5-coder:7b' is not available on the server: run `ollama pull qwen2.5-coder:7b`",
    ]
    out = format_notices(notices)
    lines = [ln for ln in out.split("\n") if ln.strip() != ">"]
    assert len(lines) == 3 and all(ln.startswith("> ⚠ ") for ln in lines)
    assert "`ollama serve`" in out and "`ollama pull qwen2.5-coder:7b`" in out


def test_notices_keep_their_order_and_are_separate_paragraphs():
    out = format_notices(["searched for: a", "reranking unavailable: b"])
    assert out == "> → searched for: a\n>\n> ⚠ reranking unavailable: b"


def test_notice_text_is_html_escaped_and_on_one_line():
    out = format_notices(["searched for: <img src=x onerror=alert(1)>\nsecond line"])
    assert "<img" not in out and "&lt;img" in out and "\n" not in out


def test_no_notices_render_nothing():
    assert format_notices([]) == ""
    assert format_notices(["", "  "]) == ""


def test_unknown_notice_gets_an_info_marker():
    assert notice_marker("something else happened") == "ℹ"
    assert notice_marker("stale index: rebuild") == "⚠"


def test_error_is_one_visible_line():
    out = format_error("stale index: the manifest lists 3 records\nbut the store holds 2")
    assert out.startswith("> ✖ **stale index") and "\n" not in out


def test_turn_puts_answer_then_notices_then_sources_then_footer():
    out = format_turn(
        "It trains.", notices=["searched for: x"], documents=[TRAINER], pipeline="query.yaml", seconds=1.234
    )
    assert (
        out.index("It trains.")
        < out.index("searched for: x")
        < out.index("**Sources**")
        < out.index("query.yaml")
    )
    assert "1.2 s" in out


def test_turn_without_an_answer_still_shows_sources_and_the_fix():
    out = format_turn(
        None, notices=["cannot reach the LLM server: start it with `ollama serve`"], documents=[TRAINER]
    )
    assert "No answer was generated" in out and "pkg/trainer.py:33-35" in out and "`ollama serve`" in out


def test_turn_with_nothing_found_says_so():
    out = format_turn("The repository does not cover this.", documents=[])
    assert NO_SOURCES in out


def test_partial_answer_shows_a_cursor_and_a_status_before_the_first_token():
    assert format_partial("Call `fit`") == "Call `fit` ▌"
    assert format_partial("") == "_searching the repository…_"
    assert format_partial("", status="loading") == "_loading_"


# -- identifiers the repository does not have, marked inside the answer -----------------------------
MARK = '<mark class="cg-unknown" title="not found in this repository">⚠ '


def rendered(markdown: str) -> str:
    """CommonMark HTML (markdown-it, as rich uses it): what a Markdown view makes of the text."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(markdown)


def marked_names(html_text: str) -> list[str]:
    import html as html_module

    return [html_module.unescape(m) for m in re.findall(r'class="cg-unknown"[^>]*>⚠ (.*?)</mark>', html_text)]


def test_unknown_identifier_is_marked_in_prose():
    out = mark_unknown("Then call Trainer.fit_fast on the data.", ["Trainer.fit_fast"])
    assert out == f"Then call {MARK}Trainer.fit&#95;fast</mark> on the data."
    assert marked_names(rendered(out)) == ["Trainer.fit_fast"]


def test_only_whole_identifiers_are_marked():
    answer = "fit_fast is invented; refit_fast, fit_fast_more and Trainer.fit_fastest are other names."
    out = rendered(mark_unknown(answer, ["fit_fast"]))
    assert marked_names(out) == ["fit_fast"]
    assert "refit_fast, fit_fast_more and Trainer.fit_fastest" in out


def test_grounded_and_known_names_are_not_marked():
    answer = "Use `Trainer.fit(data)`, not `Trainer.fit_fast(data)`; `Trainer` is in pkg/trainer.py."
    out = rendered(mark_unknown(answer, ["Trainer.fit_fast"]))
    assert marked_names(out) == ["Trainer.fit_fast"]
    assert "<code>Trainer.fit(data)</code>" in out and "<code>Trainer</code>" in out


def test_every_occurrence_is_marked_longest_name_first():
    answer = "`Trainer.fit_fast(data)` is not `fit_fast`; Trainer.fit_fast again."
    assert marked_names(rendered(mark_unknown(answer, ["fit_fast", "Trainer.fit_fast"]))) == [
        "Trainer.fit_fast",
        "fit_fast",
        "Trainer.fit_fast",
    ]


def test_unknown_inside_inline_code_is_marked_inside_a_code_element():
    answer = "Call `Trainer(model, trust_remote=True).fit(data)` once."
    out = rendered(mark_unknown(answer, ["trust_remote"]))
    assert marked_names(out) == ["trust_remote"]
    code = re.search(r"<code>(.*?)</code>", out).group(1)
    assert code.startswith("Trainer(model, <mark") and code.endswith("=True).fit(data)")


def test_markdown_inside_marked_inline_code_stays_literal():
    out = rendered(mark_unknown("Try `fast_fit(*args, **kw)` or `x_y` <b>", ["fast_fit"]))
    assert "(*args, **kw)" in out and "<em>" not in out and "<strong>" not in out
    assert marked_names(out) == ["fast_fit"]


def test_unknown_inside_a_fence_is_marked_and_the_fence_stays_one_block():
    answer = (
        "Like this:\n\n```python\nfrom pkg import Trainer\n\nt = Trainer()\n"
        "t.fit_fast(data)  # <b>*x*</b>\n```\n"
        "Then `Trainer.fit` runs.\n\n```python\nt.fit(data)\n```"
    )
    out_md = mark_unknown(answer, ["fit_fast"])
    out = rendered(out_md)
    assert marked_names(out) == ["fit_fast"]
    assert out.count("<pre") == 2 and "```" not in out  # no fence left open or broken
    marked_block = out[out.index('<pre class="cg-code">') : out.index("</pre>")]
    assert "from pkg import Trainer\n\nt = Trainer()" in marked_block  # blank line kept inside the block
    assert "# &lt;b&gt;*x*&lt;/b&gt;" in marked_block  # code is escaped, not markup
    assert 'class="language-python"' in marked_block
    assert "<p>Then <code>Trainer.fit</code> runs.</p>" in out
    assert out_md.endswith("```python\nt.fit(data)\n```")  # a fence without unknown names is untouched


def test_fences_and_inline_code_without_unknown_names_are_left_exactly_as_written():
    answer = "```python\nt.fit(data)\n```\n\nText `Trainer.fit` here.\n\n~~~\nraw fit_fast?\n~~~\n"
    out = mark_unknown(answer, ["fit_fast"])
    assert out.startswith("```python\nt.fit(data)\n```\n\nText `Trainer.fit` here.\n\n")
    assert out.endswith('<pre class="cg-code"><code>raw ' + MARK + "fit&#95;fast</mark>?</code></pre>\n")


def test_unclosed_fence_still_runs_to_the_end():
    out = rendered(mark_unknown("Code:\n```python\nt.fit_fast(data)\nmore()\n", ["fit_fast"]))
    assert marked_names(out) == ["fit_fast"] and "more()</code></pre>" in out


def test_a_plain_english_word_is_not_marked_in_prose():
    answer = "`fit` is not here. This will fit in memory; call fit(data) or pass fit=True."
    out = rendered(mark_unknown(answer, ["fit"]))
    assert marked_names(out) == ["fit", "fit", "fit"]
    assert "This will fit in memory" in out


def test_urls_paths_and_citations_are_not_marked():
    answer = "See https://x.org/fit_fast, docs/fit_fast.md:1-3 and a@fit_fast.com; fit_fast is invented."
    out = mark_unknown(answer, ["fit_fast"])
    assert out.count("<mark") == 1 and "https://x.org/fit_fast," in out and "docs/fit_fast.md:1-3" in out


def test_no_unknown_names_leave_the_answer_unchanged():
    answer = "Call `Trainer.fit`.\n```python\nt.fit()\n```"
    assert mark_unknown(answer, []) == answer
    assert mark_unknown(answer, ["fit_fast"]) == answer
    assert mark_unknown(answer, ["", "  "]) == answer


def test_turn_marks_unknown_names_in_the_answer_only():
    out = format_turn(
        "Use `Trainer.fit_fast(data)`.",
        notices=["not found in this repository: Trainer.fit_fast"],
        documents=[TRAINER],
        unknown=["Trainer.fit_fast"],
    )
    assert out.count("<mark") == 1
    assert out.index("<mark") < out.index("not found in this repository: Trainer.fit_fast")
    assert format_turn("Use `Trainer.fit`.", documents=[TRAINER]).startswith("Use `Trainer.fit`.")


def test_a_withheld_answer_is_shown_only_folded_under_a_line_saying_so_and_inert():
    from codeground.app.serve.ui_format import WITHHELD_TITLE

    text = format_turn(
        "The material does not answer it.", withheld="Use `Trainer.train_all()` <script>x</script>"
    )
    folded = text[text.index("<details>") :]
    assert folded.startswith(f"<details><summary>{WITHHELD_TITLE}</summary><pre>")
    assert "<script>" not in text and "&lt;script&gt;" in folded
    assert text.index("The material does not answer it.") < text.index("<details>")  # the answer first
    assert "<details><summary>" + WITHHELD_TITLE not in format_turn("ok")
