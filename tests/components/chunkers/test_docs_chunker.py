"""Tests for DocsChunker: Markdown/reST pages split at headings into exact, tiling slices."""

from __future__ import annotations

import logging

from haystack import Document
from haystack.core.serialization import component_to_dict, default_from_dict
from haystack.dataclasses import ByteStream

from codeground.components.chunkers.docs import DocsChunker


def _source(text: str, file_path: str = "docs/x.md") -> ByteStream:
    mime = "text/x-rst" if file_path.endswith(".rst") else "text/markdown"
    return ByteStream(data=text.encode(), mime_type=mime, meta={"file_path": file_path})


def _chunk(text: str, file_path: str = "docs/x.md", **init) -> list[Document]:
    return DocsChunker(**init).run(sources=[_source(text, file_path)])["documents"]


def _symbols(docs: list[Document]) -> list[str]:
    return [d.meta["symbol"] for d in docs]


def _assert_exact(text: str, docs: list[Document]) -> None:
    for doc in docs:
        meta = doc.meta
        assert text[meta["start_char"] : meta["end_char"]] == doc.content
        assert meta["start_line"] == text.count("\n", 0, meta["start_char"]) + 1
        assert meta["end_line"] == text.count("\n", 0, meta["end_char"] - 1) + 1
        assert meta["source_type"] == "docs"
        assert doc.id == f"{meta['file_path']}:{meta['symbol']}:{meta['start_line']}"
    assert len({d.id for d in docs}) == len(docs)


def _assert_tiles(text: str, docs: list[Document]) -> None:
    """Records are in order, do not overlap, and only whitespace lies outside them."""
    pos = 0
    for doc in docs:
        assert not text[pos : doc.meta["start_char"]].strip()
        pos = doc.meta["end_char"]
    assert not text[pos:].strip()


MARKDOWN = """Intro before any heading.

# LoRA Adapters

LoRA lets you serve adapters.

## Serving LoRA Adapters

Pass `--enable-lora`.

```bash
# this is a shell comment, not a heading
vllm serve model --enable-lora
```

~~~
## not a heading either
~~~

### Dynamic loading ###

Load at runtime.

# FAQ

Questions.
"""


def test_markdown_split_at_headings_sections_tile_file():
    docs = _chunk(MARKDOWN)
    assert _symbols(docs) == [
        "x",
        "LoRA Adapters",
        "LoRA Adapters > Serving LoRA Adapters",
        "LoRA Adapters > Serving LoRA Adapters > Dynamic loading",
        "FAQ",
    ]
    assert docs[1].content.startswith("# LoRA Adapters")
    assert docs[2].content.endswith("~~~")
    _assert_exact(MARKDOWN, docs)
    _assert_tiles(MARKDOWN, docs)


def test_heading_inside_code_fence_is_not_a_boundary():
    docs = _chunk(MARKDOWN)
    serving = docs[2]
    assert "# this is a shell comment, not a heading" in serving.content
    assert "## not a heading either" in serving.content
    assert not any("not a heading" in s or "shell comment" in s for s in _symbols(docs))


def test_markdown_setext_headings_and_front_matter():
    text = (
        "---\ntitle: Page\n---\n\nGuide\n=====\n\nIntro.\n\nDetails\n-------\n\nMore.\n\n---\n\nAfter rule.\n"
    )
    docs = _chunk(text)
    # Front matter is not a heading and, holding no prose, joins the first section.
    assert _symbols(docs) == ["Guide", "Guide > Details"]
    assert docs[0].meta["start_char"] == 0
    assert "After rule." in docs[1].content  # a `---` after a blank line is a thematic break
    _assert_exact(text, docs)


def test_snippet_markers_are_not_headings():
    text = "# Install\n\n# --8<-- [start:pip]\npip install vllm\n# --8<-- [end:pip]\n"
    docs = _chunk(text)
    assert _symbols(docs) == ["Install"]
    assert docs[0].content == text.rstrip()


RST = """Top Title
=========

Intro paragraph.

Sub Section
-----------

Sub text.

::

    Literal
    -------

#######
Other
#######

Other text.

Deep
~~~~

Deep text.

Back Up
-------

Up text.

Another Top
===========

Done.
"""


def test_rst_underline_and_overline_headings():
    docs = _chunk(RST, "docs/guide.rst")
    # Styles by first appearance: '=' underline 1, '-' underline 2, '#' overline 3, '~' underline 4.
    assert _symbols(docs) == [
        "Top Title",
        "Top Title > Sub Section",
        "Top Title > Sub Section > Other",
        "Top Title > Sub Section > Other > Deep",
        "Top Title > Back Up",
        "Another Top",
    ]
    assert "Literal\n    -------" in docs[1].content  # an indented literal block holds no titles
    assert docs[2].content.startswith("#######\nOther\n#######")
    _assert_exact(RST, docs)
    _assert_tiles(RST, docs)


def test_rst_short_underline_is_not_a_heading():
    text = "Paragraph start\n\nA long title line\n---\n\nbody\n"
    docs = _chunk(text, "docs/short.rst")
    assert _symbols(docs) == ["short"]


def test_heading_path_symbols():
    text = "# A\n\na\n\n## B\n\nb\n\n### C\n\nc\n\n## D\n\nd\n\n# E\n\ne\n\n### F\n\nf\n"
    assert _symbols(_chunk(text)) == ["A", "A > B", "A > B > C", "A > D", "E", "E > F"]


def test_heading_only_section_merged_into_next():
    text = "# Guide\n\n## Setup\n\nInstall it.\n\n## Empty end\n"
    docs = _chunk(text)
    assert _symbols(docs) == ["Guide > Setup"]
    assert docs[0].meta["start_char"] == 0
    assert docs[0].content.startswith("# Guide\n\n## Setup")
    # A body-less last heading joins the previous record instead of becoming a heading-only record.
    assert docs[0].content.endswith("## Empty end")
    _assert_exact(text, docs)
    for doc in docs:
        body = [line for line in doc.content.splitlines() if line.strip() and not line.startswith("#")]
        assert body


def test_automodule_only_page_dropped():
    text = (
        ".. comment line\n   continued\n\nCallbacks\n=========\n\n"
        ".. automodule:: neuromancer.callbacks\n   :members:\n   :undoc-members:\n\n"
        "Helpers\n-------\n\n.. autoclass:: neuromancer.callbacks.Callback\n   :members:\n"
    )
    assert _chunk(text, "docs/callbacks.rst") == []
    toctree = "PSL\n===\n\n.. toctree::\n   :maxdepth: 2\n\n   autonomous.rst\n   emulator.rst\n"
    assert _chunk(toctree, "docs/psl/index.rst") == []
    myst = "# API\n\n```{eval-rst}\n.. automodule:: pkg.mod\n   :members:\n```\n\n```{autoclass} pkg.A\n```\n"
    assert _chunk(myst, "docs/api.md") == []
    mkdocstrings = "# Config\n\n::: vllm.config\n    options:\n      show_source: false\n"
    assert _chunk(mkdocstrings, "docs/config.md") == []


def test_page_with_automodule_and_prose_kept():
    text = "Losses\n======\n\nHow losses combine.\n\n.. automodule:: neuromancer.loss\n   :members:\n"
    docs = _chunk(text, "docs/loss.rst")
    assert _symbols(docs) == ["Losses"]
    assert ".. automodule:: neuromancer.loss" in docs[0].content
    assert len(_chunk(text, "docs/loss.rst", drop_autodoc_pages=False)) == 1
    # With the option off, an autodoc-only page is kept as well.
    only = "Losses\n======\n\n.. automodule:: neuromancer.loss\n"
    assert len(_chunk(only, "docs/loss.rst", drop_autodoc_pages=False)) == 1


def test_records_slice_back_to_exact_text():
    for text, path in [(MARKDOWN, "docs/x.md"), (RST, "docs/guide.rst")]:
        docs = _chunk(text, path)
        assert docs
        _assert_exact(text, docs)


def test_ids_unique_even_with_repeated_titles():
    text = "# Usage\n\nA.\n\n# Usage\n\nB.\n\n## Usage\n\nC.\n"
    docs = _chunk(text)
    assert len({d.id for d in docs}) == len(docs) == 3


def test_rst_without_headings_one_record():
    text = "\n\nJust a paragraph\nover two lines.\n\n"
    docs = _chunk(text, "docs/notes.rst")
    assert _symbols(docs) == ["notes"]
    assert docs[0].content == "Just a paragraph\nover two lines."
    _assert_exact(text, docs)


def test_empty_markdown_yields_no_records():
    assert _chunk("") == []
    assert _chunk("  \n\n\t\n") == []


def test_crlf_line_endings_and_bom_keep_offsets_exact():
    text = MARKDOWN.replace("\n", "\r\n")
    docs = _chunk(text)
    assert len(docs) == 5
    assert docs[1].meta["symbol"] == "LoRA Adapters"
    _assert_exact(text, docs)
    _assert_tiles(text, docs)
    bom = "\ufeff" + text
    bom_docs = _chunk(bom)
    assert _symbols(bom_docs) == _symbols(docs)
    _assert_exact(bom, bom_docs)
    rst_docs = _chunk(RST.replace("\n", "\r\n"), "docs/guide.rst")
    assert len(rst_docs) == 6
    _assert_exact(RST.replace("\n", "\r\n"), rst_docs)


def test_malformed_file_yields_no_records_others_kept(caplog):
    bad = ByteStream(data=b"\xff\xfe not utf-8", meta={"file_path": "docs/bad.md"})
    good = _source("# Good\n\ntext\n", "docs/good.md")
    with caplog.at_level(logging.WARNING):
        docs = DocsChunker().run(sources=[bad, good])["documents"]
    assert [d.meta["file_path"] for d in docs] == ["docs/good.md"]
    assert "docs/bad.md" in caplog.text


def test_run_does_not_mutate_sources():
    source = _source(MARKDOWN)
    before = (source.data, dict(source.meta))
    DocsChunker().run(sources=[source])
    assert (source.data, source.meta) == before


def test_to_dict_round_trip():
    chunker = DocsChunker(drop_autodoc_pages=False, heading_separator=" / ", table_rows_over_chars=900)
    data = component_to_dict(chunker, "docs")
    assert data["init_parameters"] == {
        "drop_autodoc_pages": False,
        "heading_separator": " / ",
        "table_rows_over_chars": 900,
    }
    restored = default_from_dict(DocsChunker, data)
    assert restored.drop_autodoc_pages is False
    assert restored.heading_separator == " / "


def _big_table_page() -> str:
    rows = "".join(f"| `Model{i}ForCausalLM` | Family {i} | `org/model-{i}` | yes |\n" for i in range(60))
    return (
        "# Models\n\nIntro.\n\n## Text generation\n\n"
        "| Architecture | Models | Example HF Models | LoRA |\n|---|---|---|---|\n" + rows + "\nAfter.\n"
    )


def test_a_table_longer_than_one_excerpt_also_yields_a_record_per_row_citing_its_own_line():
    text = _big_table_page()
    docs = _chunk(text, table_rows_over_chars=2000)
    sections = [d for d in docs if "parent" not in d.meta]
    rows = [d for d in docs if "parent" in d.meta]
    assert [d.meta["symbol"] for d in sections] == ["Models", "Models > Text generation"]
    assert len(rows) == 60 and all(r.meta["parent"] == sections[1].id for r in rows)
    row = next(r for r in rows if "Model42ForCausalLM" in r.content)
    assert text[row.meta["start_char"] : row.meta["end_char"]] == row.content == row.content.strip()
    assert row.meta["start_line"] == row.meta["end_line"] == text[: row.meta["start_char"]].count("\n") + 1
    assert row.meta["symbol"] == "Models > Text generation > Model42ForCausalLM"
    assert row.meta["header"].endswith("| Columns: Architecture, Models, Example HF Models, LoRA")


def test_a_short_table_stays_inside_its_section_only():
    text = "# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert all("parent" not in d.meta for d in _chunk(text, table_rows_over_chars=2000))
    assert all("parent" not in d.meta for d in _chunk(_big_table_page()))  # off unless asked


def test_a_question_about_one_row_retrieves_that_row():
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    store = SQLiteBM25DocumentStore()
    store.write_documents(_chunk(_big_table_page(), table_rows_over_chars=2000))
    top = store.bm25_retrieval("Which example model does Family 42 have?", top_k=1)[0]
    assert "Model42ForCausalLM" in top.content and "parent" in top.meta
