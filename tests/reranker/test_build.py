"""The build: a tiny real one runs here (mining, one training step, the held-out check, export, ranking);
installing happens only when the check passes, atomically, and a failed check installs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from haystack import Document

from codeground.app.errors import CodegroundError
from codeground.reranker import build as build_module
from codeground.reranker.build import BuildSettings, build_reranker, installed_build
from codeground.reranker.location import built_reranker_dir

pytestmark = pytest.mark.slow
TINY = BuildSettings(
    train=("tenacity",),
    check=("click",),
    max_per_tree=16,
    check_per_tree=16,
    steps=1,
    batch_size=2,
    max_length=64,
)


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


_groups: list = []  # the groups the build mined, seen by the stand-in scorer


def _scorer(answer_first: bool):
    """A stand-in for the trained model's scores in the check: every answer first, or last."""

    def make(folder, *, max_length, batch_size=32):
        answers = {g.positive for g in _groups}
        sign = 1.0 if answer_first else -1.0
        return lambda query, texts: [sign if t in answers else 0.0 for t in texts]

    return make


def _capture_groups(monkeypatch):
    import codeground.reranker.mining as mining

    real = mining.mine

    def capture(*args, **kwargs):
        groups = real(*args, **kwargs)
        _groups.extend(groups)
        return groups

    monkeypatch.setattr(mining, "mine", capture)


def test_a_tiny_build_writes_a_model_that_loads_offline_and_has_an_order_of_its_own(cache, tmp_path):
    from codeground.components.rankers.openvino_cross_encoder import OpenVINOCrossEncoderRanker

    out = tmp_path / "model"
    lines: list[str] = []
    report = build_reranker(TINY, out=out, on_line=lines.append)
    assert report["pairs"]["train_groups"] == 16 and report["pairs"]["check_groups"] == 16
    assert report["training"]["steps_done"] == 1
    assert json.loads((out / "build.json").read_text())["check"] == report["check"]
    assert any(line.startswith("held-out MRR@10:") for line in lines)
    assert not built_reranker_dir().exists()  # --out installs nothing

    ranker = OpenVINOCrossEncoderRanker(
        model=str(out), top_k=3, meta_fields_to_embed=["header"], max_length=64
    )
    ranker.warm_up()
    docs = [
        Document(id=str(i), content=text, meta={"header": f"File: m{i}.py"})
        for i, text in enumerate(
            ["def parse_args(argv): return argv", "Install with pip.", "class Retry: wait and retry a call"]
        )
    ]
    forward = [d.id for d in ranker.run(query="retry a call", documents=docs)["documents"]]
    backward = [d.id for d in ranker.run(query="retry a call", documents=docs[::-1])["documents"]]
    assert forward == backward  # its own order, whatever order the candidates came in
    assert forward != ["0", "1", "2"] or backward != ["2", "1", "0"]


def test_a_build_that_loses_to_bm25_on_held_out_trees_installs_nothing_and_says_so(cache, monkeypatch):
    _groups.clear()
    _capture_groups(monkeypatch)
    monkeypatch.setattr("codeground.reranker.heldout.torch_scorer", _scorer(answer_first=False))
    with pytest.raises(CodegroundError, match="did not beat BM25's order"):
        build_reranker(TINY)
    assert not built_reranker_dir().exists() and installed_build() is None
    assert [p.name for p in cache.joinpath("models").iterdir() if not p.name.endswith(".lock")] == []


def test_a_build_that_wins_is_installed_whole_and_a_rebuild_replaces_it(cache, monkeypatch):
    _groups.clear()
    _capture_groups(monkeypatch)
    monkeypatch.setattr("codeground.reranker.heldout.torch_scorer", _scorer(answer_first=True))
    first = build_reranker(TINY)
    assert first["passed"] and first["installed"] == str(built_reranker_dir())
    assert (built_reranker_dir() / "model.safetensors").is_file() and installed_build()["passed"]
    second = build_reranker(BuildSettings(**{**TINY.__dict__, "seed": 1}))
    assert installed_build()["settings"]["seed"] == 1 and second["passed"]
    leftovers = [
        p.name for p in cache.joinpath("models").iterdir() if p.name.startswith(".codeground-reranker-")
    ]
    assert leftovers == []


def test_training_and_check_trees_that_overlap_are_refused():
    with pytest.raises(CodegroundError, match="disjoint"):
        build_module.build_reranker(BuildSettings(train=("click",), check=("click",)))


@pytest.mark.parametrize(
    ("out", "reason"),
    [
        (".", "it exists and is not empty"),
        ("keep.txt", "it is a file, not a folder"),
        ("keep.txt/model", "{tmp}/keep.txt is not a folder"),
    ],
)
def test_reranker_build_refuses_an_out_folder_it_could_not_write_in_one_line_before_training(
    tmp_path, out, reason
):
    """Before mining or training (about 25 minutes): a file, or a folder under a file, had failed only
    when the trained model was saved, and a file had ended in a traceback."""
    import subprocess
    import sys

    (tmp_path / "keep.txt").write_text("user data")
    target = tmp_path / out
    proc = subprocess.run(
        [sys.executable, "-m", "codeground.app.cli", "reranker", "build", "--out", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"error: cannot write {target}: {reason.format(tmp=tmp_path)}"]
    assert (tmp_path / "keep.txt").read_text() == "user data"
