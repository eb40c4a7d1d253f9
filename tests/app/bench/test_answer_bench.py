"""`codeground bench --answers`: a fixed list of questions answered by a model kept loaded, summarized
against issue 57's lines (first token, answer time, load, invented names shown, refusals)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeground.app.bench.answer_bench import meets, question_sets, summarize
from codeground.app.cli import cli
from codeground.app.errors import CodegroundError
from tests.conftest import PROJECT_ROOT

runner = CliRunner()


def _questions(path: Path, *pairs: tuple[str, str]) -> Path:
    path.write_text(json.dumps({"rag_questions": [{"question_id": i, "question": q} for i, q in pairs]}))
    return path


def _row(*, refused=False, unknown=(), withheld=False, first=1.0, seconds=2.0, facts=(), found=()):
    return {
        "answered": True,
        "refused": refused,
        "unknown": list(unknown),
        "withheld": withheld,
        "first_token_s": first,
        "seconds": seconds,
        "facts": list(facts),
        "facts_found": list(found),
    }


def test_a_withheld_answer_is_a_refusal_not_an_invented_name_shown():
    rows = [
        {"set": "code", "per_question": [_row(refused=True, unknown=["Trainer.fly"], withheld=True), _row()]},
        {"set": "unanswerable", "per_question": [_row(unknown=["vllm.blockchain"]), _row(refused=True)]},
    ]
    s = summarize(rows, load_s=3.21)
    assert s["invented_shown"] == 0.25  # only the unanswerable answer that names it is shown as the answer
    assert s["false_refusals"] == 0.5 and s["refused_unanswerable"] == 0.5
    assert s["load_s"] == 3.21 and s["questions"] == 4


def test_correctness_counts_only_questions_with_key_facts_and_needs_every_fact():
    rows = [
        {
            "set": "docs",
            "per_question": [
                _row(facts=["--port", "8000"], found=["--port"]),
                _row(facts=["LLM.generate"], found=["LLM.generate"]),
                _row(),  # no facts: left out
            ],
        }
    ]
    s = summarize(rows, load_s=None)
    assert s["with_facts"] == 2 and s["correct"] == 0.5 and s["fact_recall"] == 0.75
    assert s["refused_unanswerable"] is None  # no unanswerable set: no figure, not a zero


def test_targets_are_issue_57s_lines():
    met = meets(
        {"first_token_p50_s": 2.9, "first_token_p95_s": 6.5, "refused_unanswerable": 0.9, "load_s": None}
    )
    assert met["first_token_p50_s"] is True and met["first_token_p95_s"] is False
    assert met["refused_unanswerable"] is True and met["load_s"] is None


def test_the_fixed_list_takes_the_first_n_of_each_set(tmp_path):
    gold = tmp_path / "gold"
    gold.mkdir()
    _questions(gold / "code.json", ("c1", "What does Trainer.fit do?"), ("c2", "How are epochs run?"))
    unanswerable = _questions(tmp_path / "u.json", ("u1", "What does vllm.blockchain store?"))
    sets = question_sets(gold, unanswerable, 1)
    named = [(name, [q.question_id for q in qs]) for name, qs in sets]
    assert named == [("code", ["c1"]), ("unanswerable", ["u1"])]
    with pytest.raises(CodegroundError, match="neither code.json nor docs.json"):
        question_sets(tmp_path / "u.json", None, 1)


def test_bench_answers_keeps_one_model_loaded_across_the_sets_and_reports_against_the_targets(
    indexed_sample, tmp_path, fake_ollama, monkeypatch
):
    repo, idx = indexed_sample
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)

    def reply(req):
        question = req["messages"][-1]["content"].rsplit("Question:", 1)[-1]
        if "quantum" in question:
            return "This repository material does not answer that."
        return "Run `pip install sample`."

    fake_ollama.configure(reply=reply)
    gold = tmp_path / "gold"
    gold.mkdir()
    _questions(gold / "code.json", ("c1", "How does Trainer.fit run epochs over the data?"))
    _questions(gold / "docs.json", ("d1", "How do I install the sample package?"), ("d2", "Any guide?"))
    unanswerable = _questions(tmp_path / "u.json", ("u1", "How do I run the trainer on a quantum computer?"))
    work = tmp_path / "work"
    (work / "bench").mkdir(parents=True)
    (work / "bench" / "index").symlink_to(idx)  # the bench's own index, already built: --skip-index
    result = runner.invoke(
        cli,
        [
            "bench", "--answers", "--repo", str(repo), "--gold-dir", str(gold), "--unanswerable",
            str(unanswerable), "--work-dir", str(work), "--limit", "1", "--skip-index",
            "--pipeline", str(PROJECT_ROOT / "pipelines" / "query.yaml"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((work / "bench" / "answers.json").read_text())
    assert report["sets"] == {"code": 1, "docs": 1, "unanswerable": 1}
    assert report["machine"]["cores"] >= 1 and report["machine"]["cpu"]
    (entry,) = report["pipelines"]
    summary = entry["summary"]
    assert summary["questions"] == 3 and summary["llm_failures"] == 0
    assert summary["refused_unanswerable"] == 1.0 and summary["false_refusals"] == 0.0
    assert summary["invented_shown"] == 0.0 and summary["load_s"] is not None
    # loaded once, before the first set: no set loaded a model of its own
    assert [row["load_s"] for row in entry["sets"]] == [None, None, None]
    assert entry["meets"]["refused_unanswerable"] is True
    assert "unanswerable refused" in result.output and ">= 0.9" in result.output


def test_bench_answers_refuses_a_bad_limit_in_one_line(tmp_path):
    result = runner.invoke(cli, ["bench", "--answers", "--limit", "0", "--work-dir", str(tmp_path)])
    assert result.exit_code != 0
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert lines == ["error: --limit must be positive, got 0"]
