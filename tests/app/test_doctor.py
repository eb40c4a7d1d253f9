"""`codeground doctor`: a ✓/✗ line per piece `query` needs, the fix for each gap, exit 0 only when usable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeground.app.cli import cli
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from tests.conftest import closed_port, make_sample_repo
from tests.reliability.helpers import drop_bm25_records

CHAT_MODELS = {"qwen2.5-coder:7b", "qwen2.5-coder:1.5b"}
PIECES = ["index", "prompt", "embedder", "re-vote vectors", "reranker", "LLM server", "models"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """The sample repository indexed into its default `.codeground/` (doctor's default place)."""
    repo = make_sample_repo(tmp_path_factory.mktemp("doctor") / "repo")
    run_index(repo, repo / ".codeground", DEFAULT_INDEX_PIPELINE)
    return repo


def doctor(*args: str):
    result = CliRunner().invoke(cli, ["doctor", *map(str, args)])
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    return result.exit_code, {ln[2:].split(":")[0].removesuffix(" (optional)"): ln for ln in lines}, lines


def test_everything_query_needs_present_exits_zero_with_one_check_line_each(repo, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    code, by_piece, lines = doctor("--repo", repo)
    assert code == 0, lines
    assert list(by_piece) == PIECES and len(lines) == len(PIECES)
    assert all(ln[0] in "✓✗" for ln in lines)
    for piece in ("index", "prompt", "embedder", "LLM server", "models"):
        assert by_piece[piece].startswith("✓"), by_piece[piece]
    from codeground.app.index.manifest import Manifest

    records = Manifest.load(IndexDir(repo / ".codeground").current()).chunk_count
    assert f", {records} records, built " in by_piece["index"]
    assert "loads offline" in by_piece["embedder"]
    assert fake_ollama.url in by_piece["LLM server"]


def test_missing_reranker_model_is_optional_and_says_how_to_get_it(repo, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    code, by_piece, _ = doctor("--repo", repo)
    line = by_piece["reranker"]
    assert code == 0
    assert line.startswith("✗ reranker (optional): cross-encoder/ms-marco-MiniLM-L-6-v2 cannot load")
    assert "keeps the fused order" in line and "fix:" in line
    assert "run `codeground doctor` once where a network is available" in line


def test_models_missing_on_the_server_are_named_with_the_command_that_pulls_them(
    repo, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models={"qwen2.5-coder:7b"})
    code, by_piece, _ = doctor("--repo", repo)
    assert code == 1
    line = by_piece["models"]
    assert line.startswith("✗ models: missing on the server: qwen2.5-coder:1.5b →")
    assert "`codeground ollama serve --pipeline pipelines/query.yaml`" in line
    assert "(or `ollama pull qwen2.5-coder:1.5b`)" in line


def test_ollama_down_fails_the_server_and_model_lines_with_the_start_command(repo, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("OLLAMA_HOST", url)
    code, by_piece, _ = doctor("--repo", repo)
    assert code == 1
    assert by_piece["LLM server"].startswith(f"✗ LLM server: no Ollama server answers at {url}")
    assert "codeground ollama serve" in by_piece["LLM server"]
    assert by_piece["models"].startswith("✗ models: cannot check")
    assert by_piece["index"].startswith("✓")


def test_an_ollama_host_that_is_no_address_fails_the_server_line_naming_the_variable(repo, monkeypatch):
    """It had ended doctor in a traceback (``http.client.InvalidURL: nonnumeric port``)."""
    monkeypatch.setenv("OLLAMA_HOST", "localhost:abc")
    code, by_piece, _ = doctor("--repo", repo)
    assert code == 1
    assert by_piece["LLM server"] == (
        "✗ LLM server: $OLLAMA_HOST is 'localhost:abc', not a server address (like "
        "http://127.0.0.1:11434): correct it or unset it → fix: set OLLAMA_HOST to the server's "
        "address, or unset it"
    )
    assert by_piece["index"].startswith("✓") and by_piece["embedder"].startswith("✓")


def test_missing_index_says_to_index_the_repository(tmp_path, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    (tmp_path / "empty_repo").mkdir()
    code, by_piece, lines = doctor("--repo", tmp_path / "empty_repo")
    assert code == 1 and list(by_piece) == PIECES, lines
    assert by_piece["index"].startswith("✗ index: no index in") and "`codeground index " in by_piece["index"]
    assert by_piece["LLM server"].startswith("✓")


def test_stale_index_is_reported_with_the_rebuild_command(tmp_path, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    bm25 = IndexDir(tmp_path / "idx").current() / "bm25.sqlite3"
    drop_bm25_records(bm25.parent, 1)
    code, by_piece, _ = doctor("--index-dir", tmp_path / "idx", "--pipeline", PIPELINES_DIR / "bm25.yaml")
    assert code == 1
    assert by_piece["index"].startswith("✗ index: stale") and "--full" in by_piece["index"]


def test_files_changed_since_indexing_are_counted_but_query_still_works(tmp_path, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, repo / ".codeground", DEFAULT_INDEX_PIPELINE)
    (repo / "pkg" / "trainer.py").write_text((repo / "pkg" / "trainer.py").read_text() + "\n# more\n")
    (repo / "NEW.md").write_text("# New\n\nA new page.\n")
    code, by_piece, _ = doctor("--repo", repo, "--pipeline", PIPELINES_DIR / "bm25.yaml")
    assert code == 0
    assert (
        by_piece["index"].startswith("✓")
        and "2 files new, changed or deleted since indexing" in by_piece["index"]
    )
    assert f"`codeground index {repo}`" in by_piece["index"]


def test_pipeline_with_another_embedder_than_the_index_fails_the_embedder_line(
    repo, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models={*CHAT_MODELS, "nomic-embed-text"})
    code, by_piece, _ = doctor("--repo", repo, "--pipeline", PIPELINES_DIR / "query_ollama_embed.yaml")
    assert code == 1
    line = by_piece["embedder"]
    assert (
        line.startswith("✗ embedder: the index was embedded with")
        and "nomic-embed-text via OllamaEmbedder" in line
    )
    assert "--pipeline pipelines/index_ollama.yaml" in line


def test_repository_prompt_is_reported_and_a_broken_one_fails(repo, fake_ollama, monkeypatch, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    prompt = repo / ".codeground" / "prompt.md"
    prompt.write_text("samplepkg trains models epoch by epoch.\n")
    try:
        _, by_piece, _ = doctor("--repo", repo, "--pipeline", PIPELINES_DIR / "bm25.yaml")
        assert by_piece["prompt"].startswith(f"✓ prompt: {prompt} (")
        prompt.write_text("")
        code, by_piece, _ = doctor("--repo", repo, "--pipeline", PIPELINES_DIR / "bm25.yaml")
        assert code == 1 and by_piece["prompt"].startswith("✗ prompt:") and "is empty" in by_piece["prompt"]
    finally:
        prompt.unlink()


def test_bad_pipeline_file_is_one_line(repo):
    result = CliRunner().invoke(cli, ["doctor", "--repo", str(repo), "--pipeline", "nope.yaml"])
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 1 and len(lines) == 1
    assert lines[0].startswith("error: pipeline file not found: nope.yaml (a shipped one is named")


def test_re_vote_vectors_are_optional_until_filled_and_then_say_so(tmp_path, fake_ollama, monkeypatch):
    from codeground.app.index import revote_fill

    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models=CHAT_MODELS)
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, repo / ".codeground", DEFAULT_INDEX_PIPELINE)
    code, by_piece, _ = doctor("--repo", repo)
    assert code == 0  # a question is only slower without them
    assert by_piece["re-vote vectors"].startswith("✗ re-vote vectors (optional): not filled")
    assert f"codeground index {repo}" in by_piece["re-vote vectors"]
    # from a subfolder, the index above is checked and the fix names its root: `codeground index .`
    # there would make a second, nearer index
    monkeypatch.chdir(repo / "pkg")
    code, by_piece, _ = doctor()
    assert code == 0 and by_piece["index"].startswith(f"✓ index: {repo / '.codeground'} ")
    assert by_piece["re-vote vectors"].endswith(
        f"→ fix: `codeground index {repo}` fills them in the background"
    )
    state = revote_fill.fill(repo / ".codeground", batch=64)
    assert state["state"] == "done"
    _, by_piece, _ = doctor("--repo", repo)
    assert by_piece["re-vote vectors"] == f"✓ re-vote vectors: filled for all {state['total']} records"
    # an older codeground kept them under names this one does not look up: not done, and why
    done = revote_fill.read_state(repo / ".codeground")
    (repo / ".codeground" / revote_fill.STATE_FILE).write_text(
        json.dumps({**done, "identity_version": done["identity_version"] - 1})
    )
    code, by_piece, _ = doctor("--repo", repo)
    assert code == 0 and "filled by an older codeground" in by_piece["re-vote vectors"]
    assert by_piece["re-vote vectors"].startswith("✗ re-vote vectors (optional)")


def test_an_index_store_on_a_server_that_does_not_answer_says_check_that_server(repo, monkeypatch):
    """Not "rebuild with `codeground index --full`", which cannot help while the server is down."""
    from codeground.app.index.store_counts import SERVER_DOWN_FIX
    from tests.conftest import closed_port

    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("QDRANT_URL", url)
    code, by_piece, _ = doctor("--repo", repo, "--pipeline", "query_qdrant")
    assert code == 1
    assert by_piece["index"].startswith(f"✗ index: the index store behind 'symbols' on the server at {url} ")
    assert by_piece["index"].endswith(f"→ fix: {SERVER_DOWN_FIX}")


def test_a_fix_for_an_index_outside_its_repository_names_both(tmp_path):
    """``codeground index ROOT --index-dir DIR``: a bare ``codeground index ROOT`` would build a second
    index in ``ROOT/.codeground`` and leave the one doctor checked as it was."""
    repo = make_sample_repo(tmp_path / "repo")
    idx = tmp_path / "idx"
    run_index(repo, idx, DEFAULT_INDEX_PIPELINE)
    _, by_piece, _ = doctor("--index-dir", idx)
    assert by_piece["re-vote vectors"].endswith(
        f"→ fix: `codeground index {repo.resolve()} --index-dir {idx.resolve()}` fills them in the background"
    )
