"""The retrieval scoring rule: IoU > 0.05 in the top k, mean over all questions, sources <= 2000 chars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeground.app.bench.evaluation import (
    Question,
    Span,
    first_rank_found,
    found,
    iou,
    latency_summary,
    load_questions,
    normalise_path,
    read_search_results,
    recall_at_ks,
    write_search_results,
)
from codeground.app.errors import CodegroundError

DEV = Path("/work/shared/bench-data/vllm/dev")
PREFIX = "data/raw/vllm-0.10.1/"


def q(qid: str, *spans: Span) -> Question:
    return Question(question_id=qid, question=f"question {qid}?", sources=list(spans))


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def src(fp="a.py", first=0, last=10) -> dict:
    return {"file_path": fp, "first_character_index": first, "last_character_index": last}


# ------------------------------------------------------------------------------------------------ iou


def test_iou_of_identical_spans_is_one():
    assert iou(Span("a.py", 10, 50), Span("a.py", 10, 50)) == 1.0


def test_iou_of_disjoint_or_touching_spans_is_zero():
    assert iou(Span("a.py", 0, 10), Span("a.py", 20, 30)) == 0.0
    assert iou(Span("a.py", 0, 10), Span("a.py", 10, 20)) == 0.0  # end-exclusive: touching is no overlap


def test_iou_is_zero_when_the_file_differs():
    assert iou(Span("a.py", 0, 10), Span("b.py", 0, 10)) == 0.0


def test_iou_of_partial_overlap_is_overlap_over_union():
    assert iou(Span("a.py", 0, 10), Span("a.py", 5, 15)) == pytest.approx(5 / 15)


def test_iou_of_containment_is_the_length_ratio():
    assert iou(Span("a.py", 0, 100), Span("a.py", 10, 30)) == pytest.approx(20 / 100)
    assert iou(Span("a.py", 10, 30), Span("a.py", 0, 100)) == pytest.approx(20 / 100)


# ------------------------------------------------------------------------------------------ found / k


def test_found_only_looks_at_the_top_k():
    gold = [Span("a.py", 0, 100)]
    retrieved = [Span("b.py", 0, 100), Span("c.py", 0, 100), Span("a.py", 0, 100)]
    assert not found(gold, retrieved, k=1)
    assert not found(gold, retrieved, k=2)
    assert found(gold, retrieved, k=3)
    assert first_rank_found(gold, retrieved) == 3


def test_found_needs_iou_strictly_greater_than_threshold():
    gold = [Span("a.py", 0, 20)]
    at_threshold = [Span("a.py", 5, 6)]  # 1 char inside a 20-char gold span: IoU == 1/20 == 0.05 exactly
    assert iou(gold[0], at_threshold[0]) == 0.05
    assert not found(gold, at_threshold, k=1)
    assert found(gold, [Span("a.py", 5, 7)], k=1)  # 2/20 = 0.1


def test_found_accepts_any_of_several_gold_spans():
    gold = [Span("a.py", 0, 10), Span("b.py", 0, 10)]
    assert found(gold, [Span("b.py", 0, 10)], k=1)


# ------------------------------------------------------------------------------------------- recall@k


def test_recall_averages_over_all_questions_including_unanswered():
    questions = [
        q("q1", Span("a.py", 0, 10)),
        q("q2", Span("a.py", 0, 10)),
        q("q3", Span("a.py", 0, 10)),
        q("q4", Span("a.py", 0, 10)),
    ]
    results = {
        "q1": [Span("a.py", 0, 10)],  # rank 1
        "q2": [Span("x.py", 0, 10), Span("a.py", 0, 10)],  # rank 2
        "q3": [Span("x.py", 0, 10)],  # never found
        # q4 unanswered
    }
    report = recall_at_ks(questions, results, ks=(1, 3))
    assert report.recall == {1: 0.25, 3: 0.5}
    assert report.n_questions == 4
    assert report.n_answered == 3
    assert report.per_question == {"q1": 1, "q2": 2, "q3": None, "q4": None}


def test_recall_with_no_results_at_all_is_zero():
    report = recall_at_ks([q("q1", Span("a.py", 0, 10))], {})
    assert report.recall == {1: 0.0, 3: 0.0, 5: 0.0, 10: 0.0}


def test_recall_counts_results_for_unknown_question_ids():
    report = recall_at_ks([q("q1", Span("a.py", 0, 10))], {"other": [Span("a.py", 0, 10)]}, ks=(1,))
    assert report.recall == {1: 0.0}
    assert report.unmatched_results == 1


def test_recall_prepends_path_prefix_to_retrieved_paths():
    questions = [q("q1", Span(PREFIX + "vllm/config.py", 0, 100))]
    results = {"q1": [Span("vllm/config.py", 0, 100)]}
    assert recall_at_ks(questions, results, ks=(1,)).recall == {1: 0.0}
    assert recall_at_ks(questions, results, ks=(1,), path_prefix=PREFIX).recall == {1: 1.0}
    assert recall_at_ks(questions, results, ks=(1,), path_prefix=PREFIX.rstrip("/")).recall == {1: 1.0}


def test_normalise_path_prepends_once_and_uses_forward_slashes():
    assert normalise_path("vllm/config.py", PREFIX) == PREFIX + "vllm/config.py"
    assert normalise_path("./vllm\\config.py", "data/raw/vllm-0.10.1") == PREFIX + "vllm/config.py"
    assert normalise_path(PREFIX + "vllm/config.py", PREFIX) == PREFIX + "vllm/config.py"
    assert normalise_path("vllm/config.py") == "vllm/config.py"


def test_oversize_sources_over_2000_chars_are_counted_among_scored_top_k():
    questions = [q("q1", Span("a.py", 0, 100))]
    results = {"q1": [Span("a.py", 0, 2001), Span("b.py", 0, 2000), Span("c.py", 0, 5000)]}
    report = recall_at_ks(questions, results, ks=(1, 3))
    assert report.oversize_sources == 2
    assert report.longest_source == 5000
    assert not report.rule_compliant
    assert recall_at_ks(questions, results, ks=(1, 2)).oversize_sources == 1  # c.py is beyond max(ks)
    assert recall_at_ks(questions, {"q1": [Span("a.py", 0, 2000)]}).rule_compliant


def test_recall_refuses_questions_without_gold_sources():
    with pytest.raises(CodegroundError):
        recall_at_ks([q("q1")], {})


# ----------------------------------------------------------------------------------------- loading


def test_load_questions_reads_spans_and_answer(tmp_path):
    path = write_json(
        tmp_path / "d.json",
        {
            "rag_questions": [
                {
                    "question_id": "q1",
                    "question": "Why?",
                    "answer": "Because.",
                    "sources": [src("a.py", 3, 9)],
                    "difficulty": "easy",
                    "is_valid": True,
                },
            ]
        },
    )
    [question] = load_questions(path)
    assert question == Question("q1", "Why?", [Span("a.py", 3, 9)], "Because.")


def test_load_questions_without_sources_only_when_not_required(tmp_path):
    path = write_json(tmp_path / "d.json", {"rag_questions": [{"question_id": "q1", "question": "Why?"}]})
    assert load_questions(path, require_sources=False)[0].sources == []
    with pytest.raises(CodegroundError, match="sources"):
        load_questions(path, require_sources=True)


def assert_one_line_error(path: Path, match: str, **kwargs) -> None:
    with pytest.raises(CodegroundError, match=match) as info:
        load_questions(path, **kwargs)
    assert "\n" not in str(info.value)


def test_load_questions_missing_file_is_a_one_line_error(tmp_path):
    assert_one_line_error(tmp_path / "nope.json", "not found")


def test_load_questions_not_json_names_line_and_column(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{\n  "rag_questions": [\n    oops\n]}', encoding="utf-8")
    assert_one_line_error(path, r"not valid JSON.*line 3 column 5")


def test_load_questions_needs_a_rag_questions_list(tmp_path):
    assert_one_line_error(write_json(tmp_path / "a.json", {"questions": []}), "rag_questions")
    assert_one_line_error(write_json(tmp_path / "b.json", [1, 2]), "JSON object")
    assert_one_line_error(write_json(tmp_path / "c.json", {"rag_questions": {}}), "rag_questions")


def test_load_questions_missing_question_field_names_the_index(tmp_path):
    ok = {"question_id": "q0", "question": "Fine?", "sources": [src()]}
    path = write_json(tmp_path / "d.json", {"rag_questions": [ok, {"question_id": "q1", "sources": [src()]}]})
    assert_one_line_error(path, r"rag_questions\[1\].*'question'")
    path = write_json(tmp_path / "e.json", {"rag_questions": [{"question": "Why?", "sources": [src()]}]})
    assert_one_line_error(path, r"rag_questions\[0\].*question_id")


@pytest.mark.parametrize(
    "bad_source, match",
    [
        ({"file_path": "a.py", "first_character_index": 0}, "last_character_index"),
        (src(first="0"), "integers"),
        (src(first=1.5), "integers"),
        (src(first=10, last=5), "10 > last_character_index 5"),
        (src(first=-1), "negative"),
        (src(fp=""), "file_path"),
        ("a.py:1-2", "expected an object"),
    ],
)
def test_load_questions_rejects_malformed_sources(tmp_path, bad_source, match):
    path = write_json(
        tmp_path / "d.json",
        {"rag_questions": [{"question_id": "q1", "question": "Why?", "sources": [bad_source]}]},
    )
    assert_one_line_error(path, match, require_sources=False)


def test_load_questions_rejects_duplicate_ids(tmp_path):
    entry = {"question_id": "q1", "question": "Why?", "sources": [src()]}
    assert_one_line_error(write_json(tmp_path / "d.json", {"rag_questions": [entry, entry]}), "duplicate")


# ------------------------------------------------------------------------------------ search results


def test_search_results_round_trip_with_prefix_and_k(tmp_path):
    questions = [q("q1", Span(PREFIX + "a.py", 0, 10)), q("q2", Span(PREFIX + "b.py", 0, 10))]
    results = {"q1": [Span("a.py", 0, 10), Span("é/ü.py", 5, 8), Span("c.py", 0, 1)]}
    out = tmp_path / "sub" / "results.json"
    write_search_results(out, questions, results, k=2, path_prefix=PREFIX)

    raw = json.loads(out.read_text(encoding="utf-8"))
    assert raw["k"] == 2
    assert raw["search_results"][0] == {
        "question_id": "q1",
        "question_str": "question q1?",
        "retrieved_sources": [src(PREFIX + "a.py", 0, 10), src(PREFIX + "é/ü.py", 5, 8)],
    }
    assert raw["search_results"][1]["retrieved_sources"] == []
    assert "é" in out.read_text(encoding="utf-8")  # ensure_ascii=False

    back, k = read_search_results(out)
    assert k == 2
    assert back == {"q1": [Span(PREFIX + "a.py", 0, 10), Span(PREFIX + "é/ü.py", 5, 8)], "q2": []}
    assert recall_at_ks(questions, back, ks=(1,)).recall == {1: 0.5}


def test_read_search_results_errors_are_one_line(tmp_path):
    cases = [
        ({"results": []}, "search_results"),
        ({"search_results": [{"question_id": "q1"}], "k": 5}, "retrieved_sources"),
        ({"search_results": [{"question_id": "q1", "retrieved_sources": [src(first=9, last=2)]}]}, "> last"),
        ({"search_results": [], "k": 0}, "'k'"),
    ]
    for i, (data, match) in enumerate(cases):
        with pytest.raises(CodegroundError, match=match) as info:
            read_search_results(write_json(tmp_path / f"r{i}.json", data))
        assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------ latency


def test_latency_summary_in_ms_with_linear_interpolation():
    summary = latency_summary([0.001 * v for v in range(1, 11)])  # 1..10 ms
    assert summary["n"] == 10
    assert summary["p50"] == pytest.approx(5.5)
    assert summary["p95"] == pytest.approx(9.55)
    assert summary["mean"] == pytest.approx(5.5)
    assert summary["max"] == pytest.approx(10.0)
    assert latency_summary([]) == {"n": 0, "p50": None, "p95": None, "mean": None, "max": None}


# ----------------------------------------------------------------------------------------- real data


@pytest.mark.parametrize("name, count", [("docs.json", 47), ("code.json", 48)])
def test_real_dev_sets_load(name, count):
    path = DEV / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    questions = load_questions(path)
    assert len(questions) == count
    assert all(len(x.sources) == 1 and x.sources[0].file_path.startswith(PREFIX) for x in questions)
    assert all(x.sources[0].length <= 2000 for x in questions)
    perfect = {x.question_id: x.sources for x in questions}
    report = recall_at_ks(questions, perfect)
    assert report.recall == {1: 1.0, 3: 1.0, 5: 1.0, 10: 1.0} and report.rule_compliant
