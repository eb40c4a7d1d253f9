"""`codeground bench --answers`: the answers a user gets, on a fixed list of questions, timed.

Rule: every query YAML given (default: the one `query` would choose here, ``answering.choice``) answers
the same fixed list: the first ``limit`` questions of the development sets' ``code.json`` and
``docs.json`` and of a file of questions the repository cannot answer, one after the other in one
process, with one engine per YAML whose model is loaded once before its first question (``load_s``)
and kept loaded, as the chat, `serve` and `mcp` keep it. No question is asked twice in a process, so
no answer is a cached one. Each YAML's summary holds what issue 57 sets targets for (``TARGETS``):

- time to the first streamed token (from the question: search, premise check, reading the prompt)
  and to the whole answer, p50 / p95 over every question;
- ``invented_shown``: share of answers the user is given *as the answer* that name an identifier the
  repository lacks (a withheld answer is not shown as the answer);
- ``refused_unanswerable``: share of the unanswerable questions refused (by the premise rule, the
  model, or the withheld rule); ``false_refusals``: share of the answerable ones refused;
- ``correct``: share of answerable questions with key facts whose answer carries every one of them
  (``answering.key_facts``), and the mean share of facts found.

Usage:
```python
from codeground.app.bench.answer_bench import summarize

rows = [{"set": "code", "per_question": [{"answered": True, "refused": False, "unknown": [],
         "withheld": False, "first_token_s": 1.0, "seconds": 3.0, "facts": ["x"], "facts_found": ["x"]}]},
        {"set": "unanswerable", "per_question": [{"answered": True, "refused": True, "unknown": [],
         "withheld": False, "first_token_s": 0.5, "seconds": 0.5, "facts": [], "facts_found": []}]}]
s = summarize(rows, load_s=2.0)
assert s["refused_unanswerable"] == 1.0 and s["false_refusals"] == 0.0 and s["correct"] == 1.0
```
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeground.app.bench.evaluation import Question, latency_summary, load_questions
from codeground.app.errors import CodegroundError

DEFAULT_LIMIT = 16
ANSWERABLE = ("code", "docs")
UNANSWERABLE = "unanswerable"
# issue 57's lines: (summary field, comparison, value)
TARGETS = {
    "first_token_p50_s": ("<=", 3.0),
    "first_token_p95_s": ("<=", 6.0),
    "answer_p50_s": ("<=", 12.0),
    "load_s": ("<=", 5.0),
    "invented_shown": ("<=", 0.03),
    "refused_unanswerable": (">=", 0.90),
    "false_refusals": ("<=", 0.10),
    "llm_failures": ("<=", 0),
}


def question_sets(gold_dir: Path, unanswerable: Path | None, limit: int) -> list[tuple[str, list[Question]]]:
    """The fixed list: ``(name, questions)`` for ``code.json`` and ``docs.json`` of ``gold_dir`` (those that
    exist) and the unanswerable file, the first ``limit`` of each; a one-line error when none is there."""
    sets = [
        (name, load_questions(gold_dir / f"{name}.json", require_sources=False)[:limit])
        for name in ANSWERABLE
        if (gold_dir / f"{name}.json").is_file()
    ]
    if not sets:
        raise CodegroundError(f"{gold_dir} has neither code.json nor docs.json")
    if unanswerable is not None:
        sets.append((UNANSWERABLE, load_questions(unanswerable, require_sources=False)[:limit]))
    return sets


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000.0, 2)


def _share(count: int, total: int) -> float | None:
    return round(count / total, 3) if total else None


def summarize(rows: list[dict[str, Any]], *, load_s: float | None) -> dict[str, Any]:
    """One YAML's figures over its sets' ``per_question`` rows (module rule)."""
    every = [q for r in rows for q in r["per_question"]]
    answered = [q for q in every if q["answered"]]
    answerable = [q for r in rows if r["set"] != UNANSWERABLE for q in r["per_question"] if q["answered"]]
    unanswerable = [q for r in rows if r["set"] == UNANSWERABLE for q in r["per_question"] if q["answered"]]
    checked = [q for q in answerable if q.get("facts")]
    shown_invented = sum(1 for q in answered if q["unknown"] and not q.get("withheld"))
    complete = sum(1 for q in checked if len(q["facts_found"]) == len(q["facts"]))
    recall = sum(len(q["facts_found"]) / len(q["facts"]) for q in checked)
    first = latency_summary([q["first_token_s"] for q in every if q.get("first_token_s") is not None])
    whole = latency_summary([q["seconds"] for q in every])
    return {
        "questions": len(every),
        "llm_failures": len(every) - len(answered),
        "load_s": None if load_s is None else round(load_s, 2),
        "first_token_p50_s": _seconds(first["p50"]),
        "first_token_p95_s": _seconds(first["p95"]),
        "answer_p50_s": _seconds(whole["p50"]),
        "answer_p95_s": _seconds(whole["p95"]),
        "invented_shown": _share(shown_invented, len(answered)),
        "refused_unanswerable": _share(sum(1 for q in unanswerable if q["refused"]), len(unanswerable)),
        "false_refusals": _share(sum(1 for q in answerable if q["refused"]), len(answerable)),
        "with_facts": len(checked),
        "correct": _share(complete, len(checked)),
        "fact_recall": round(recall / len(checked), 3) if checked else None,
    }


def meets(summary: dict[str, Any]) -> dict[str, bool | None]:
    """Each target of ``TARGETS``: met, missed, or None when the figure is missing."""
    out: dict[str, bool | None] = {}
    for key, (op, line) in TARGETS.items():
        value = summary.get(key)
        out[key] = None if value is None else (value <= line if op == "<=" else value >= line)
    return out


def run_answer_bench(
    index_dir: Path,
    sets: list[tuple[str, list[Question]]],
    pipelines: list[Path],
    *,
    log: Path | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
) -> dict[str, Any]:
    """Answer every set with every YAML (one engine each, loaded once) and summarize; the report names
    the machine. ``log`` appends each answer as ``eval-answers --log`` does."""
    from codeground.app.bench.eval_runner import evaluate_answers, load_answer_engine
    from codeground.components.cpu import machine

    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "index_dir": str(index_dir),
        "sets": {name: len(questions) for name, questions in sets},
        "pipelines": [],
    }
    for pipeline in pipelines:
        on_stage(f"{pipeline.name}: loading the engine and its answering model")
        engine, load_s = load_answer_engine(index_dir, pipeline)
        rows = []
        for name, questions in sets:
            on_stage(f"{pipeline.name}: {len(questions)} {name} questions")
            row = evaluate_answers(questions, pipeline, index_dir, log=log, engine=engine)
            rows.append({"set": name, **row})
        summary = summarize(rows, load_s=load_s)
        report["pipelines"].append(
            {"pipeline": str(pipeline), "summary": summary, "meets": meets(summary), "sets": rows}
        )
        del engine  # the next YAML's model is loaded on its own, not beside this one
    return report
