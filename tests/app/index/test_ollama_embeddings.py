"""Ollama embeddings (index_ollama.yaml + query_ollama_embed.yaml) against the fake server, real Chroma."""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from codeground.app.cli import cli
from codeground.app.errors import CodegroundError
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.indexing import run_index
from codeground.app.index.manifest import Manifest, embedder_identity
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.app.query.engine import QueryEngine
from tests.conftest import closed_port, make_sample_repo
from tests.fake_ollama import FakeOllama

INDEX_OLLAMA = PIPELINES_DIR / "index_ollama.yaml"
QUERY_OLLAMA = PIPELINES_DIR / "query_ollama_embed.yaml"
MODELS = {"nomic-embed-text", "qwen2.5-coder:7b", "qwen2.5-coder:1.5b"}
# the default pipelines' embedder as the refusal names it, e.g. "… all-MiniLM-L6-v2 via …Embedder"
DEFAULT_EMBEDDER = str(embedder_identity(read_pipeline_dict(PIPELINES_DIR / "index.yaml")))


def bag_of_words(text: str, dim: int = 256) -> list[float]:
    """A fake embedding model with meaning: texts sharing words get close vectors."""
    vec = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


@pytest.fixture(scope="module")
def ollama():
    with FakeOllama(models=MODELS, embedding=bag_of_words) as fake:
        yield fake


@pytest.fixture(scope="module")
def ollama_index(ollama, tmp_path_factory) -> tuple[Path, Path]:
    """``(repo, index_dir)``: the sample repository indexed once with Ollama embeddings."""
    base = tmp_path_factory.mktemp("ollama_idx")
    repo = make_sample_repo(base / "repo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OLLAMA_HOST", ollama.url)
        run_index(repo, base / "idx", INDEX_OLLAMA)
    return repo, base / "idx"


@pytest.fixture
def at_ollama(ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", ollama.url)
    ollama.reset()
    return ollama


def test_documents_are_embedded_as_search_document_prefix_then_header_then_text(ollama, ollama_index):
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    _, index_dir = ollama_index
    requests = ollama.requests_to("/api/embed")
    assert requests and all(r.body["model"] == "nomic-embed-text" for r in requests)
    sent = sorted(text for r in requests for text in r.body["input"])
    store = SQLiteBM25DocumentStore(persist_path=str(IndexDir(index_dir).current() / "bm25.sqlite3"))
    records = store.filter_documents()
    # the stock embedder joins prefix + header + "\n" + text, then turns newlines into spaces
    expected = sorted(
        ("search_document: " + d.meta["header"] + "\n" + d.content).replace("\n", " ") for d in records
    )
    assert sent == expected
    forward = next(t for t in sent if "| Symbol: Gemma2DecoderLayer.forward |" in t)
    assert forward.startswith("search_document: File: pkg/trainer.py | Symbol: Gemma2DecoderLayer.forward")


def test_manifest_records_the_ollama_embedder_kind_model_and_dimension(ollama_index):
    manifest = Manifest.load(IndexDir(ollama_index[1]).current())
    assert (manifest.embedder_kind, manifest.embedder, manifest.embedding_dim) == (
        "OllamaEmbedder",
        "nomic-embed-text",
        256,
    )


def test_question_is_embedded_as_search_query_prefix_and_dense_retrieval_finds_the_symbol(
    at_ollama, ollama_index, tmp_path
):
    # dense.yaml with the Ollama query side: only the Ollama vectors decide the ranking
    data = read_pipeline_dict(PIPELINES_DIR / "dense.yaml")
    ollama_side = read_pipeline_dict(QUERY_OLLAMA)
    for name in ("query_prefix", "query_embedder"):
        data["components"][name] = ollama_side["components"][name]
    data["connections"] = [c for c in data["connections"] if c["receiver"] != "query_embedder.text"]
    data["connections"] += [
        {"sender": "rewriter.query", "receiver": "query_prefix.query"},
        {"sender": "query_prefix.prompt", "receiver": "query_embedder.text"},
    ]
    dense_ollama = tmp_path / "dense_ollama.yaml"
    dense_ollama.write_text(yaml.safe_dump(data, sort_keys=False))

    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    question = "How does Gemma2DecoderLayer forward work?"  # a question: the file rules keep the order
    result = QueryEngine(ollama_index[1], dense_ollama).search(question, k=3)
    asked = at_ollama.requests_to("/api/embed")
    assert [r.body["input"] for r in asked] == [f"search_query: {question}"]
    # the ranking is the one the server's vectors give: cosine of the prefixed texts
    records = SQLiteBM25DocumentStore(
        persist_path=str(IndexDir(ollama_index[1]).current() / "bm25.sqlite3")
    ).filter_documents()
    q = bag_of_words(f"search_query: {question}")

    def cosine(doc) -> float:
        text = ("search_document: " + doc.meta["header"] + "\n" + doc.content).replace("\n", " ")
        return sum(a * b for a, b in zip(q, bag_of_words(text), strict=True))

    expected = [d.id for d in sorted(records, key=cosine, reverse=True)[:3]]
    assert [d.id for d in result.documents] == expected
    assert {d.meta["symbol"] for d in result.documents} >= {"Gemma2DecoderLayer.forward"}


def test_full_ollama_query_pipeline_answers_over_the_ollama_index(at_ollama, ollama_index):
    result = QueryEngine(ollama_index[1], QUERY_OLLAMA).answer("How do I fit a Trainer?")
    assert result.answer and result.documents
    assert at_ollama.requests_to("/api/embed")[0].body["input"] == "search_query: How do I fit a Trainer?"
    assert at_ollama.requests_to("/api/chat")


def test_querying_a_minilm_index_with_the_ollama_pipeline_is_refused_naming_both_embedders(indexed_sample):
    with pytest.raises(CodegroundError) as err:
        QueryEngine(indexed_sample[1], QUERY_OLLAMA)
    message = str(err.value)
    assert "\n" not in message
    assert DEFAULT_EMBEDDER in message
    assert "nomic-embed-text via OllamaEmbedder" in message
    assert "--pipeline pipelines/index_ollama.yaml" in message and "pipelines/query.yaml" in message


def test_querying_an_ollama_index_with_the_minilm_pipeline_is_refused_naming_both_embedders(ollama_index):
    with pytest.raises(CodegroundError) as err:
        QueryEngine(ollama_index[1], PIPELINES_DIR / "query.yaml")
    message = str(err.value)
    assert "nomic-embed-text via OllamaEmbedder" in message
    assert DEFAULT_EMBEDDER in message
    assert "--pipeline pipelines/query_ollama_embed.yaml" in message
    assert "--pipeline pipelines/index.yaml" in message


def test_cli_refusal_of_the_wrong_embedder_is_one_line(ollama_index):
    result = CliRunner().invoke(
        cli,
        [
            "search",
            "trainer",
            "--index-dir",
            str(ollama_index[1]),
            "--pipeline",
            str(PIPELINES_DIR / "dense.yaml"),
        ],
    )
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 1 and len(lines) == 1 and "nomic-embed-text via OllamaEmbedder" in lines[0]


def test_bm25_only_pipeline_needs_no_embedder_and_reads_the_ollama_index(ollama_index):
    result = QueryEngine(ollama_index[1], PIPELINES_DIR / "bm25.yaml").search("Trainer fit", k=3)
    assert result.documents


def test_ollama_down_during_indexing_is_one_line_and_leaves_the_previous_generation(
    ollama, tmp_path, monkeypatch
):
    repo = make_sample_repo(tmp_path / "repo")
    monkeypatch.setenv("OLLAMA_HOST", ollama.url)
    run_index(repo, tmp_path / "idx", INDEX_OLLAMA)
    location = IndexDir(tmp_path / "idx")
    live = location.current()
    before = {p.relative_to(live): p.read_bytes() for p in sorted(live.rglob("*")) if p.is_file()}

    added = "\n\ndef changed_function(x):\n    return x\n"  # a new record: something to embed
    (repo / "pkg" / "trainer.py").write_text((repo / "pkg" / "trainer.py").read_text() + added)
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(CodegroundError) as err:
        run_index(repo, tmp_path / "idx", INDEX_OLLAMA)
    message = str(err.value)
    assert "\n" not in message
    assert "'embedder' (OllamaDocumentEmbedder)" in message and "codeground ollama serve" in message
    assert location.current() == live
    assert [p.name for p in (tmp_path / "idx").glob("gen-*")] == [live.name]
    after = {p.relative_to(live): p.read_bytes() for p in sorted(live.rglob("*")) if p.is_file()}
    assert after == before

    cli_run = CliRunner().invoke(
        cli, ["index", str(repo), "--index-dir", str(tmp_path / "idx"), "--pipeline", str(INDEX_OLLAMA)]
    )
    lines = [ln for ln in cli_run.output.splitlines() if ln.strip() and ln.startswith("error:")]
    assert cli_run.exit_code == 1 and len(lines) == 1 and "Traceback" not in cli_run.output
    assert QueryEngine(tmp_path / "idx", PIPELINES_DIR / "bm25.yaml").search("Trainer fit", k=3).documents


def test_embedding_model_missing_on_the_server_says_how_to_pull_it(tmp_path, monkeypatch):
    repo = make_sample_repo(tmp_path / "repo")
    with FakeOllama(models={"qwen2.5-coder:7b"}) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        with pytest.raises(
            CodegroundError, match=r'model "nomic-embed-text" not found.*codeground ollama serve'
        ):
            run_index(repo, tmp_path / "idx", INDEX_OLLAMA)
    assert IndexDir(tmp_path / "idx").current() is None


def test_switching_the_index_pipeline_to_ollama_rebuilds_everything(
    ollama, indexed_sample, tmp_path, monkeypatch
):
    repo, _ = indexed_sample
    monkeypatch.setenv("OLLAMA_HOST", ollama.url)
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE

    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    result = run_index(repo, tmp_path / "idx", INDEX_OLLAMA)
    assert result.full and result.reason.startswith("embedder changed")
    assert "nomic-embed-text via OllamaEmbedder" in result.reason


def test_ollama_down_when_embedding_the_question_is_one_line_with_the_fix(ollama_index, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(CodegroundError) as err:
        QueryEngine(ollama_index[1], QUERY_OLLAMA).search("Trainer fit")
    message = str(err.value)
    assert "\n" not in message and "'query_embedder'" in message
    assert message.endswith("start Ollama and pull the model with `codeground ollama serve`")
