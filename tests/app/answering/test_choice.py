"""The answering model is chosen at start: an Ollama that answers, else a configured endpoint, else the
embedded model; what cannot run falls back to the search with one line saying what to do."""

from __future__ import annotations

import pytest

from codeground.app.answering import choice
from codeground.app.answering.choice import choose
from codeground.app.answering.models import ANSWER_MODELS, EMBEDDED, AnswerModel
from codeground.app.errors import CodegroundError
from codeground.app.pipeline.loader import PIPELINES_DIR
from tests.conftest import closed_port


@pytest.fixture
def auto(monkeypatch, tmp_path):
    """``CODEGROUND_ANSWERS=auto``, no endpoint configured, an empty model cache; the cache folder."""
    monkeypatch.setenv("CODEGROUND_ANSWERS", "auto")
    monkeypatch.delenv("CODEGROUND_OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("CODEGROUND_GGUF", raising=False)
    return tmp_path / "cache"


def _cached(cache):
    path = ANSWER_MODELS[EMBEDDED].path(cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF")
    return path


def test_a_given_pipeline_is_used_as_it_is(auto):
    picked = choose(PIPELINES_DIR / "bm25.yaml", cache=auto)
    assert (picked.pipeline.name, picked.runtime, picked.note) == ("bm25.yaml", "given", None)


def test_a_given_pipeline_that_answers_with_the_embedded_model_gets_it_fetched_once(auto):
    lines: list[str] = []
    picked = choose(PIPELINES_DIR / "query_embedded.yaml", cache=auto, say=lines.append)
    # offline here (PIP_NO_INDEX, conftest): the one fetch is tried and said, and the line says what to do
    assert picked.runtime == "given" and picked.pipeline.name == "query_embedded.yaml"
    assert len(lines) == 1 and lines[0].startswith(f"fetching {EMBEDDED}")
    assert picked.note.startswith("no answering model: could not fetch") and "\n" not in picked.note
    _cached(auto)
    again = choose(PIPELINES_DIR / "query_embedded.yaml", cache=auto, say=pytest.fail)  # cached: no fetch
    assert again.note is None
    assert choose(PIPELINES_DIR / "query.yaml", cache=auto, say=pytest.fail).note is None  # Ollama's: none


def test_an_ollama_that_answers_is_chosen_first(auto, fake_ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("CODEGROUND_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    picked = choose(None, cache=auto)
    assert (picked.pipeline.name, picked.runtime, picked.note) == ("query.yaml", "ollama", None)
    assert any(r.path == "/api/version" for r in fake_ollama.requests)


def test_with_ollama_down_a_configured_endpoint_is_chosen(auto, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("CODEGROUND_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    picked = choose(None, cache=auto)
    assert (picked.pipeline.name, picked.runtime) == ("query_openai.yaml", "openai")


def test_with_no_server_the_cached_embedded_model_answers(auto, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setattr(choice, "embedded_runtime_installed", lambda: True)
    _cached(auto)
    picked = choose(None, cache=auto, say=pytest.fail)  # cached: nothing is fetched
    assert (picked.pipeline.name, picked.runtime, picked.note) == ("query_embedded.yaml", "embedded", None)


def test_offline_with_nothing_cached_falls_back_with_one_line_saying_what_to_do(auto, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setattr(choice, "embedded_runtime_installed", lambda: True)
    lines: list[str] = []
    picked = choose(None, cache=auto, say=lines.append)  # PIP_NO_INDEX (conftest): pip finds nothing
    assert picked.pipeline.name == "query.yaml" and picked.runtime == "ollama"
    assert len(lines) == 1 and lines[0].startswith(f"fetching {EMBEDDED}")
    assert picked.note.startswith("no answering model: could not fetch") and "\n" not in picked.note
    assert "just ollama" in picked.note and "fetch-model qwen2.5-coder-0.5b" in picked.note
    assert list((auto / "models").iterdir()) == []  # nothing half-written


def test_without_the_embedded_runtime_the_note_says_how_to_install_it(auto, monkeypatch):
    monkeypatch.setenv("CODEGROUND_ANSWERS", "embedded")
    monkeypatch.setattr(choice, "embedded_runtime_installed", lambda: False)
    picked = choose(None, cache=auto, say=pytest.fail)
    assert picked.pipeline.name == "query.yaml" and "`just setup` installs it" in picked.note


def test_a_gguf_named_by_the_user_that_is_missing_is_named_and_not_fetched(auto, monkeypatch, tmp_path):
    monkeypatch.setenv("CODEGROUND_ANSWERS", "embedded")
    monkeypatch.setenv("CODEGROUND_GGUF", str(tmp_path / "nope.gguf"))
    monkeypatch.setattr(choice, "embedded_runtime_installed", lambda: True)
    picked = choose(None, cache=auto, say=pytest.fail)
    assert picked.pipeline.name == "query.yaml" and "nope.gguf" in picked.note


@pytest.mark.parametrize("setting, name", [("ollama", "query.yaml"), ("openai", "query_openai.yaml")])
def test_the_setting_forces_a_runtime_without_probing(auto, monkeypatch, setting, name):
    monkeypatch.setenv("CODEGROUND_ANSWERS", setting)
    monkeypatch.setattr(choice, "ollama_answers", lambda url: pytest.fail("probed"))
    assert choose(None, cache=auto).pipeline.name == name


def test_an_unknown_setting_is_one_line_naming_the_choices(auto, monkeypatch):
    monkeypatch.setenv("CODEGROUND_ANSWERS", "gpu")
    with pytest.raises(CodegroundError, match="auto, ollama, openai, embedded"):
        choose(None, cache=auto)


def test_doctor_names_the_embedded_model_that_would_answer_and_fetches_nothing(
    auto, monkeypatch, indexed_sample, tmp_path
):
    from tests.reliability.helpers import cg

    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setattr(choice, "embedded_runtime_installed", lambda: True)
    monkeypatch.setattr(AnswerModel, "ensure", lambda *a, **k: pytest.fail("fetched"))
    gguf = tmp_path / "model.gguf"
    monkeypatch.setenv("CODEGROUND_GGUF", str(gguf))
    missing = cg("doctor", "--index-dir", indexed_sample[1])
    assert "note: $CODEGROUND_GGUF names no file" in missing.stdout and missing.exit_code == 1
    gguf.write_bytes(b"GGUF")
    found = cg("doctor", "--index-dir", indexed_sample[1])
    assert "the embedded model answers in-process" in found.stdout and "Ollama" not in found.stdout
