"""Retrieval evaluation against span-labelled question sets (the "RAG Against The Machine" format).

Scoring rule (the one the published student figures use):

* IoU(gold, retrieved) = overlap / (len_gold + len_retrieved - overlap), in characters (Python ``str``
  code-point offsets, end-exclusive); it is 0 when the two spans are in different files or do not
  overlap.
* A question is *found at k* when any of its top-k retrieved sources has IoU **strictly greater than
  0.05** with (any of) its gold source(s). A source at exactly IoU == 0.05 does not count.
* Recall@k is the mean over **all** questions of the dataset, for k = 1, 3, 5, 10; a question with no
  search result (unanswered) scores 0.
* For a figure to be comparable, every retrieved source must be at most 2000 characters long.
  Longer sources are not rejected here but counted in ``RecallReport.oversize_sources``; a report
  with a non-zero count breaks the rule.

Paths: gold ``file_path`` values look like ``data/raw/vllm-0.10.1/<path inside the source tree>``,
while codeground's retrieval results are relative to the indexed repository root. Pass that
prefix as ``path_prefix`` (to ``recall_at_ks`` and ``write_search_results``) and it is prepended to
every retrieved path (see ``normalise_path``).

Files use the students' JSON formats::

    {"rag_questions": [{"question_id", "question", "answer"?, "sources": [{"file_path",
      "first_character_index", "last_character_index"}], ...}]}
    {"search_results": [{"question_id", "question_str", "retrieved_sources": [...]}], "k": 10}

Pure standard library; every input problem is a one-line ``CodegroundError``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError

__all__ = [
    "DEFAULT_KS",
    "DEFAULT_MAX_SOURCE_CHARS",
    "DEFAULT_THRESHOLD",
    "Question",
    "RecallReport",
    "Span",
    "first_rank_found",
    "found",
    "iou",
    "latency_summary",
    "load_questions",
    "normalise_path",
    "read_search_results",
    "recall_at_ks",
    "search_results_payload",
    "write_search_results",
]

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
DEFAULT_THRESHOLD = 0.05
DEFAULT_MAX_SOURCE_CHARS = 2000


@dataclass(frozen=True)
class Span:
    """A character range of one file: ``start`` = first_character_index, ``end`` = last (exclusive)."""

    file_path: str
    start: int
    end: int

    @property
    def length(self) -> int:
        return max(0, self.end - self.start)

    def to_json(self, path_prefix: str = "") -> dict[str, Any]:
        return {
            "file_path": normalise_path(self.file_path, path_prefix),
            "first_character_index": self.start,
            "last_character_index": self.end,
        }


@dataclass(frozen=True)
class Question:
    question_id: str
    question: str
    sources: list[Span] = field(default_factory=list)
    answer: str | None = None


@dataclass
class RecallReport:
    """The result of ``recall_at_ks``.

    ``per_question`` maps every question id to the 1-based rank of the first retrieved source that
    finds it (within the top ``max(ks)``), or None. ``oversize_sources`` counts retrieved sources,
    among each question's scored top ``max(ks)``, longer than ``max_source_chars``.
    ``unmatched_results`` counts result entries whose question id is not in the dataset (a sign of
    mismatched files).
    """

    recall: dict[int, float]
    n_questions: int
    n_answered: int
    oversize_sources: int
    per_question: dict[str, int | None]
    threshold: float = DEFAULT_THRESHOLD
    max_source_chars: int | None = DEFAULT_MAX_SOURCE_CHARS
    longest_source: int = 0
    unmatched_results: int = 0

    @property
    def rule_compliant(self) -> bool:
        """True when no scored source exceeds ``max_source_chars``."""
        return self.oversize_sources == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "recall": {str(k): v for k, v in self.recall.items()},
            "n_questions": self.n_questions,
            "n_answered": self.n_answered,
            "threshold": self.threshold,
            "max_source_chars": self.max_source_chars,
            "oversize_sources": self.oversize_sources,
            "longest_source": self.longest_source,
            "unmatched_results": self.unmatched_results,
            "per_question": dict(self.per_question),
        }


# --------------------------------------------------------------------------------------------- paths


def normalise_path(path: str, prefix: str = "") -> str:
    """``prefix`` + ``path`` with forward slashes and no leading ``./``.

    A non-empty prefix gets a trailing ``/`` if it lacks one. Idempotent: a path that already
    starts with the prefix is returned unchanged (normalised), so gold paths pass through safely.
    """
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    pre = prefix.replace("\\", "/")
    while pre.startswith("./"):
        pre = pre[2:]
    if not pre:
        return p
    if not pre.endswith("/"):
        pre += "/"
    if p.startswith(pre):
        return p
    return pre + p.lstrip("/")


# ------------------------------------------------------------------------------------------- scoring


def iou(gold: Span, got: Span) -> float:
    """overlap / (len_gold + len_got - overlap); 0.0 when the files differ or the spans don't overlap."""
    if normalise_path(gold.file_path) != normalise_path(got.file_path):
        return 0.0
    overlap = min(gold.end, got.end) - max(gold.start, got.start)
    if overlap <= 0:
        return 0.0
    union = gold.length + got.length - overlap
    return overlap / union if union > 0 else 0.0


def _as_spans(gold: Span | Iterable[Span]) -> list[Span]:
    return [gold] if isinstance(gold, Span) else list(gold)


def first_rank_found(
    gold: Span | Iterable[Span], retrieved: Sequence[Span], threshold: float = DEFAULT_THRESHOLD
) -> int | None:
    """1-based rank of the first retrieved span with IoU > ``threshold`` with any gold span, or None."""
    golds = _as_spans(gold)
    for rank, got in enumerate(retrieved, start=1):
        if any(iou(g, got) > threshold for g in golds):
            return rank
    return None


def found(
    gold_spans: Span | Iterable[Span], retrieved: Sequence[Span], k: int, threshold: float = DEFAULT_THRESHOLD
) -> bool:
    """True when any of the top-``k`` retrieved spans has IoU strictly > ``threshold`` with a gold span."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return first_rank_found(gold_spans, list(retrieved)[:k], threshold) is not None


def split_half(question_id: str) -> str:
    """``"tune"`` or ``"check"``: a fixed half of any question set, decided by the question's id alone
    (sha256 of ``"tune:" + id``, even → tune). Weights are chosen on tune; figures are judged on check."""
    digest = hashlib.sha256(f"tune:{question_id}".encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "check"


def recall_at_ks(
    questions: Sequence[Question],
    results: Mapping[str, Sequence[Span]],
    ks: Iterable[int] = DEFAULT_KS,
    threshold: float = DEFAULT_THRESHOLD,
    max_source_chars: int | None = DEFAULT_MAX_SOURCE_CHARS,
    path_prefix: str = "",
) -> RecallReport:
    """Recall@k for each k: the mean over ALL ``questions`` (no result, or an empty one, scores 0).

    ``results`` maps question id -> retrieved spans, best first; ``path_prefix`` is prepended to every
    retrieved path before comparison. ``max_source_chars=None`` disables the oversize count.
    """
    ks = sorted(set(ks))
    if not ks or any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in ks):
        raise CodegroundError(f"ks must be positive integers, got {ks!r}")
    k_max = ks[-1]
    hits = dict.fromkeys(ks, 0)
    per_question: dict[str, int | None] = {}
    oversize = longest = answered = 0
    for q in questions:
        if not q.sources:
            raise CodegroundError(f"question {q.question_id!r} has no gold sources; cannot score it")
        top = [
            Span(normalise_path(s.file_path, path_prefix), s.start, s.end)
            for s in list(results.get(q.question_id) or [])[:k_max]
        ]
        if top:
            answered += 1
        for s in top:
            longest = max(longest, s.length)
            if max_source_chars is not None and s.length > max_source_chars:
                oversize += 1
        rank = first_rank_found(q.sources, top, threshold)
        per_question[q.question_id] = rank
        for k in ks:
            if rank is not None and rank <= k:
                hits[k] += 1
    n = len(questions)
    known = {q.question_id for q in questions}
    return RecallReport(
        recall={k: (hits[k] / n if n else 0.0) for k in ks},
        n_questions=n,
        n_answered=answered,
        oversize_sources=oversize,
        per_question=per_question,
        threshold=threshold,
        max_source_chars=max_source_chars,
        longest_source=longest,
        unmatched_results=sum(1 for qid in results if qid not in known),
    )


# ------------------------------------------------------------------------------------------- loading


def _one_line(message: str) -> CodegroundError:
    return CodegroundError(" ".join(message.splitlines()))


def _read_json(path: str | os.PathLike[str], what: str) -> Any:
    p = Path(path)
    if not p.exists():
        raise _one_line(f"{what} file not found: {p}")
    if not p.is_file():
        raise _one_line(f"{what} path is not a file: {p}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _one_line(f"{what} file {p} is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise _one_line(f"cannot read {what} file {p}: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _one_line(
            f"{what} file {p} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from None


def _top_level_list(path: str | os.PathLike[str], what: str, key: str) -> tuple[dict[str, Any], list[Any]]:
    """The JSON object in ``path`` and its top-level ``key`` list, or a one-line error."""
    data = _read_json(path, what)
    if not isinstance(data, dict):
        raise _one_line(
            f"{what} {path}: top level must be a JSON object with a '{key}' list, got {type(data).__name__}"
        )
    items = data.get(key)
    if not isinstance(items, list):
        raise _one_line(f"{what} {path}: no '{key}' list at the top level")
    return data, items


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _entry(raw: Any, where: str, seen: Any) -> tuple[str, str]:
    """An entry's question id and its location for error messages; it must be an object with a new id."""
    if not isinstance(raw, dict):
        raise _one_line(f"{where}: expected an object, got {type(raw).__name__}")
    qid = _question_id(raw.get("question_id"), where)
    where = f"{where} (id {qid!r})"
    if qid in seen:
        raise _one_line(f"{where}: duplicate question_id")
    return qid, where


def _question_id(raw: Any, where: str) -> str:
    if isinstance(raw, str) and raw.strip():
        return raw
    if _is_int(raw):
        return str(raw)
    raise _one_line(f"{where}: 'question_id' is missing or not a non-empty string")


def _parse_span(raw: Any, where: str) -> Span:
    if not isinstance(raw, dict):
        raise _one_line(f"{where}: expected an object, got {type(raw).__name__}")
    keys = ("file_path", "first_character_index", "last_character_index")
    missing = [key for key in keys if key not in raw]
    if missing:
        raise _one_line(f"{where}: missing {', '.join(repr(m) for m in missing)}")
    fp, first, last = raw["file_path"], raw["first_character_index"], raw["last_character_index"]
    if not isinstance(fp, str) or not fp.strip():
        raise _one_line(f"{where}: 'file_path' must be a non-empty string")
    if not _is_int(first) or not _is_int(last):
        raise _one_line(f"{where}: character indices must be integers, got {first!r} and {last!r}")
    if first < 0:
        raise _one_line(f"{where}: first_character_index {first} is negative")
    if first > last:
        raise _one_line(f"{where}: first_character_index {first} > last_character_index {last}")
    return Span(normalise_path(fp), first, last)


def _parse_spans(raw: Any, where: str, key: str) -> list[Span]:
    if not isinstance(raw, list):
        raise _one_line(f"{where}: {key!r} must be a list, got {type(raw).__name__}")
    return [_parse_span(s, f"{where}, {key}[{j}]") for j, s in enumerate(raw)]


def load_questions(path: str | os.PathLike[str], require_sources: bool = True) -> list[Question]:
    """Read a ``{"rag_questions": [...]}`` dataset.

    With ``require_sources`` (evaluation) every question needs a non-empty ``sources`` list; without it
    (search-only use) ``sources`` may be absent, but when present it is still validated.
    Raises ``CodegroundError`` (one line) on any problem, naming the file and the question index.
    """
    _, raw_questions = _top_level_list(path, "dataset", "rag_questions")
    questions: list[Question] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_questions):
        qid, where = _entry(raw, f"dataset {path}, rag_questions[{i}]", seen)
        seen.add(qid)
        text = raw.get("question")
        if not isinstance(text, str) or not text.strip():
            raise _one_line(f"{where}: 'question' is missing or not a non-empty string")
        answer = raw.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise _one_line(f"{where}: 'answer' must be a string")
        raw_sources = raw.get("sources")
        sources = [] if raw_sources is None else _parse_spans(raw_sources, where, "sources")
        if require_sources and not sources:
            raise _one_line(f"{where}: no 'sources' (gold spans are needed for evaluation)")
        questions.append(Question(question_id=qid, question=text, sources=sources, answer=answer))
    return questions


# -------------------------------------------------------------------------------------- search results


def search_results_payload(
    entries: Sequence[tuple[str | None, str, Sequence[Span]]], k: int, path_prefix: str = ""
) -> dict[str, Any]:
    """The ``{"search_results": [...], "k": k}`` payload: one entry per ``(question id, question,
    sources)``, at most ``k`` sources each, ``path_prefix`` before every path. Written by ``search
    --json`` and ``search-file`` alike."""
    if not _is_int(k) or k < 1:
        raise CodegroundError(f"k must be a positive integer, got {k!r}")
    return {
        "search_results": [
            {
                "question_id": qid,
                "question_str": text,
                "retrieved_sources": [s.to_json(path_prefix) for s in list(sources)[:k]],
            }
            for qid, text, sources in entries
        ],
        "k": k,
    }


def write_search_results(
    path: str | os.PathLike[str],
    questions: Sequence[Question],
    results: Mapping[str, Sequence[Span]],
    k: int,
    path_prefix: str = "",
) -> None:
    """Write the students' ``{"search_results": [...], "k": k}`` file, one entry per question in order.

    Each entry keeps at most ``k`` sources; ``path_prefix`` is prepended to every path. Questions
    without results are written with an empty ``retrieved_sources`` list.
    """
    payload = search_results_payload(
        [(q.question_id, q.question, results.get(q.question_id) or []) for q in questions], k, path_prefix
    )
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, p)


def read_search_results(path: str | os.PathLike[str]) -> tuple[dict[str, list[Span]], int]:
    """Read a ``{"search_results": [...], "k": k}`` file -> (question id -> spans, k).

    When ``k`` is absent it is taken as the longest ``retrieved_sources`` list (at least 1).
    """
    data, entries = _top_level_list(path, "search results", "search_results")
    results: dict[str, list[Span]] = {}
    for i, raw in enumerate(entries):
        qid, where = _entry(raw, f"search results {path}, search_results[{i}]", results)
        if "retrieved_sources" not in raw:
            raise _one_line(f"{where}: missing 'retrieved_sources'")
        results[qid] = _parse_spans(raw["retrieved_sources"], where, "retrieved_sources")
    k = data.get("k")
    if k is None:
        k = max((len(v) for v in results.values()), default=0) or 1
    elif not _is_int(k) or k < 1:
        raise _one_line(f"search results {path}: 'k' must be a positive integer, got {k!r}")
    return results, k


# ------------------------------------------------------------------------------------------- latency


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default 'linear' method)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int | None]:
    """Summary of per-query latencies given in seconds: ``n``, ``p50``, ``p95``, ``mean``, ``max`` in ms.

    Percentiles use linear interpolation between closest ranks (numpy's default method: position
    ``(n - 1) * q``). With no values, ``n`` is 0 and the other fields are None.
    """
    values = [float(s) for s in seconds]
    if any(math.isnan(v) or v < 0 for v in values):
        raise ValueError("latencies must be non-negative numbers")
    if not values:
        return {"n": 0, "p50": None, "p95": None, "mean": None, "max": None}
    ms = sorted(v * 1000.0 for v in values)
    return {
        "n": len(ms),
        "p50": _percentile(ms, 50),
        "p95": _percentile(ms, 95),
        "mean": sum(ms) / len(ms),
        "max": ms[-1],
    }
