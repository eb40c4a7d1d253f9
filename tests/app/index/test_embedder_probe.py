"""An index is searched only by a question embedder that reproduces its vectors (same weights, not just
the same name): a table distilled differently is refused with the command that rebuilds the index."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.index.manifest import MANIFEST, Manifest
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.app.query.engine import QueryEngine


@pytest.fixture
def index_copy(indexed_sample, tmp_path):
    repo, index_dir = indexed_sample
    shutil.copytree(index_dir, tmp_path / "idx")
    return repo, tmp_path / "idx"


def _rewrite_probe(index_dir, change) -> None:
    path = IndexDir(index_dir).current() / MANIFEST
    data = json.loads(path.read_text())
    data["embedder_probe"] = change(np.asarray(data["embedder_probe"])).tolist()
    path.write_text(json.dumps(data))


def test_the_manifest_keeps_the_document_embedders_probe_vectors(index_copy):
    _, index_dir = index_copy
    probe = Manifest.load(IndexDir(index_dir).current()).embedder_probe
    assert probe is not None and len(probe) == 3 and all(len(v) == 256 for v in probe)


def test_an_index_whose_vectors_this_machine_cannot_reproduce_is_refused_in_one_line(index_copy):
    repo, index_dir = index_copy
    flip = np.ones(256)
    flip[::2] = -1  # a table whose dimensions came out of PCA with other signs
    _rewrite_probe(index_dir, lambda v: v * flip)
    with pytest.raises(CodegroundError) as raised:
        QueryEngine(index_dir, PIPELINES_DIR / "query.yaml").search("How does Trainer.fit work?")
    message = str(raised.value)
    assert "makes other vectors than the ones in the index" in message and "\n" not in message
    assert f"codeground index {repo.resolve()} --full" in message


def test_small_numeric_differences_are_not_refused(index_copy):
    _, index_dir = index_copy
    rng = np.random.default_rng(0)
    _rewrite_probe(index_dir, lambda v: v + rng.normal(0, 0.004, v.shape))  # another CPU's rounding
    engine = QueryEngine(index_dir, PIPELINES_DIR / "hybrid_norerank.yaml")
    assert engine.search("How does Trainer.fit work?").documents


def test_an_incremental_run_with_unlike_vectors_asks_for_a_full_rebuild_and_keeps_the_index(index_copy):
    repo, index_dir = index_copy
    _rewrite_probe(index_dir, lambda v: -v)
    before = IndexDir(index_dir).current()
    (repo / "pkg" / "new_module.py").write_text("def added(x):\n    return x\n")
    try:
        with pytest.raises(CodegroundError, match="--full"):
            run_index(repo, index_dir, DEFAULT_INDEX_PIPELINE)
        assert IndexDir(index_dir).current() == before
        assert run_index(repo, index_dir, DEFAULT_INDEX_PIPELINE, full=True).full
    finally:
        (repo / "pkg" / "new_module.py").unlink()
