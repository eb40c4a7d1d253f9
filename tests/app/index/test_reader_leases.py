"""Reader leases: a generation a query engine holds stays on disk after a re-index replaced it,
until the engine is gone (codeground/app/index/index_dir.py)."""

from __future__ import annotations

import shutil

from codeground.app.pipeline.loader import PIPELINES_DIR
from tests.conftest import FIXTURES


def test_a_generation_a_reader_holds_is_kept_until_it_lets_go(tmp_path):
    import gc

    from codeground.app.index.index_dir import IndexDir
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
    from codeground.app.query.engine import QueryEngine

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    reader = QueryEngine(tmp_path / "idx", PIPELINES_DIR / "query.yaml")
    old = reader.gen
    assert reader.search("Server.Start", k=1).documents[0].meta["symbol"] == "Server.Start"
    (repo / "server.go").write_text((repo / "server.go").read_text().replace("Start", "Begin"))
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    new = IndexDir(tmp_path / "idx").current()
    assert new != old and old.is_dir()  # replaced, but kept: a reader is still on it
    # mid-answer on the old generation, the old answer; a new reader gets the new one
    assert reader.search("Server.Start", k=1).documents[0].meta["symbol"] == "Server.Start"
    fresh = QueryEngine(tmp_path / "idx", PIPELINES_DIR / "query.yaml")
    assert fresh.search("Server.Begin", k=1).documents[0].meta["symbol"] == "Server.Begin"
    del reader
    gc.collect()
    assert not old.exists() and new.is_dir()  # the last reader of a replaced generation removes it
