"""The default search is deterministic: the same question on the same index through ``query.yaml``
gives the same ordering every time, whether the re-vote's vectors are not kept yet, partly kept (a
fill under way, earlier questions) or all kept, and on a CPU whose vectors move with the shape of the
batch a text is embedded in (bf16 arithmetic: AVX512_BF16, AMX)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from codeground.app.index import revote_fill
from codeground.app.index.index_dir import IndexDir
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict, resolve
from codeground.app.query.engine import QueryEngine
from codeground.components.embedders import openvino_encoder
from codeground.components.inner import build_inner
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

CACHE_PARAM = "components.bi_encoder.init_parameters.document_embedder.init_parameters.cache_path"
QUESTIONS = (
    "How does the trainer run epochs and save checkpoints?",
    "How is the configuration loaded and parsed?",
    "What does the guide say about getting started?",
    "How do I install the package?",
    "Which settings does validate check?",
)


class _ShapeSensitiveRequest:
    """An infer request whose vectors move with the ``[batch, tokens]`` shape they are computed in, by
    about what bf16 rounding moves them on a CPU with AMX (a cosine of about 0.998 to the f32 vector): the
    stand-in for a CPU that no test machine may have."""

    def __init__(self, real) -> None:
        self.real = real
        self.shape: tuple[int, ...] = ()

    def start_async(self, features) -> None:
        self.shape = tuple(features["input_ids"].shape)
        self.real.start_async(features)

    def wait(self) -> None:
        self.real.wait()

    def get_output_tensor(self, index: int):
        data = np.asarray(self.real.get_output_tensor(index).data, dtype=np.float32)
        rng = np.random.default_rng(abs(hash(self.shape)) % (1 << 32))
        return SimpleNamespace(data=data + rng.normal(0.0, 3e-3, data.shape[-1]).astype(np.float32))


@pytest.fixture
def shape_sensitive_cpu(monkeypatch):
    real_init = openvino_encoder.OpenVINOEncoder.__init__

    def init(self, *args, **kwargs) -> None:
        real_init(self, *args, **kwargs)
        self._requests = [_ShapeSensitiveRequest(r) for r in self._requests]

    monkeypatch.setattr(openvino_encoder.OpenVINOEncoder, "__init__", init)


def _query_yaml(tmp_path: Path, vectors: Path) -> Path:
    """The default ``query.yaml``, its re-vote's vectors kept in ``vectors``."""
    path = tmp_path / "query_vectors.yaml"
    base = PIPELINES_DIR / "query.yaml"
    path.write_text(yaml.safe_dump({"extends": str(base), "set": {CACHE_PARAM: str(vectors)}}))
    return path


def _orderings(index_dir: Path, query: Path) -> list[list[tuple[str, float]]]:
    """Each question's ids (with their scores, rounded) from a freshly built default pipeline."""
    engine = QueryEngine(index_dir, query)
    return [[(d.id, round(d.score or 0.0, 9)) for d in engine.search(q, k=10).documents] for q in QUESTIONS]


def _keep_some(index_dir: Path, query: Path, every: int) -> None:
    """Keep the re-vote's vectors of every ``every``-th record, as a fill stopped part way (or earlier
    questions) leaves them: through the query YAML's own embedder, all in one call."""
    [(_, spec)] = revote_fill.revote_embedders(query)
    embedder = build_inner(spec, "bi_encoder")
    embedder.warm_up()
    store = SQLiteBM25DocumentStore(persist_path=str(IndexDir(index_dir).current() / revote_fill.RECORDS))
    try:
        docs = store.filter_documents()[::every]
    finally:
        store.close()
    embedder.run(documents=docs)


def test_one_question_gives_one_ordering_whatever_the_re_votes_vectors_kept(
    indexed_sample, tmp_path, shape_sensitive_cpu
):
    _, index_dir = indexed_sample
    vectors = tmp_path / "vectors.sqlite"
    query = _query_yaml(tmp_path, vectors)
    empty = _orderings(index_dir, query)  # nothing kept: every candidate embedded at the question
    vectors.unlink()
    for name in (vectors.name + "-wal", vectors.name + "-shm"):
        (vectors.parent / name).unlink(missing_ok=True)
    _keep_some(index_dir, query, every=3)
    partly = _orderings(index_dir, query)  # some candidates from the cache, the rest embedded now
    assert revote_fill.fill(index_dir, query)["state"] == "done"
    full = _orderings(index_dir, query)  # every candidate from the fill's vectors
    again = _orderings(index_dir, query)
    assert empty == partly == full == again


def test_the_re_vote_embeds_each_text_alone_so_its_vector_is_the_same_in_any_company():
    """A kept vector serves whichever question ranks the record later: it must be the vector that
    question would compute, whatever else the fill or the question embedded beside it."""
    spec = resolve(read_pipeline_dict(PIPELINES_DIR / "query.yaml"))["components"]["bi_encoder"]
    inner = spec["init_parameters"]["document_embedder"]["init_parameters"]["embedder"]
    assert inner["init_parameters"]["batch_size"] == 1
