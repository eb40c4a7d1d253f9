"""`codeground bench --languages`: the tree-sitter languages on real corpora, one per language.

For each corpus of ``codeground.app.bench.corpora.LANGUAGE_CORPORA`` (fetched once from its registry):
a full index (wall, files, records by type, files the grammar could not parse, the distinct
symbols of that language's code records) and recall@k of each query pipeline on the language's
question set in ``benchmarks/languages/<language>.json``, also split into the questions that name an
identifier of their gold span and those that do not.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeground.app.bench.corpora import LANGUAGE_CORPORA
from codeground.app.pipeline.loader import PIPELINES_DIR

QUESTIONS_DIR = PIPELINES_DIR.parent / "benchmarks" / "languages"


def naming_split(gold: Path) -> dict[str, set[str]]:
    """Question ids of a set by whether the question names an identifier of its gold span, and by
    its ``kind`` where the set gives one (``kind:api``, ``kind:docs``, ``kind:notebook``)."""
    rows = json.loads(gold.read_text())["rag_questions"]
    subsets = {
        "names_identifier": {q["question_id"] for q in rows if q.get("names_identifier")},
        "names_none": {q["question_id"] for q in rows if not q.get("names_identifier")},
    }
    for kind in sorted({q["kind"] for q in rows if q.get("kind")}):
        subsets[f"kind:{kind}"] = {q["question_id"] for q in rows if q.get("kind") == kind}
    return subsets


def code_symbols(index_dir: Path, language: str) -> dict[str, int]:
    """Distinct symbols of the index's code records in files of ``language``, by record type."""
    from codeground.app.index.live import open_index
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    gen, _ = open_index(index_dir)
    store = SQLiteBM25DocumentStore(persist_path=str(gen / "bm25.sqlite3"))
    symbols: dict[str, set[str]] = {}
    for _, symbol, source_type, file_path in store.meta_rows(["symbol", "source_type", "file_path"]):
        if language_name(file_path or "") == language and source_type in ("api", "impl", "module"):
            symbols.setdefault(source_type, set()).add(symbol)
    every = set().union(*symbols.values()) if symbols else set()
    return {"all": len(every), **{t: len(s) for t, s in sorted(symbols.items())}}


def language_name(file_path: str) -> str | None:
    """The language a file is indexed as code in: ``python`` (the AST chunker) or a tree-sitter one."""
    from codeground.components.languages import language_for

    if file_path.lower().endswith(".py"):
        return "python"
    lang = language_for(file_path)
    return None if lang is None else lang.name


def run_language_bench(
    cache: Path,
    index_pipeline: Path,
    pipelines: list[Path],
    *,
    languages: list[str] | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
) -> dict[str, Any]:
    """Index each language's corpus and measure recall on its question set (module docstring)."""
    from codeground.app.bench.eval_runner import evaluate_pipelines
    from codeground.app.bench.timings import _timed_index

    report: dict[str, Any] = {}
    for language, corpus in LANGUAGE_CORPORA.items():
        if languages and language not in languages:
            continue
        on_stage(f"{language}: fetch {corpus.source} (once)")
        root = corpus.ensure(cache)
        index_dir = cache / "bench" / "languages" / corpus.name
        shutil.rmtree(index_dir, ignore_errors=True)
        on_stage(f"{language}: full index of {root}")
        index = _timed_index(root, index_dir, index_pipeline, full=True)
        walked = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        index["files_by_language"] = dict(
            sorted(Counter(name for p in walked if (name := language_name(p)) is not None).items())
        )
        index["symbols"] = code_symbols(index_dir, language)
        gold = QUESTIONS_DIR / f"{language}.json"
        on_stage(f"{language}: recall on {gold.name}: {', '.join(p.name for p in pipelines)}")
        rows = evaluate_pipelines(gold, pipelines, index_dir, path_prefix="", subsets=naming_split(gold))
        report[language] = {"corpus": corpus.source, "root": str(root), "index": index, "retrieval": rows}
    return report
