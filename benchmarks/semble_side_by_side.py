"""semble on this machine, for `codeground bench --semble DIR --side-by-side OUT.json`.

Run with the python of a venv that has semble (never a dependency of codeground's):

    python3 -m venv /tmp/semble-venv && /tmp/semble-venv/bin/pip install semble
    /tmp/semble-venv/bin/python benchmarks/semble_side_by_side.py ../shared/bench-data/semble \
        --model ~/.cache/codeground/models/<…-static256-…> --out semble-here.json

For every repository of ``DIR/repos.json`` (optionally ``--language``/``--repo-name``) it builds
``SembleIndex.from_path(benchmark_root, model_path=MODEL)`` in a fresh cache folder (so the index
time is a full build; semble caches indexes under ``$XDG_CACHE_HOME``) and writes, per query, the
top-10 results' ``file_path`` (relative to the benchmark root, as semble gives it) and 1-based
``start_line``/``end_line``. It scores nothing: codeground's scorer scores both systems. Per
repository it also records the index seconds, chunk count and warm search latency (every search
after the first; p50/p95 in ms). Only the standard library and semble are imported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile, as codeground.app.bench.semble_bench.percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 100)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--model", required=True, help="model2vec folder (codeground's static256 model)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--language", action="append", default=[])
    parser.add_argument("--repo-name", action="append", default=[])
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args()

    cache = tempfile.mkdtemp(prefix="semble-cache-")
    os.environ["XDG_CACHE_HOME"] = cache  # before semble is imported: a fresh, full index per run
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import semble
    from semble import SembleIndex

    specs = json.loads((args.data_dir / "repos.json").read_text())
    out: dict = {
        "system": f"semble {semble.__version__}",
        "model_path": str(Path(args.model).expanduser()),
        "python": platform.python_version(),
        "cache": cache,
        "repos": {},
    }
    for spec in specs:
        if (args.language and spec["language"] not in args.language) or (
            args.repo_name and spec["name"] not in args.repo_name
        ):
            continue
        root = args.data_dir / "repos" / spec["name"] / (spec.get("benchmark_root") or "")
        queries = json.loads((args.data_dir / "annotations" / f"{spec['name']}.json").read_text())
        t0 = time.perf_counter()
        index = SembleIndex.from_path(root, model_path=str(Path(args.model).expanduser()))
        index_s = time.perf_counter() - t0
        rows, seconds = [], []
        for q in queries:
            t1 = time.perf_counter()
            results = index.search(q["query"], top_k=args.k)
            seconds.append(time.perf_counter() - t1)
            rows.append(
                {
                    "query": q["query"],
                    "results": [
                        {
                            "file_path": r.chunk.file_path,
                            "start_line": r.chunk.start_line,
                            "end_line": r.chunk.end_line,
                        }
                        for r in results
                    ],
                }
            )
        warm = [s * 1000 for s in seconds[1:]]
        out["repos"][spec["name"]] = {
            "language": spec["language"],
            "index_s": round(index_s, 2),
            "chunks": len(index.chunks),
            "latency": {
                "searches": len(warm),
                "p50_ms": round(percentile(warm, 50) or 0, 2),
                "p95_ms": round(percentile(warm, 95) or 0, 2),
            },
            "queries": rows,
        }
        print(f"{spec['name']}: {len(index.chunks)} chunks, {index_s:.1f} s", file=sys.stderr, flush=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
