"""How the chat shows an answer's sources and notices: pure string functions, no Gradio.

Rules:
- Sources are listed under the answer in retrieval order, each as a collapsed ``<details>`` whose
  summary is ``path:start-end — symbol`` and whose body is the excerpt in a fenced code block tagged
  with the file's language (Gradio's Markdown highlights it).
- Repository text never becomes markup: paths and symbols are HTML-escaped, excerpts sit inside a
  fence longer than any backtick run they contain, so ``</details>`` or ``<script>`` in a file is
  shown as text.
- No sources: one line saying the repository has nothing on this (or that the index is empty).
- Notices (rewrite, rerank fallback, LLM unreachable, stale index, ...) are shown as blockquote lines,
  verbatim apart from HTML escaping, each with a marker saying what kind of notice it is.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

IMPL_PROMPT_CAP = 2000
NO_SOURCES = "_The repository has nothing on this: no source matched the question._"
EMPTY_INDEX = "_The index is empty: there is nothing to search. Index a repository: `codeground index PATH`._"

_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".ipynb": "python",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".sh": "bash",
    ".bash": "bash",
    ".js": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".jsx": "jsx",
    ".html": "html",
    ".css": "css",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cu": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".rb": "ruby",
    ".sql": "sql",
}
_SPECIAL_NAMES = {"dockerfile": "docker", "makefile": "makefile", "justfile": "makefile"}


def language_for(path: str) -> str:
    """The code-fence language for a file path (``text`` when unknown)."""
    name = PurePosixPath(path).name.lower()
    if name in _SPECIAL_NAMES:
        return _SPECIAL_NAMES[name]
    return _LANGUAGES.get(PurePosixPath(name).suffix, "text")


def line_range(start: Any, end: Any) -> str:
    """``12-30``; a single line is ``12``; unknown lines give ``""``."""
    if start is None:
        return ""
    if end is None or end == start:
        return str(start)
    return f"{start}-{end}"


def source_label(meta: dict[str, Any]) -> str:
    """``path:start-end — symbol`` as plain text (not escaped)."""
    path = str(meta.get("file_path") or "?")
    lines = line_range(meta.get("start_line"), meta.get("end_line"))
    label = f"{path}:{lines}" if lines else path
    symbol = meta.get("symbol")
    return f"{label} — {symbol}" if symbol else label


def fenced(code: str, language: str) -> str:
    """A fenced code block that ``code`` cannot close early (fence longer than its longest backtick run)."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    body = code.rstrip("\n")
    return f"{fence}{language}\n{body}\n{fence}"


def _content(doc: Any) -> str:
    return getattr(doc, "content", None) or ""


def _meta(doc: Any) -> dict[str, Any]:
    return getattr(doc, "meta", None) or {}


def format_source(doc: Any, number: int) -> str:
    """One source as a collapsed ``<details>``: summary with path, lines and symbol; body the excerpt."""
    meta = _meta(doc)
    path = str(meta.get("file_path") or "")
    language = language_for(path)
    lines = line_range(meta.get("start_line"), meta.get("end_line"))
    where = f"{path}:{lines}" if lines else path
    summary = f"{number}. <code>{html.escape(where)}</code>"
    symbol = meta.get("symbol")
    if symbol:
        summary += f" — <code>{html.escape(str(symbol))}</code>"
    kind = meta.get("source_type")
    if kind:
        summary += f" <small>({html.escape(str(kind))})</small>"
    parts = [f'<details class="cg-source"><summary>{summary}</summary>', "", fenced(_content(doc), language)]
    impl = meta.get("impl")
    if impl:
        shown = impl if len(impl) <= IMPL_PROMPT_CAP else impl[:IMPL_PROMPT_CAP].rstrip() + "\n…"
        inner = fenced(shown, language)
        parts += ["", "<details><summary>implementation</summary>", "", inner, "", "</details>"]
    parts += ["", "</details>"]
    return "\n".join(parts)


def format_sources(documents: Sequence[Any], *, empty_index: bool = False) -> str:
    """The sources block under an answer: a heading and one expandable entry per source, in order."""
    if not documents:
        return EMPTY_INDEX if empty_index else NO_SOURCES
    entries = [format_source(doc, i) for i, doc in enumerate(documents, start=1)]
    return "\n\n".join([f"**Sources** ({len(documents)})", *entries])


_SEARCH_PREFIXES = ("searched for:", "question searched as typed")
_WARNING_WORDS = ("unavailable", "cannot", "not available", "stale", "failed", "empty", "unreachable")


def notice_marker(notice: str) -> str:
    """The icon before a notice: → for what was searched, ⚠ for a degradation, ℹ otherwise."""
    lowered = notice.lower()
    if lowered.startswith(_SEARCH_PREFIXES):
        return "→"
    if any(word in lowered for word in _WARNING_WORDS):
        return "⚠"
    return "ℹ"


def escape_text(text: str) -> str:
    """HTML-escape text that goes into Markdown (backticks kept, so commands still render as code)."""
    return html.escape(" ".join(text.split()), quote=False)


def format_notices(notices: Iterable[str]) -> str:
    """Notices as blockquote lines (one paragraph each), in the order they were raised; ``""`` if none."""
    lines = [f"> {notice_marker(n)} {escape_text(n)}" for n in notices if n and n.strip()]
    return "\n>\n".join(lines)


def format_error(message: str) -> str:
    """A failure that stopped the question (missing or stale index, broken pipeline), as one line."""
    return f"> ✖ **{escape_text(message)}**"


def format_footer(pipeline: str, seconds: float | None) -> str:
    """The small line naming the pipeline (and time) that produced an answer."""
    took = f" · {seconds:.1f} s" if seconds is not None else ""
    return f"<small>pipeline <code>{html.escape(pipeline)}</code>{took}</small>"


def format_turn(
    answer: str | None,
    *,
    notices: Sequence[str] = (),
    documents: Sequence[Any] = (),
    pipeline: str | None = None,
    seconds: float | None = None,
    empty_index: bool = False,
) -> str:
    """A finished assistant message: answer, notices, sources, footer (empty parts left out).

    With no answer (LLM unreachable, model missing) the sources are still shown, and the notices say
    how to fix it.
    """
    parts = []
    if answer and answer.strip():
        parts.append(answer.strip())
    elif documents:
        parts.append("_No answer was generated; the sources found are below._")
    block = format_notices(notices)
    if block:
        parts.append(block)
    parts.append(format_sources(documents, empty_index=empty_index))
    if pipeline:
        parts.append(format_footer(pipeline, seconds))
    return "\n\n".join(parts)


def format_partial(answer_so_far: str, *, status: str = "") -> str:
    """The assistant message while the answer streams (a cursor shows it is not finished)."""
    if not answer_so_far:
        return f"_{status or 'searching the repository…'}_"
    return answer_so_far + " ▌"
