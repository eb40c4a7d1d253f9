"""One rule for fenced code in Markdown, used by the docs chunker, the grounding check and the chat."""

from haystack.dataclasses import ByteStream, ChatMessage

from codeground.app.serve.ui_format import mark_unknown
from codeground.components.chunkers.docs import DocsChunker
from codeground.components.grounding.extract import extract_identifiers
from codeground.components.markdown import opening_fence


def test_a_fence_opens_with_three_backticks_or_tildes_and_a_backtick_fence_has_no_backtick_in_its_info():
    assert opening_fence("```python").language == "python"
    assert opening_fence("~~~ Bash extra words").language == "bash"
    assert opening_fence("    ```yaml").indent == "    "  # a fence in a list item
    assert opening_fence("``not a fence") is None
    assert opening_fence("```inline``` code") is None
    assert opening_fence("~~~ info with ` backtick").info == "info with ` backtick"


def test_a_fence_closes_at_the_same_character_at_least_as_many_times_and_nothing_else():
    fence = opening_fence("````")
    assert fence.closed_by("````") and fence.closed_by("  `````  ")
    assert not fence.closed_by("```") and not fence.closed_by("~~~~") and not fence.closed_by("```` x")


TEXT = (
    "# Install\n\n"
    "1. Run:\n\n"
    "    ```bash\n"
    "    # Not a heading\n"
    "    pip install pkg\n"
    "    ```\n\n"
    "```inline``` is not a fence, and `Trainer.fit_fast` is named in prose.\n\n"
    "## Use\n\nCall it.\n"
)


def test_the_docs_chunker_the_grounding_check_and_the_chat_agree_on_the_same_fences():
    chunks = DocsChunker().run(sources=[ByteStream(TEXT.encode(), meta={"file_path": "docs/x.md"})])[
        "documents"
    ]
    assert [d.meta["symbol"] for d in chunks] == ["Install", "Install > Use"]
    # the bash fence holds none; ```inline``` is an inline code span (CommonMark), not a fence
    assert extract_identifiers(TEXT) == ["inline", "Trainer.fit_fast"]
    marked = mark_unknown(TEXT, ["Trainer.fit_fast"])
    assert "```inline```" in marked and marked.count("cg-unknown") == 1
    assert extract_identifiers(ChatMessage.from_assistant("```python\nfit_fast(x)\n````\nok").text) == [
        "fit_fast"
    ]
