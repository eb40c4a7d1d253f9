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
- Identifiers the grounding check found nowhere in the repository are marked inside the finished
  answer (``mark_unknown``): each whole occurrence becomes ``<mark class="cg-unknown" title="not
  found in this repository">⚠ name</mark>``, in prose, in inline code and in fenced code alike.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

from codeground.components.identifiers import looks_like_code
from codeground.components.markdown import blocks
from codeground.components.notices import DEGRADED, SEARCHED, kind_of

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
    """The icon before a notice: → for what was searched, ⚠ for a degradation, ℹ otherwise. Decided
    by the notice's kind; only a plain string (someone else's component) is judged by its words."""
    kind = kind_of(notice)
    if kind is not None:
        return "→" if kind in SEARCHED else "⚠" if kind in DEGRADED else "ℹ"
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
    unknown: Sequence[str] = (),
    withheld: str | None = None,
) -> str:
    """A finished assistant message: answer, notices, sources, footer (empty parts left out).

    With no answer (LLM unreachable, model missing) the sources are still shown, and the notices say
    how to fix it. ``unknown`` (the grounding check's names found nowhere in the repository) are
    marked where the answer names them. A ``withheld`` answer (asked for twice, it still named what
    the repository lacks) is shown only folded, under a line that says so, its text inert.
    """
    parts = []
    if answer and answer.strip():
        parts.append(mark_unknown(answer.strip(), unknown))
    elif documents:
        parts.append("_No answer was generated; the sources found are below._")
    block = format_notices(notices)
    if block:
        parts.append(block)
    if withheld and withheld.strip():
        parts.append(
            f"<details><summary>{WITHHELD_TITLE}</summary><pre>{_literal(withheld.strip())}</pre></details>"
        )
    parts.append(format_sources(documents, empty_index=empty_index))
    if pipeline:
        parts.append(format_footer(pipeline, seconds))
    return "\n\n".join(parts)


def format_partial(answer_so_far: str, *, status: str = "") -> str:
    """The assistant message while the answer streams (a cursor shows it is not finished)."""
    if not answer_so_far:
        return f"_{status or 'searching the repository…'}_"
    return answer_so_far + " ▌"


# -- identifiers the repository does not have --------------------------------------------------------
UNKNOWN_TITLE = "not found in this repository"
WITHHELD_TITLE = "The model's answer, withheld: it names what this repository does not have"
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
# Markdown punctuation written as entities, so text inside inline ``<code>`` stays literal.
_MD_ENTITIES = {c: f"&#{ord(c)};" for c in "\\`*_[]~|"}


def _literal(text: str) -> str:
    """``text`` for raw HTML inside Markdown: escaped, and Markdown punctuation made inert."""
    escaped = html.escape(text, quote=False)
    return "".join(_MD_ENTITIES.get(c, c) for c in escaped)


def _mark(name: str) -> str:
    return f'<mark class="cg-unknown" title="{UNKNOWN_TITLE}">⚠ {_literal(name)}</mark>'


def _unknown_pattern(unknown: Iterable[str]) -> re.Pattern[str] | None:
    names = sorted({n.strip() for n in unknown if n and n.strip()}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)")


def _mark_code(code: str, pattern: re.Pattern[str], *, inline: bool = True) -> str:
    """Code as raw HTML text with every unknown name marked. Inside a ``<pre>`` block Markdown is not
    parsed, so plain HTML escaping is enough there; inline, Markdown punctuation is made inert too."""
    escape = _literal if inline else (lambda t: html.escape(t, quote=False))
    out, last = [], 0
    for m in pattern.finditer(code):
        out += [escape(code[last : m.start()]), _mark(m.group(0))]
        last = m.end()
    return "".join(out) + escape(code[last:])


def _word_at(text: str, start: int, end: int) -> str:
    """The whitespace-delimited run around ``text[start:end]``."""
    left = max(text.rfind(c, 0, start) for c in " \t\n") + 1
    right = min((k for k in (text.find(c, end) for c in " \t\n") if k >= 0), default=len(text))
    return text[left:right]


def _mark_prose(text: str, pattern: re.Pattern[str]) -> str:
    """Prose: a name is marked when it looks like code or is written as a call or keyword (``fit(``,
    ``fit=``); never inside a URL, path, e-mail address or HTML tag."""
    out, last = [], 0
    for m in pattern.finditer(text):
        if any(s in _word_at(text, m.start(), m.end()) for s in ("/", "@", "<", ">")):
            continue
        if not (looks_like_code(m.group(0)) or text[m.end() : m.end() + 1] in ("(", "=")):
            continue
        out += [text[last : m.start()], _mark(m.group(0))]
        last = m.end()
    return "".join(out) + text[last:]


def _mark_text(text: str, pattern: re.Pattern[str]) -> str:
    """Text outside fences: inline code spans holding an unknown name become ``<code>`` HTML."""
    out, last = [], 0
    for m in _INLINE_CODE.finditer(text):
        code = m.group(2)
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        if not pattern.search(code):
            continue
        out += [_mark_prose(text[last : m.start()], pattern), f"<code>{_mark_code(code, pattern)}</code>"]
        last = m.end()
    return "".join(out) + _mark_prose(text[last:], pattern)


def _mark_fence(lines: list[str], indent: str, info: str, pattern: re.Pattern[str]) -> str:
    """A fenced block's body holding an unknown name, as one ``<pre>`` HTML block (a blank line in the
    code cannot end it) with the names marked; the fence's language is kept as a class."""
    body = "".join(line[len(indent) :] if line.startswith(indent) else line.lstrip(" ") for line in lines)
    language = info.strip().split(" ")[0] if info.strip() else ""
    cls = f' class="language-{html.escape(language)}"' if language else ""
    code = _mark_code(body.rstrip("\n"), pattern, inline=False)
    return f'{indent}<pre class="cg-code"><code{cls}>{code}</code></pre>'


def mark_unknown(answer: str, unknown: Iterable[str]) -> str:
    """``answer`` (Markdown) with every whole occurrence of an ``unknown`` identifier marked.

    - Whole identifiers only: ``fit`` is not marked inside ``fit_fast`` or ``refit``; a dotted name
      (``Trainer.fit_fast``) is matched whole, longer names first; names not listed are never marked.
    - Inline code holding one becomes an HTML ``<code>`` element with the mark inside; a fenced block
      holding one becomes a ``<pre>`` block (without syntax highlighting). Code without one is left
      exactly as written, and so is a fence's end: an unclosed fence still runs to the end.
    - In prose, only names that look like code (``snake_case``, ``Dotted.name``, ``CamelCase``) or are
      written as a call or keyword argument are marked, so an English word is never flagged.
    """
    pattern = _unknown_pattern(unknown)
    if pattern is None or not pattern.search(answer):
        return answer
    out: list[str] = []
    for block in blocks(answer.splitlines(keepends=True)):
        whole = "".join(block.lines)
        if block.fence is None:
            out.append(_mark_text(whole, pattern))
        elif pattern.search("".join(block.body)):
            marked = _mark_fence(block.body, block.fence.indent, block.fence.info, pattern)
            out.append(marked + ("\n" if whole.endswith("\n") else ""))
        else:
            out.append(whole)
    return "".join(out)
