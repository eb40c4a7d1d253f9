"""The Qdrant pair in the benchmark: beside the default pipelines in one run, and a scale simulation.

Rules:
- ``qdrant_side_by_side``: the same measurements ``run_bench`` makes for the default pair (full and
  incremental index, recall and warm latency on the dev sets, cold ``codeground search``), made for
  ``index_qdrant.yaml`` + ``query_qdrant.yaml`` in Qdrant's local mode, into ``<cache>/bench/qdrant-index``.
- ``scale``: what one record costs (its dense vector, sparse vector and payload, as Qdrant is sent
  them: 4 bytes a dimension; 8 bytes a sparse entry, a u32 index and an f32 value; the payload as
  JSON) and the query latency of the dense and the sparse search over the benchmark's collection
  copied ``k`` times (new ids, payload cut to the id: latency of the search, not of the payload) into
  an in-memory local collection. Local mode searches by brute force in Python, so these latencies
  grow linearly and say nothing about a server, whose HNSW and inverted indexes are sublinear;
  docs/measurements/qdrant.md's projection to 10 M records across shards is on paper and labelled
  unvalidated.

Usage (needs a Qdrant benchmark index, so not run here):
```python
from codeground.app.bench.qdrant_bench import bytes_per_record

sizes = bytes_per_record([{"vector": {"text-dense": [0.0] * 4, "text-sparse": ([1, 2], [0.5, 0.5])},
                           "payload": {"id": "a"}}])
assert sizes["dense"] == 16 and sizes["sparse"] == 16
```
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeground.app.pipeline.loader import PIPELINES_DIR

INDEX = PIPELINES_DIR / "index_qdrant.yaml"
QUERY = PIPELINES_DIR / "query_qdrant.yaml"


def qdrant_side_by_side(
    repo: Path, gold_dir: Path, cache: Path, *, on_stage: Callable[[str], None] = lambda s: None
) -> dict[str, Any]:
    """Index, incremental, recall, warm latency and cold start of the Qdrant pair (module rule)."""
    from codeground.app.bench.eval_runner import evaluate_pipelines
    from codeground.app.bench.timings import _cold_start, _incremental, _peak_rss_mb, _timed_index

    index_dir = cache / "bench" / "qdrant-index"
    import shutil

    shutil.rmtree(index_dir, ignore_errors=True)
    on_stage(f"Qdrant pair: full index of {repo} (local mode)")
    report: dict[str, Any] = {"index": _timed_index(repo, index_dir, INDEX, full=True)}
    report["index"]["peak_rss_mb"] = round(_peak_rss_mb())
    report["index"]["bytes_on_disk"] = sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file())
    on_stage("Qdrant pair: incremental index after touching one .py and one .md")
    report["incremental"] = _incremental(repo, index_dir, INDEX)
    report["retrieval"] = {}
    for name in ("docs", "code"):
        gold = gold_dir / f"{name}.json"
        if gold.is_file():
            on_stage(f"Qdrant pair: recall and warm latency on {gold.name}")
            report["retrieval"][name] = evaluate_pipelines(gold, [QUERY], index_dir)
    import gc

    gc.collect()  # the engines above are garbage: their local client lets go of the folder's lock
    on_stage("Qdrant pair: cold start of `codeground search` (3 runs)")
    report["cold_start"] = _cold_start(index_dir, "How do I load a LoRA adapter?", QUERY, runs=3)
    return report


def _points(index_dir: Path) -> list[Any]:
    from codeground.app.index.live import open_index
    from codeground.components.stores.qdrant import CodegroundQdrantDocumentStore

    gen, _ = open_index(index_dir)
    # our store shares the folder's client with any pipeline of this process still holding it
    store = CodegroundQdrantDocumentStore(
        path=str(gen / "qdrant"),
        index="codeground",
        use_sparse_embeddings=True,
        embedding_dim=256,
        sparse_idf=True,
        create_collection=False,
        progress_bar=False,
    )
    store.count_documents()  # opens the client
    try:
        points: list[Any] = []
        offset = None
        while True:
            batch, offset = store._client.scroll(
                "codeground", limit=10_000, offset=offset, with_payload=True, with_vectors=True
            )
            points.extend(batch)
            if offset is None:
                return points
    finally:
        store.close()


def bytes_per_record(points: list[dict[str, Any]]) -> dict[str, float]:
    """Mean bytes a record sends to Qdrant: dense vector, sparse vector, payload (module rule).
    ``points``: ``{"vector": {"text-dense": [...], "text-sparse": (indices, values)}, "payload": {...}}``."""
    dense = sparse = payload = 0
    for p in points:
        vector = p["vector"]
        dense += 4 * len(vector.get("text-dense") or [])
        if "text-sparse" in vector:
            sparse += 8 * len(vector["text-sparse"][0])
        payload += len(json.dumps(p["payload"]).encode())
    n = len(points) or 1
    return {"dense": dense / n, "sparse": sparse / n, "payload": payload / n}


def _plain(point: Any) -> dict[str, Any]:
    vector = dict(point.vector)
    if "text-sparse" in vector:
        vector["text-sparse"] = (vector["text-sparse"].indices, vector["text-sparse"].values)
    return {"vector": vector, "payload": point.payload}


def scale(
    index_dir: Path,
    questions: list[str],
    *,
    copies: tuple[int, ...] = (1, 10),
    queries: int = 3,
    on_stage: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    """Bytes per record and the dense/sparse search latency at each number of ``copies`` (module rule)."""
    import qdrant_client
    from qdrant_client.http import models as rest

    from codeground.app.pipeline.loader import read_pipeline_dict, resolve
    from codeground.components.embedders.sparse_terms import SparseTermTextEmbedder
    from codeground.components.inner import build_inner

    points = _points(index_dir)
    sizes = bytes_per_record([_plain(p) for p in points])
    spec = resolve(read_pipeline_dict(QUERY))["components"]["query_embedder"]
    embedder = build_inner(spec, "query_embedder")
    embedder.warm_up()
    sparse = SparseTermTextEmbedder()
    asked = questions[:queries]
    dense_q = [embedder.run(text=q)["embedding"] for q in asked]
    sparse_q = [sparse.run(text=q)["sparse_embedding"] for q in asked]
    dim = len(dense_q[0])
    rows = []
    for k in copies:
        on_stage(f"Qdrant scale: {k} × {len(points)} records in an in-memory local collection")
        client = qdrant_client.QdrantClient(location=":memory:")
        client.create_collection(
            "scale",
            vectors_config={"text-dense": rest.VectorParams(size=dim, distance=rest.Distance.COSINE)},
            sparse_vectors_config={"text-sparse": rest.SparseVectorParams(modifier=rest.Modifier.IDF)},
        )
        t0 = time.perf_counter()
        for copy in range(k):
            batch = [
                rest.PointStruct(
                    id=str(uuid.uuid5(uuid.NAMESPACE_OID, f"{copy}:{p.id}")),
                    vector=p.vector,
                    payload={"id": f"{(p.payload or {}).get('id')}#{copy}"},
                )
                for p in points
            ]
            for i in range(0, len(batch), 5000):
                client.upsert("scale", points=batch[i : i + 5000], wait=True)
        load_s = time.perf_counter() - t0
        timings: dict[str, list[float]] = {"dense": [], "sparse": []}
        for dq, sq in zip(dense_q, sparse_q, strict=True):
            for name, query in (("dense", dq), ("sparse", rest.SparseVector(**sq.to_dict()))):
                t = time.perf_counter()
                client.query_points("scale", query=query, using=f"text-{name}", limit=24, with_payload=True)
                timings[name].append(time.perf_counter() - t)
        client.close()
        rows.append(
            {
                "records": k * len(points),
                "load_s": round(load_s, 1),
                "dense_ms_median": round(1000 * statistics.median(timings["dense"])),
                "sparse_ms_median": round(1000 * statistics.median(timings["sparse"])),
                "queries": len(asked),
            }
        )
    return {"records": len(points), "bytes_per_record": {k: round(v) for k, v in sizes.items()}, "rows": rows}
