"""The query engine over a real index of the sample repository, with the fake Ollama server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from tests.conftest import SAMPLE_REPO, closed_port, make_sample_repo
from tests.reliability.helpers import drop_bm25_records

QUERY = PIPELINES_DIR / "query.yaml"


@pytest.fixture(scope="module")
def index_dir(indexed_sample) -> Path:
    return indexed_sample[1]


@pytest.fixture(scope="module")
def engine(index_dir) -> QueryEngine:
    return QueryEngine(index_dir, QUERY)


def test_search_finds_the_named_method_first(engine):
    result = engine.search("What does Gemma2DecoderLayer.forward return?", k=5)
    assert result.documents[0].meta["symbol"] == "Gemma2DecoderLayer.forward"
    assert len(result.documents) <= 5


def test_missing_reranker_model_keeps_fused_order_and_says_so(engine):
    result = engine.search("how do I fit a trainer", k=10)
    assert any(n.startswith("reranking unavailable:") for n in result.notices)
    scores = [d.score for d in result.documents]
    assert all(s is not None and s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("variant", ["query.yaml", "hybrid_norerank.yaml", "bm25.yaml", "dense.yaml"])
def test_every_variant_searches_the_same_index(index_dir, variant):
    result = QueryEngine(index_dir, PIPELINES_DIR / variant).search("trust_remote_code", k=3)
    assert result.documents
    assert all("file_path" in d.meta for d in result.documents)


def test_streamed_answer_arrives_token_by_token_with_cited_files(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(
        reply="Call `Trainer.fit` with your data (see pkg/trainer.py:33-35).", token_delay=0.01
    )
    tokens: list[tuple[float, str]] = []
    result = QueryEngine(index_dir, QUERY).answer(
        "How do I fit a Trainer?", on_token=lambda t: tokens.append((time.perf_counter(), t))
    )
    assert result.answer == "Call `Trainer.fit` with your data (see pkg/trainer.py:33-35)."
    assert len(tokens) > 3 and "".join(t for _, t in tokens) == result.answer
    assert tokens[-1][0] > tokens[0][0]
    # the files behind the excerpts, the one the question is about first; never a file kept out
    assert result.cited_files[0] == "pkg/trainer.py"
    assert set(result.cited_files) <= {
        str(p.relative_to(SAMPLE_REPO)) for p in SAMPLE_REPO.rglob("*") if p.is_file()
    }
    chat = [r for r in fake_ollama.requests if r.path == "/api/chat"][-1].body
    assert chat["model"] == "qwen2.5-coder:7b" and chat["options"]["num_ctx"] == 8192
    system, user = chat["messages"][0], chat["messages"][1]
    assert system["role"] == "system" and "Grounding contract" in system["content"]
    assert "excerpt 1" not in user["content"].lower()
    assert '<excerpt file="pkg/trainer.py" lines="' in user["content"]


def test_repository_text_reaches_the_model_only_inside_user_material(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    QueryEngine(index_dir, QUERY).answer("Release notes")
    chat = [r for r in fake_ollama.requests if r.path == "/api/chat"][-1].body
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user"]
    assert "Release notes for the sample" not in chat["messages"][0]["content"]


def test_ollama_down_gives_sources_and_one_actionable_line_quickly(index_dir, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    engine = QueryEngine(index_dir, QUERY)
    engine.warm_up(with_answer=True)
    t0 = time.perf_counter()
    result = engine.answer("How do I fit a Trainer?")
    assert time.perf_counter() - t0 < 2.0
    assert result.answer is None and result.documents
    assert any("ollama serve" in n for n in result.notices)


def test_missing_model_says_how_to_pull_it(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(models={"other:latest"})
    result = QueryEngine(index_dir, QUERY).answer("How do I fit a Trainer?")
    assert result.answer is None and result.documents
    assert any("ollama pull qwen2.5-coder:7b" in n for n in result.notices)


def test_follow_up_is_rewritten_and_reported(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)

    def reply(req):
        system = req["messages"][0]["content"]
        rewriting = "standalone search query" in system
        return "What arguments does Trainer.fit take?" if rewriting else "It takes data."

    fake_ollama.configure(reply=reply)
    from haystack.dataclasses import ChatMessage

    history = [ChatMessage.from_user("What does Trainer.fit do?"), ChatMessage.from_assistant("It trains.")]
    result = QueryEngine(index_dir, QUERY).search("What arguments does it take?", history=history)
    assert result.query == "What arguments does Trainer.fit take?"
    assert "searched for: What arguments does Trainer.fit take?" in result.notices


def test_missing_index_is_a_one_line_error(tmp_path):
    with pytest.raises(CodegroundError, match="no index in") as err:
        QueryEngine(tmp_path / "nothing", QUERY)
    assert "\n" not in str(err.value)


def test_stale_index_is_refused(tmp_path):
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    bm25 = IndexDir(tmp_path / "idx").current() / "bm25.sqlite3"
    drop_bm25_records(bm25.parent, 1)
    with pytest.raises(CodegroundError, match="stale index"):
        QueryEngine(tmp_path / "idx", PIPELINES_DIR / "bm25.yaml").search("trainer")


def test_index_built_with_another_embedder_is_refused(index_dir, tmp_path):
    other = tmp_path / "other.yaml"
    other.write_text(
        QUERY.read_text().replace(
            "model: sentence-transformers/all-MiniLM-L6-v2", "model: sentence-transformers/other-model"
        )
    )
    with pytest.raises(CodegroundError, match="embedder"):
        QueryEngine(index_dir, other)


def test_empty_question_is_refused(engine):
    with pytest.raises(CodegroundError, match="empty"):
        engine.search("   ")


def test_no_source_means_the_model_is_not_asked_and_the_answer_says_so(tmp_path, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    (tmp_path / "empty").mkdir()
    run_index(tmp_path / "empty", tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    tokens: list[str] = []
    result = QueryEngine(tmp_path / "idx", PIPELINES_DIR / "bm25.yaml").answer(
        "What is X?", on_token=tokens.append
    )
    assert "has nothing on that" in result.answer and "".join(tokens) == result.answer
    assert result.documents == []
    assert not [r for r in fake_ollama.requests if r.path == "/api/chat"]


def test_answer_naming_an_invented_api_is_flagged(index_dir, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="Call `Trainer.fit_fast(data, turbo=True)` or `Trainer.fit(data)`.")
    result = QueryEngine(index_dir, QUERY).answer("How do I fit a Trainer?")
    assert result.grounding["unknown"] == ["Trainer.fit_fast", "turbo"]
    assert "Trainer.fit" in result.grounding["grounded"]
    assert "not found in this repository: Trainer.fit_fast, turbo" in result.notices


def test_every_notice_the_shipped_pipeline_raises_has_a_kind(index_dir, fake_ollama, monkeypatch):
    from haystack.dataclasses import ChatMessage

    from codeground.components.notices import KINDS, kind_of

    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    answer = "Call `Trainer.fit_fast(data)` (pkg/trainer.py:33-35)."

    def reply(body: dict) -> str:  # the rewriter gets a standalone question, the answer step the invention
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        return answer if "Repository material" in last else "How do I fit a Trainer?"

    fake_ollama.configure(reply=reply)
    result = QueryEngine(index_dir, QUERY).answer(
        "How do I fit a Trainer?",
        history=[
            ChatMessage.from_user("What is a Trainer?"),
            ChatMessage.from_assistant("A class."),
        ],
    )
    kinds = [kind_of(n) for n in result.notices]
    assert kinds and all(k in KINDS for k in kinds)
    assert {"rerank_unavailable", "unknown_identifiers"} <= set(kinds)


def test_an_engine_that_built_its_answer_pipeline_is_freed_when_dropped(index_dir, tmp_path):
    """Haystack keeps the exception of a failed optional import (`ChatPromptBuilder`'s `arrow`) with
    every frame that led to it: the first engine of a process that imported it was never freed, nor
    its lease, so a server kept a replaced generation on disk until it stopped. A fresh process, so
    the import happens inside the engine's build as in a server."""
    import subprocess
    import sys

    script = tmp_path / "drop.py"
    script.write_text(
        "import gc, sys, weakref\n"
        "from codeground.app.query.engine import QueryEngine\n"
        "engine = QueryEngine(sys.argv[1], sys.argv[2])\n"
        "engine.warm_up(with_answer=True)\n"
        "freed = weakref.ref(engine)\n"
        "del engine\n"
        "gc.collect()\n"
        "assert 'haystack.components.builders.chat_prompt_builder' in sys.modules\n"
        "assert freed() is None, 'the engine is still referenced'\n"
        "print('freed')\n"
    )
    done = subprocess.run(
        [sys.executable, str(script), str(index_dir), str(PIPELINES_DIR / "query.yaml")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "freed", done.stderr[-2000:]
