"""What ``codeground bench`` times, and how: CPU seconds and peak RSS, the one-time model preparation,
index runs (full and incremental after a line is inserted in the middle of a file), the re-vote's
fill, and new processes timed from launch to exit (``_timed_child``: the cold ``codeground search``,
``codeground index`` of this checkout, ``codeground chat`` until its page answers)."""

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
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.index.revote_fill import read_state
from codeground.app.pipeline.loader import read_pipeline_dict

TOUCH_MARK = "codeground benchmark touch"


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _touch_targets(repo: Path, index_dir: Path) -> list[Path]:
    """One indexed .py and one indexed .md file to modify for the incremental run (the largest of each)."""
    from codeground.app.index.live import open_index_with_files

    _, manifest = open_index_with_files(index_dir)
    targets = []
    for suffix in (".py", ".md"):
        files = [repo / p for p in manifest.files if p.endswith(suffix)]
        if files:
            targets.append(max(files, key=lambda p: (p.stat().st_size, str(p))))
    return targets


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
        "import sys; from codeground.app.bench.timings import prepare_embedder, prepare_rankers; "
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
    from codeground.app.index.live import open_index

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
