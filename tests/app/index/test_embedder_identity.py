"""Embedder identity (kind + model) read from pipeline definitions, and what an index accepts."""

from __future__ import annotations

import pytest

from codeground.app.index.manifest import EmbedderIdentity, Manifest, embedder_identity
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict

ST = "haystack_integrations.components.embedders.sentence_transformers."
OLLAMA = "haystack_integrations.components.embedders.ollama."


def pipeline(*specs: dict) -> dict:
    return {"components": {f"c{i}": s for i, s in enumerate(specs)}}


def test_document_and_text_embedders_of_one_family_share_a_kind():
    doc = pipeline(
        {
            "type": ST + "sentence_transformers_document_embedder.SentenceTransformersDocumentEmbedder",
            "init_parameters": {"model": "m"},
        }
    )
    text = pipeline(
        {
            "type": ST + "sentence_transformers_text_embedder.SentenceTransformersTextEmbedder",
            "init_parameters": {"model": "m"},
        }
    )
    assert (
        embedder_identity(doc)
        == embedder_identity(text)
        == EmbedderIdentity("SentenceTransformersEmbedder", "m")
    )
    ollama_doc = pipeline(
        {"type": OLLAMA + "document_embedder.OllamaDocumentEmbedder", "init_parameters": {"model": "m"}}
    )
    assert embedder_identity(ollama_doc) == EmbedderIdentity("OllamaEmbedder", "m") != embedder_identity(doc)


def test_a_wrapping_component_is_looked_through_to_the_embedder_inside():
    wrapped = pipeline(
        {
            "type": "codeground.components.embedders.cached_text.CachedTextEmbedder",
            "init_parameters": {
                "cache_size": 8,
                "embedder": {
                    "type": OLLAMA + "text_embedder.OllamaTextEmbedder",
                    "init_parameters": {"model": "x"},
                },
            },
        }
    )
    assert embedder_identity(wrapped) == EmbedderIdentity("OllamaEmbedder", "x")


def test_a_pipeline_without_an_embedder_has_no_identity():
    assert embedder_identity(read_pipeline_dict(PIPELINES_DIR / "bm25.yaml")) is None


QUERY_YAMLS = [p for p in sorted(PIPELINES_DIR.glob("*.yaml")) if not p.name.startswith("index")]


@pytest.mark.parametrize("path", QUERY_YAMLS, ids=[p.name for p in QUERY_YAMLS])
def test_every_shipped_query_yaml_embeds_questions_like_some_shipped_index_yaml(path):
    wanted = embedder_identity(read_pipeline_dict(path))
    indexes = {embedder_identity(read_pipeline_dict(p)) for p in PIPELINES_DIR.glob("index*.yaml")}
    assert wanted is None or wanted in indexes, f"{path.name} embeds with {wanted}; index YAMLs: {indexes}"


def test_an_index_accepts_only_its_own_kind_and_model():
    manifest = Manifest(embedder="m", embedder_kind="OllamaEmbedder", settings="", root="/r")
    assert manifest.embedded_by(EmbedderIdentity("OllamaEmbedder", "m"))
    assert not manifest.embedded_by(EmbedderIdentity("SentenceTransformersEmbedder", "m"))
    assert not manifest.embedded_by(EmbedderIdentity("OllamaEmbedder", "other"))
    assert manifest.embedded_by(None)  # a pipeline that embeds nothing reads any index


def test_an_index_of_another_format_is_refused_with_the_command_that_rebuilds_it(tmp_path):
    from codeground.app.errors import CodegroundError
    from codeground.app.index.live import open_index

    gen = tmp_path / "idx" / "gen-1"
    gen.mkdir(parents=True)
    (tmp_path / "idx" / "CURRENT").write_text("gen-1\n")
    (gen / "manifest.json").write_text('{"embedder": "m", "settings": "s", "root": "/r"}')  # the first format
    assert Manifest.load(gen).format == 1
    idx = (tmp_path / "idx").resolve()
    with pytest.raises(
        CodegroundError, match=rf"index format 1.*`codeground index /r --full --index-dir {idx}`"
    ):
        open_index(tmp_path / "idx")
