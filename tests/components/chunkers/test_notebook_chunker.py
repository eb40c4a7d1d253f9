"""Tests for NotebookChunker: markdown glued to the code after it, outputs never indexed."""

from __future__ import annotations

import json
from typing import Any

from haystack import Document
from haystack.core.serialization import component_to_dict, default_from_dict
from haystack.dataclasses import ByteStream

from codeground.components.chunkers.notebook import NotebookChunker

LONG = "This paragraph explains the method in detail. " * 6  # > 200 chars


def md(source: Any) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def code(source: Any, outputs: list | None = None) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": outputs or [],
        "source": source,
    }


def _raw(cells: list[dict[str, Any]], **extra: Any) -> str:
    notebook = {"cells": cells, "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4}
    notebook.update(extra)
    return json.dumps(notebook, indent=1)


def _chunk(raw: str, file_path: str = "examples/nb.ipynb", **init: Any) -> list[Document]:
    source = ByteStream(
        data=raw.encode(), mime_type="application/x-ipynb+json", meta={"file_path": file_path}
    )
    return NotebookChunker(**init).run(sources=[source])["documents"]


def _cells(docs: list[Document]) -> list[tuple[int, int]]:
    return [(d.meta["cell_start"], d.meta["cell_end"]) for d in docs]


def test_markdown_glued_to_following_code_cell():
    raw = _raw([md("# Training the model\n"), code(["model.fit(x)\n", "model.save()"]), code("print(1)")])
    docs = _chunk(raw)
    assert _cells(docs) == [(0, 1), (2, 2)]
    assert docs[0].content == "# Training the model\n\n```python\nmodel.fit(x)\nmodel.save()\n```"
    assert docs[0].meta["symbol"] == "Training the model"
    assert docs[1].meta["symbol"] == "cell 3"  # a code cell without markdown is its own record
    assert all(d.meta["source_type"] == "notebook" for d in docs)


def test_short_markdown_carried_into_next_chunk():
    raw = _raw(
        [md("# Title"), md("## Step one"), code("step_one()"), md("short"), md("## Step two"), code("two()")]
    )
    docs = _chunk(raw)
    assert _cells(docs) == [(0, 2), (3, 5)]
    assert docs[0].content.startswith("# Title\n\n## Step one\n\n```python")
    assert docs[0].meta["symbol"] == "Title"
    assert docs[1].meta["symbol"] == "Step two"


def test_long_markdown_stretch_is_own_record():
    raw = _raw([md("# Intro\n\n" + LONG), md("## Setup"), code("setup()")])
    docs = _chunk(raw)
    assert _cells(docs) == [(0, 0), (1, 2)]
    assert docs[0].content == "# Intro\n\n" + LONG.rstrip()
    assert docs[1].meta["symbol"] == "Setup"


def test_long_markdown_directly_before_code_is_still_glued():
    docs = _chunk(_raw([md(LONG), code("run()")]))
    assert _cells(docs) == [(0, 1)]
    assert docs[0].meta["symbol"] == "cell 1"


def test_trailing_markdown_short_joins_previous_long_stays_alone():
    docs = _chunk(_raw([code("a = 1"), md("The end.")]))
    assert _cells(docs) == [(0, 1)]
    assert docs[0].content.endswith("The end.")
    docs = _chunk(_raw([code("a = 1"), md(LONG)]))
    assert _cells(docs) == [(0, 0), (1, 1)]
    docs = _chunk(_raw([md("# Only markdown")]))
    assert _cells(docs) == [(0, 0)]


def test_outputs_dropped():
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": ["SECRET_OUTPUT_TEXT\n"]},
        {"output_type": "execute_result", "data": {"text/plain": ["OTHER_RESULT"]}, "metadata": {}},
    ]
    raw_cell = {"cell_type": "raw", "metadata": {}, "source": "RAW_CELL_TEXT"}
    docs = _chunk(_raw([md("# Run"), code("go()", outputs), raw_cell]))
    text = " ".join(d.content for d in docs)
    assert "go()" in text
    assert "SECRET_OUTPUT_TEXT" not in text and "OTHER_RESULT" not in text and "RAW_CELL_TEXT" not in text


def test_cell_source_string_or_list():
    as_list = _chunk(_raw([md(["# Head\n", "more\n"]), code(["x = 1\n", "y = 2\n"])]))
    as_str = _chunk(_raw([md("# Head\nmore\n"), code("x = 1\ny = 2\n")]))
    assert [d.content for d in as_list] == [d.content for d in as_str]
    assert as_str[0].content == "# Head\nmore\n\n```python\nx = 1\ny = 2\n```"


def test_invalid_json_yields_no_records_no_crash():
    good = ByteStream(data=_raw([code("ok()")]).encode(), meta={"file_path": "good.ipynb"})
    bad = ByteStream(data=b'{"cells": [ {"cell_type": "code", ', meta={"file_path": "bad.ipynb"})
    bad_cell = ByteStream(
        data=json.dumps({"cells": [{"cell_type": "code", "source": 5}]}).encode(),
        meta={"file_path": "cell.ipynb"},
    )
    out = NotebookChunker().run(sources=[bad, good, bad_cell])
    assert [d.meta["file_path"] for d in out["documents"]] == ["good.ipynb"]
    assert out["failed"] == [["bad.ipynb", "malformed_notebook"], ["cell.ipynb", "malformed_notebook"]]


def test_missing_cells_yields_no_records():
    assert _chunk(json.dumps({"metadata": {}, "nbformat": 4})) == []
    assert _chunk(json.dumps({"cells": [], "nbformat": 4})) == []
    assert _chunk("[1, 2]") == []


def test_char_range_covers_cells_json():
    cells = [
        md("# A"),
        code("a()", [{"output_type": "stream", "name": "stdout", "text": "x"}]),
        code("b()"),
        md("end"),
    ]
    for raw in (
        _raw(cells),
        json.dumps({"nbformat": 4, "cells": cells}),
        "\ufeff" + _raw(cells).replace("\n", "\r\n"),
    ):
        docs = _chunk(raw)
        assert _cells(docs) == [(0, 1), (2, 3)]
        for doc in docs:
            meta = doc.meta
            span = raw[meta["start_char"] : meta["end_char"]]
            assert span.startswith("{") and span.endswith("}")
            assert json.loads(f"[{span}]") == cells[meta["cell_start"] : meta["cell_end"] + 1]
            assert meta["start_line"] == raw.count("\n", 0, meta["start_char"]) + 1
            assert meta["end_line"] == raw.count("\n", 0, meta["end_char"] - 1) + 1


def test_ids_unique_per_notebook():
    # Minified JSON puts every cell on line 1; repeated headings must still give distinct ids.
    cells = [md("# Plot"), code("plot(1)"), md("# Plot"), code("plot(2)"), code("x"), code("y")]
    docs = _chunk(json.dumps({"cells": cells}))
    ids = [d.id for d in docs]
    assert len(set(ids)) == len(ids) == 4
    assert all(d.id == f"{d.meta['file_path']}:{d.meta['symbol']}:{d.meta['start_line']}" for d in docs)


def test_code_fence_uses_notebook_language_and_can_be_disabled():
    raw = _raw([code("print('```')")], metadata={"language_info": {"name": "julia"}})
    assert _chunk(raw)[0].content == "````julia\nprint('```')\n````"
    assert _chunk(_raw([code("x = 1")]), fence_code=False)[0].content == "x = 1"


def test_run_does_not_mutate_sources():
    source = ByteStream(data=_raw([md("# A"), code("a()")]).encode(), meta={"file_path": "a.ipynb"})
    before = (source.data, dict(source.meta))
    NotebookChunker().run(sources=[source])
    assert (source.data, source.meta) == before


def test_to_dict_round_trip():
    chunker = NotebookChunker(min_markdown_chars=50, fence_code=False)
    data = component_to_dict(chunker, "notebooks")
    assert data["init_parameters"] == {"min_markdown_chars": 50, "fence_code": False}
    restored = default_from_dict(NotebookChunker, data)
    assert (restored.min_markdown_chars, restored.fence_code) == (50, False)
