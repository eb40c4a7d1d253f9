"""Shared by the reliability suite: run the real CLI, read an index back, make YAML variants.

Every check here goes through the product's own entry points (``codeground.app.cli.cli`` via Typer's
``CliRunner``) over real indexes (real embedding model, Chroma on disk, the BM25 store).
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from codeground.app.cli import cli
from codeground.app.index.index_dir import IndexDir
from codeground.app.index.manifest import Manifest
from codeground.app.pipeline.loader import PIPELINES_DIR

QUERY_YAML = PIPELINES_DIR / "query.yaml"
_runner = CliRunner()


def cg(*args: Any):
    """Run ``codeground ARGS…`` in-process through the real Typer app; never raises."""
    return _runner.invoke(cli, [str(a) for a in args])


def output_of(result) -> str:
    """Everything the command printed (stdout and stderr)."""
    return result.stdout + result.stderr


def assert_no_traceback(result) -> None:
    text = output_of(result)
    assert "Traceback" not in text, text
    # CliRunner catches exceptions a real process would print as a traceback
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def assert_one_line_error(result, fragment: str) -> None:
    """The failure rule: non-zero exit, exactly one non-empty ``error:`` line on stderr, naming
    ``fragment``; nothing on stdout; no traceback anywhere."""
    assert result.exit_code != 0, output_of(result)
    assert_no_traceback(result)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert fragment in lines[0], lines[0]
    assert not result.stdout.strip(), result.stdout


def current_generation(index_dir: Path) -> Path:
    gen = IndexDir(index_dir).current()
    assert gen is not None, f"no committed generation in {index_dir}"
    return gen


def manifest_of(index_dir: Path) -> Manifest:
    manifest = Manifest.load(current_generation(index_dir), with_files=True)
    assert manifest is not None
    return manifest


def bm25_records(index_dir: Path) -> dict[str, dict[str, Any]]:
    """Every record of the live BM25 store: id -> {"content", "meta"} (read straight from its file)."""
    with contextlib.closing(sqlite3.connect(current_generation(index_dir) / "bm25.sqlite3")) as conn:
        rows = conn.execute("SELECT id, content, meta FROM records").fetchall()
    return {doc_id: {"content": content, "meta": json.loads(meta)} for doc_id, content, meta in rows}


def drop_bm25_records(gen: Path, n: int) -> None:
    """Delete the first ``n`` records from a generation's BM25 file behind the store's back."""
    with contextlib.closing(sqlite3.connect(gen / "bm25.sqlite3")) as conn, conn:
        conn.execute(
            "DELETE FROM records WHERE rowid IN (SELECT rowid FROM records ORDER BY rowid LIMIT ?)", (n,)
        )


def index_table(result) -> dict[str, int]:
    """The ``codeground index`` summary table as {row label: number}."""
    rows: dict[str, int] = {}
    for line in result.stdout.splitlines():
        cells = [c.strip() for c in re.split(r"[│|┃]", line) if c.strip()]
        if len(cells) == 2 and re.fullmatch(r"\d+", cells[1]):
            rows[cells[0]] = int(cells[1])
    return rows


def yaml_variant(src: Path, dest: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of pipeline ``src`` at ``dest`` with ``edit(data)`` applied (the shipped YAML is untouched)."""
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    edit(data)
    dest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return dest


def search_lines(result) -> list[tuple[str, int, int, str, float]]:
    """``codeground search`` output as (path, start, end, symbol, score) rows."""
    rows = []
    for line in result.stdout.splitlines():
        m = re.match(r"^(\S+):(\d+)-(\d+)  (.*)  (\S+)$", line)
        if m:
            score = float(m.group(5)) if m.group(5) != "-" else float("nan")
            rows.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), score))
    return rows


def cited_paths(result) -> list[str]:
    """The paths under ``Sources:`` in ``codeground query`` output."""
    paths, in_sources = [], False
    for line in result.stdout.splitlines():
        if line.strip() == "Sources:":
            in_sources = True
            continue
        if in_sources and line.startswith("  "):
            paths.append(line.split()[0].rsplit(":", 1)[0])
    return paths


def search_file(index_dir: Path, questions: list[str], work: Path, k: int = 10) -> list[list[dict]]:
    """The ranked sources for each question, from one ``codeground search-file`` run (one engine)."""
    work.mkdir(parents=True, exist_ok=True)
    dataset = work / f"questions-{time.monotonic_ns()}.json"
    entries = [{"question_id": f"q{i}", "question": q} for i, q in enumerate(questions)]
    dataset.write_text(json.dumps({"rag_questions": entries}))
    out = dataset.with_name(dataset.stem + "-results.json")
    result = cg("search-file", dataset, "--out", out, "-k", k, "--index-dir", index_dir, "--path-prefix", "")
    assert result.exit_code == 0, output_of(result)
    assert_no_traceback(result)
    return [r["retrieved_sources"] for r in json.loads(out.read_text())["search_results"]]
