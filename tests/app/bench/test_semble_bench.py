"""semble's benchmark scorer and its bench: NDCG@10 checked by hand on a tiny made-up case."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from codeground.app.bench.semble_bench import (
    Query,
    Repo,
    latency,
    load_benchmark,
    load_side_by_side,
    percentile,
    published_summary,
    report_lines,
    score_system,
    search_repo,
)
from codeground.app.bench.semble_diagnostics import diagnostic_summary, is_doc, is_test, query_rows
from codeground.app.bench.semble_score import Hit, Target, ndcg_at_k, parse_target, path_matches, score_query
from codeground.app.errors import CodegroundError

L3, L4 = 1 / math.log2(3), 1 / math.log2(4)  # the discounts of ranks 2 and 3

# query 1 (symbol): a lined target found at rank 2 (rank 1 is the same file, other lines), an unlined
# target at rank 3 (its file again at rank 4, a duplicate), and a target the index does not hold
Q1 = Query(
    "parse_header",
    "symbol",
    (Target("lib/a.py", 10, 20),),
    (Target("lib/b.md"), Target("lib/gone.py")),
)
Q1_HITS = [Hit("lib/a.py", 1, 5), Hit("lib/a.py", 18, 30), Hit("lib/b.md", 1, 3), Hit("lib/b.md", 5, 9)]
Q1_NDCG = (L3 + L4) / (1 + L3 + L4)  # n_relevant = 3: the missing target counts (published code)

# query 2 (semantic): one result covers both targets (a path and its lines): one gain, not two
Q2 = Query("how c works", "semantic", (Target("x/c.py"),), (Target("x/c.py", 1, 5),))
Q2_HITS = [Hit("vendor/x/c.py", 1, 10), Hit("xc.py", 1, 3)]
Q2_NDCG = 1 / (1 + L3)


def test_a_target_path_matches_itself_or_a_path_ending_in_slash_plus_it_never_a_bare_suffix():
    assert path_matches("x/c.py", "x/c.py")
    assert path_matches("vendor/x/c.py", "x/c.py")
    assert not path_matches("vendorx/c.py", "x/c.py")
    assert not path_matches("xc.py", "c.py")
    assert not path_matches("c.py", "x/c.py")


def test_targets_parse_from_a_bare_path_or_a_path_with_lines():
    assert parse_target("a.py") == Target("a.py")
    assert parse_target({"path": "a.py", "start_line": "3", "end_line": 9}) == Target("a.py", 3, 9)


def test_a_lined_target_needs_an_overlapping_span_and_the_missing_target_still_counts_in_the_ideal():
    scored = score_query(Q1_HITS, Q1.targets)
    assert scored["ranks"] == [2, 3, None]
    assert scored["ndcg"] == pytest.approx(Q1_NDCG) == pytest.approx(0.530721, abs=1e-6)


def test_two_targets_first_found_by_one_result_gain_once():
    scored = score_query(Q2_HITS, Q2.targets)
    assert scored["ranks"] == [1, 1]
    assert scored["ndcg"] == pytest.approx(Q2_NDCG) == pytest.approx(0.613147, abs=1e-6)


def test_only_the_top_10_count_and_the_ideal_stops_at_10_hits():
    assert ndcg_at_k(range(1, 11), 12) == pytest.approx(1.0)
    assert ndcg_at_k([11], 1) == 0.0
    assert ndcg_at_k([], 0) == 0.0
    hits = [Hit(f"f{i}.py", 1, 1) for i in range(10)] + [Hit("t.py", 1, 1)]
    assert score_query(hits, [Target("t.py")])["ranks"] == [None]


def _repo(name: str, language: str, queries: tuple[Query, ...]) -> Repo:
    return Repo(name, language, Path("."), queries)


A = _repo("a", "python", (Q1, Query("q", "semantic", (Target("k.py"),), ())))
B = _repo("b", "go", (Q2,))
RESULTS = {
    "a": {"ranked": [Q1_HITS, [Hit("k.py", 1, 2)]], "latency": {}},
    "b": {"ranked": [Q2_HITS], "latency": {}},
}


def test_repositories_average_their_queries_and_categories_average_the_repositories_per_category_means():
    summary = score_system([A, B], RESULTS)["summary"]
    assert summary["repos"]["a"]["ndcg10"] == pytest.approx((Q1_NDCG + 1.0) / 2)
    assert summary["repos"]["b"]["ndcg10"] == pytest.approx(Q2_NDCG)
    assert (
        summary["overall"]
        == pytest.approx(((Q1_NDCG + 1.0) / 2 + Q2_NDCG) / 2)
        == pytest.approx(0.689254, abs=1e-6)
    )
    assert summary["by_category"]["symbol"] == pytest.approx(Q1_NDCG)  # b has no symbol query
    assert summary["by_category"]["semantic"] == pytest.approx((1.0 + Q2_NDCG) / 2)
    assert "architecture" not in summary["by_category"]
    assert summary["by_language"]["go"] == {"repos": 1, "ndcg10": pytest.approx(Q2_NDCG)}
    assert summary["six_languages"]["repos"] == 2


def test_published_figures_are_averaged_as_ours_are():
    published = {
        "a": {"semble": 0.8, "semble_by_category": {"symbol": 1.0, "semantic": 0.6}},
        "b": {"semble": 0.6, "semble_by_category": {"semantic": 0.4}},
    }
    summary = published_summary([A, B], published)
    assert summary["overall"] == pytest.approx(0.7)
    assert summary["by_category"] == {"symbol": pytest.approx(1.0), "semantic": pytest.approx(0.5)}


def _layout(tmp_path: Path) -> Path:
    (tmp_path / "repos" / "demo" / "lib").mkdir(parents=True)
    (tmp_path / "repos" / "whole").mkdir(parents=True)
    (tmp_path / "annotations").mkdir()
    specs = [
        {"name": "demo", "language": "python", "benchmark_root": "lib"},
        {"name": "whole", "language": "go", "benchmark_root": None},
    ]
    (tmp_path / "repos.json").write_text(json.dumps(specs))
    note = [
        {
            "query": "parse_header",
            "relevant": [{"path": "lib/a.py", "start_line": 10, "end_line": 20}],
            "secondary": ["lib/b.md"],
            "category": "symbol",
        }
    ]
    (tmp_path / "annotations" / "demo.json").write_text(json.dumps(note))
    (tmp_path / "annotations" / "whole.json").write_text(json.dumps([{"query": "q", "relevant": ["x.go"]}]))
    return tmp_path


def test_results_under_a_benchmark_root_get_the_root_in_front_as_the_annotations_name_them(tmp_path):
    demo, whole = load_benchmark(_layout(tmp_path))
    assert demo.root == tmp_path / "repos" / "demo" / "lib" and demo.prefix == "lib"
    assert demo.hit("a.py", 12, 14) == Hit("lib/a.py", 12, 14)
    assert whole.hit("x.go", 1, 2) == Hit("x.go", 1, 2)
    # zls and pandoc name their targets relative to the root: the prefixed hit still ends with "/" + it
    assert score_query([demo.hit("a.py", 1, 1)], [Target("a.py")])["ranks"] == [1]
    assert demo.queries[0].targets == (Target("lib/a.py", 10, 20), Target("lib/b.md"))
    assert whole.queries[0].category == "semantic"  # none given


def test_an_unknown_language_or_repository_filter_is_refused(tmp_path):
    data = _layout(tmp_path)
    assert [r.name for r in load_benchmark(data, languages=["go"])] == ["whole"]
    with pytest.raises(CodegroundError, match="unknown language"):
        load_benchmark(data, languages=["cobol"])
    with pytest.raises(CodegroundError, match="unknown repository"):
        load_benchmark(data, names=["nope"])


def test_side_by_side_results_are_prefixed_like_ours_and_must_answer_the_same_queries(tmp_path):
    repos = load_benchmark(_layout(tmp_path))
    other = {
        "repos": {
            "demo": {
                "queries": [
                    {
                        "query": "parse_header",
                        "results": [{"file_path": "a.py", "start_line": 9, "end_line": 11}],
                    }
                ],
                "latency": {"p50_ms": 1.0},
            }
        }
    }
    path = tmp_path / "other.json"
    path.write_text(json.dumps(other))
    got = load_side_by_side(path, repos)
    assert list(got) == ["demo"]  # whole: not in the file, left out
    assert got["demo"]["ranked"] == [[Hit("lib/a.py", 9, 11)]]
    other["repos"]["demo"]["queries"][0]["query"] = "something else"
    path.write_text(json.dumps(other))
    with pytest.raises(CodegroundError, match="differ"):
        load_side_by_side(path, repos)


def test_each_query_is_searched_once_and_its_documents_become_prefixed_hits(tmp_path):
    demo, _ = load_benchmark(_layout(tmp_path))
    asked = []

    def search(question, k):
        asked.append((question, k))
        doc = SimpleNamespace(meta={"file_path": "a.py", "start_line": 10, "end_line": 12})
        return SimpleNamespace(documents=[doc])

    ranked, seconds = search_repo(SimpleNamespace(search=search), demo)
    assert asked == [("parse_header", 10)] and len(seconds) == 1
    assert ranked == [[Hit("lib/a.py", 10, 12)]]


def test_warm_latency_leaves_out_the_first_search():
    assert latency([5.0, 0.010, 0.020, 0.030]) == {"searches": 3, "p50_ms": 20.0, "p95_ms": 30.0}
    assert latency([5.0])["p50_ms"] is None
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile([1, 2, 3, 4], 95) == 4


def test_docs_and_tests_are_told_by_suffix_folder_and_name():
    assert is_doc("docs/guide.md") and is_doc("README.rst") and not is_doc("md.py")
    for path in (
        "tests/x.py",
        "test_x.py",
        "x_test.go",
        "src/a.test.ts",
        "FooTest.java",
        "pkg/__tests__/a.js",
    ):
        assert is_test(path), path
    for path in ("testing_utils.py", "contest.py", "latest.go"):
        assert not is_test(path), path


def test_diagnostics_count_the_defining_file_first_distinct_files_and_docs_in_code_questions():
    d = diagnostic_summary([A, B], RESULTS)
    assert d["queries"] == 3 and d["symbol_queries"] == 1
    assert d["symbol_first_file"] == 1.0  # a.py first, though not its lines
    assert d["symbol_first_hit"] == 0.0
    assert d["distinct_files_top10"] == pytest.approx(round((2 + 1 + 2) / 3, 4))
    assert d["code_queries"] == 2  # Q1 has a Markdown target
    assert d["docs_share_top10"] == 0.0 and d["missed"] == 0.0
    rows = query_rows(A, RESULTS["a"]["ranked"], score_system([A], RESULTS)["rows"]["a"])
    assert rows[0]["top10"][1] == "lib/a.py:18-30"
    assert [t["rank"] for t in rows[0]["targets"]] == [2, 3, None]
    assert [t["relevant"] for t in rows[0]["targets"]] == [True, False, False]


def test_the_table_shows_a_dash_where_a_system_has_no_figure():
    report = {
        "index": {"a": {"index_s": 1.0, "records": 3}, "b": {"error": "no files"}},
        "systems": {"query.yaml": score_system([A, B], RESULTS)["summary"]},
        "published": published_summary([A], {"a": {"semble": 0.9, "semble_by_category": {}}}),
    }
    report["systems"]["query.yaml"]["diagnostics"] = diagnostic_summary([A, B], RESULTS)
    report["systems"]["query.yaml"]["diagnostics_file"] = "d.json"
    lines = report_lines(report)
    row_b = next(line for line in lines if line.startswith("b "))
    assert row_b.split()[-4:] == ["0.613", "-", "no", "files"]
    assert any(line.startswith("overall") and "0.689" in line and "0.900" in line for line in lines)


def test_bench_semble_refuses_an_unknown_language_in_one_line_before_indexing(tmp_path):
    from typer.testing import CliRunner

    from codeground.app.cli import cli

    data = _layout(tmp_path / "data")
    work = tmp_path / "work"
    result = CliRunner().invoke(
        cli, ["bench", "--semble", str(data), "--language", "cobol", "--work-dir", str(work)]
    )
    assert result.exit_code == 1
    assert "unknown language cobol" in result.output
    assert not work.exists()


def test_bench_semble_refuses_a_missing_side_by_side_file(tmp_path):
    from typer.testing import CliRunner

    from codeground.app.cli import cli

    data = _layout(tmp_path / "data")
    result = CliRunner().invoke(
        cli, ["bench", "--semble", str(data), "--side-by-side", str(tmp_path / "x.json")]
    )
    assert result.exit_code == 1 and "no such file" in result.output
