"""Run questions through query pipelines and score them (`search-file`, `eval`, `compare`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from codeground.app.bench.evaluation import (
    Question,
    Span,
    latency_summary,
    load_questions,
    recall_at_ks,
    split_half,
)
from codeground.app.errors import CodegroundError
from codeground.app.index.manifest import Manifest
from codeground.app.pipeline.loader import (
    DEFAULT_INDEX_PIPELINE,
    PIPELINES_DIR,
    installed,
    read_pipeline_dict,
    settings_fingerprint,
)
from codeground.app.pipeline.roles import QueryRoles
from codeground.components.grounding.refusal import is_refusal
from codeground.components.notices import RERANK_UNAVAILABLE, kind_of

VARIANT_ORDER = ("query.yaml", "hybrid_norerank.yaml", "bm25.yaml", "dense.yaml")


def _retrieval_fingerprint(path: Path) -> str:
    """Fingerprint of a pipeline without its answer-generation components."""
    data = read_pipeline_dict(path)
    generation = QueryRoles.of(data).generation
    comps = {k: v for k, v in data["components"].items() if k not in generation}
    conns = sorted(
        (c["sender"], c["receiver"])
        for c in data.get("connections", [])
        if c["sender"].split(".")[0] in comps and c["receiver"].split(".")[0] in comps
    )
    return settings_fingerprint({"components": comps, "connections": conns})


def uses_server_store(data: dict[str, Any]) -> bool:
    """Whether a pipeline reads a document store on a server (``host`` set) instead of the index's."""
    from codeground.app.pipeline.loader import _specs

    return any(
        str(spec["type"]).endswith("DocumentStore") and spec["init_parameters"].get("host")
        for spec in _specs(data.get("components", {}))
    )


def default_variants(index_pipeline: Path = DEFAULT_INDEX_PIPELINE) -> list[Path]:
    """Every query pipeline in pipelines/ whose retrieval differs, the four core ones first.

    Index pipelines are excluded, so is a YAML that needs an optional extra that is not installed
    (``query_llamacpp.yaml`` without ``[llamacpp]``), so is a YAML that embeds questions with another
    embedder than ``index_pipeline`` (``query_ollama_embed.yaml`` needs its own index), so is one
    whose stores live on a server rather than in the index (``query_chroma_server.yaml`` reads what
    ``index_chroma_server.yaml`` wrote there), so is one that names another index YAML as the one it
    reads (``metadata.index: index_qdrant.yaml`` in ``query_qdrant.yaml``), and so is a YAML that
    differs from an earlier one only in how it answers (e.g. ``query_openai.yaml``): retrieval figures
    would repeat a row.
    """
    from codeground.app.index.manifest import embedder_identity

    indexed_with = embedder_identity(read_pipeline_dict(index_pipeline))

    def compared(path: Path) -> bool:
        if path.name.startswith("index") or not installed(path):
            return False
        data = read_pipeline_dict(path)
        return (
            embedder_identity(data) in (None, indexed_with)
            and not uses_server_store(data)
            and data.get("metadata", {}).get("index", index_pipeline.name) == index_pipeline.name
        )

    found = sorted(p for p in PIPELINES_DIR.glob("*.yaml") if compared(p))
    rank = {name: i for i, name in enumerate(VARIANT_ORDER)}
    seen: set[str] = set()
    chosen = []
    for path in sorted(found, key=lambda p: (rank.get(p.name, len(rank)), p.name)):
        key = _retrieval_fingerprint(path)
        if key not in seen:
            seen.add(key)
            chosen.append(path)
    return chosen


def guess_prefix(questions: list[Question], manifest: Manifest) -> str:
    """The part of the dataset's paths that lies above the indexed root (``data/raw/vllm-0.10.1/``).

    Found by stripping leading folders from gold paths until one names an indexed file.
    """
    for q in questions:
        for span in q.sources:
            parts = span.file_path.split("/")
            for i in range(len(parts)):
                if "/".join(parts[i:]) in manifest.files:
                    return "/".join(parts[:i]) + ("/" if i else "")
    return ""


def _span(doc) -> Span:
    return Span(doc.meta["file_path"], doc.meta["start_char"], doc.meta["end_char"])


def search_all(engine, questions: list[Question], k: int) -> tuple[dict[str, list[Span]], dict[str, Any]]:
    """Search every question once; returns results and the latencies (seconds), notices seen and the
    number of questions on which the reranker had no opinion (its "reranking unavailable" notice)."""
    results: dict[str, list[Span]] = {}
    latencies: list[float] = []
    notices: dict[str, None] = {}
    no_opinion = 0
    for q in questions:
        t0 = time.perf_counter()
        result = engine.search(q.question, k=k)
        latencies.append(time.perf_counter() - t0)
        results[q.question_id] = [_span(d) for d in result.documents]
        no_opinion += any(kind_of(n) == RERANK_UNAVAILABLE for n in result.notices)
        for notice in result.notices:
            notices.setdefault(notice.split(";")[0], None)
    return results, {"latencies": latencies, "notices": list(notices), "reranker_no_opinion": no_opinion}


def evaluate_pipelines(
    gold: str | Path,
    pipelines: list[Path],
    index_dir: str | Path,
    *,
    path_prefix: str | None = None,
    k: int = 10,
    subsets: dict[str, set[str]] | None = None,
) -> list[dict[str, Any]]:
    """One row per pipeline: recall@1/3/5/10, oversize sources, warm retrieval latency, notices;
    with ``subsets`` (name -> question ids), recall on each of those questions too."""
    from codeground.app.query.engine import QueryEngine

    questions = load_questions(gold, require_sources=True)
    if not questions:
        raise CodegroundError(f"{gold}: no questions")
    rows = []
    for path in pipelines:
        engine = QueryEngine(index_dir, path)
        prefix = path_prefix if path_prefix is not None else guess_prefix(questions, engine.manifest)
        engine.warm_up()
        engine.search(questions[0].question, k=k)  # first query pays lazy loads; not timed
        results, info = search_all(engine, questions, k)
        report = recall_at_ks(questions, results, path_prefix=prefix)
        halves = {
            half: recall_at_ks(subset, results, path_prefix=prefix).recall
            for half in ("tune", "check")
            if (subset := [q for q in questions if split_half(q.question_id) == half])
        }
        by_subset = {
            name: recall_at_ks(subset, results, path_prefix=prefix).recall | {"questions": len(subset)}
            for name, ids in (subsets or {}).items()
            if (subset := [q for q in questions if q.question_id in ids])
        }
        rows.append(
            {
                "pipeline": Path(path).name,
                "questions": report.n_questions,
                "recall": report.recall,
                "recall_halves": halves,
                **({"recall_subsets": by_subset} if subsets else {}),
                "oversize_sources": report.oversize_sources,
                "latency": latency_summary(info["latencies"]),
                "notices": info["notices"],
                # questions whose ranking is the fused order because the reranker had no opinion
                "reranker_no_opinion": info["reranker_no_opinion"],
            }
        )
    return rows


def load_answer_engine(index_dir: str | Path, pipeline: Path) -> tuple[Any, float]:
    """A query engine over ``index_dir`` with its answering model loaded, and the seconds that took."""
    from codeground.app.query.engine import QueryEngine

    t0 = time.perf_counter()
    engine = QueryEngine(index_dir, pipeline)
    engine.warm_up(with_answer=True)
    return engine, time.perf_counter() - t0


def evaluate_answers(
    questions: list[Question],
    pipeline: Path,
    index_dir: str | Path,
    *,
    log: Path | None = None,
    engine: Any = None,
) -> dict[str, Any]:
    """Run the full pipeline with answers: invented-identifier rate (of the answer the user sees and of
    the first answer, before a repair), repairs, refusals (by the model or by the evidence judge, which
    asks no model), LLM failures, latency (to the first streamed token and to the whole answer, the
    model loaded once before: ``load_s``), and correctness: the share of answers with every key fact of
    the question's reference answer (``answering.key_facts``; questions without a reference or without
    facts are left out) and the mean share of facts found.

    With ``log``, every question's row is appended to that JSON-lines file as soon as it is answered,
    and a question already in it (same question id and pipeline) is not asked again: an interrupted run
    resumes where it stopped. ``engine`` (from ``load_answer_engine``) is used as it is, its model
    kept loaded from one call to the next as the chat keeps it (``load_s`` is then None); without one,
    the first question not in the log loads one.
    """
    import json

    from codeground.app.answering.key_facts import facts_found, key_facts
    from codeground.components.notices import NO_ANSWER, REPAIR_SKIPPED

    done: dict[str, dict[str, Any]] = {}
    name = Path(pipeline).name
    if log is not None and log.exists():
        for line in log.read_text().splitlines():
            row = json.loads(line) if line.strip() else None
            if row and row.get("pipeline") == name:
                done[row["question_id"]] = row
    load_s = None
    rows = []
    for q in questions:
        if q.question_id in done:
            rows.append(done[q.question_id])
            continue
        if engine is None:
            engine, load_s = load_answer_engine(index_dir, pipeline)
        first: list[float] = []  # when each token came; the first one is what counts
        t0 = time.perf_counter()
        result = engine.answer(q.question, on_token=lambda _t, seen=first: seen.append(time.perf_counter()))
        seconds = time.perf_counter() - t0
        facts = key_facts(q.answer, q.question) if q.answer else []
        unknown = (result.grounding or {}).get("unknown", [])
        kinds = {kind_of(n) for n in result.notices}
        row = {
            "pipeline": name,
            "question_id": q.question_id,
            "answered": result.answer is not None,
            "refused": result.answer is not None and is_refusal(result.answer),
            "not_asked": NO_ANSWER in kinds,
            "unknown": unknown,
            "first_unknown": result.first_unknown if result.first_answer is not None else unknown,
            "repaired": result.first_answer is not None,
            "repaired_names": result.repaired,
            "first_answer": result.first_answer,
            "repair_skipped": REPAIR_SKIPPED in kinds,
            "withheld": result.withheld is not None,
            "seconds": seconds,
            "first_token_s": first[0] - t0 if first else None,
            "facts": facts,
            "facts_found": facts_found(result.answer or "", facts),
            "ended": time.time(),  # when it was answered (epoch seconds): places it in a run's log
            "answer": result.answer,
        }
        rows.append(row)
        if log is not None:
            with open(log, "a") as out:
                out.write(json.dumps(row) + "\n")
    answered = [r for r in rows if r["answered"]]
    n = len(answered) or 1
    return {
        "pipeline": name,
        "questions": len(rows),
        "answered": len(answered),
        "llm_failures": len(rows) - len(answered),
        "with_unknown": sum(1 for r in answered if r["unknown"]) / n,
        "first_with_unknown": sum(1 for r in answered if r["first_unknown"]) / n,
        "mean_unknown": sum(len(r["unknown"]) for r in answered) / n,
        "repaired": sum(1 for r in answered if r["repaired"]),
        "repair_skipped": sum(1 for r in answered if r["repair_skipped"]),
        # the refusal was the answer: asked again, the model still named what the repository lacks
        "withheld": sum(1 for r in answered if r.get("withheld")),
        "refused": sum(1 for r in answered if r["refused"]),
        "not_asked": sum(1 for r in answered if r["not_asked"]),
        "refusal_rate": sum(1 for r in answered if r["refused"]) / n,
        "latency": latency_summary([r["seconds"] for r in rows]),
        "first_token": latency_summary(
            [r["first_token_s"] for r in rows if r.get("first_token_s") is not None]
        ),
        "load_s": load_s,
        "with_facts": len(checked := [r for r in answered if r.get("facts")]),
        "correct": sum(1 for r in checked if len(r["facts_found"]) == len(r["facts"])) / (len(checked) or 1),
        "fact_recall": sum(len(r["facts_found"]) / len(r["facts"]) for r in checked) / (len(checked) or 1),
        "unknown_names": sorted({u for r in answered for u in r["unknown"]}),
        "per_question": rows,
    }
