"""Which model answers a question: a server that answers, else the embedded model in this process.

Rule (``choose``, for a command given no ``--pipeline``): ``$CODEGROUND_ANSWERS`` says which runtime
(``auto``, the default; ``ollama``; ``openai``; ``embedded``). ``auto`` takes

1. an Ollama server that answers at ``$OLLAMA_HOST`` (``GET /api/version`` within ``PROBE_S``):
   ``query.yaml``, today's default models;
2. else an OpenAI-compatible endpoint the user configured (``$CODEGROUND_OPENAI_BASE_URL``):
   ``query_openai.yaml``;
3. else the embedded model (``answering.models.EMBEDDED``, llama.cpp in this process, the prompt
   budget of ``query_embedded.yaml``), fetched once on first use with a progress line.

The embedded model is used only when it can run: the llama.cpp runtime is importable (``just setup``
installs it) and the GGUF is on disk or was just fetched. Otherwise the choice falls back to
``query.yaml`` with one line saying what to do: the search still runs and its sources are shown;
the answer says the server cannot be reached. Nothing retries.

Usage:
```python
from pathlib import Path
from codeground.app.answering.choice import choose

given = choose(Path("pipelines/bm25.yaml"), cache=Path("/tmp/cache"))
assert given.runtime == "given" and given.note is None
```
"""

from __future__ import annotations

import importlib.util
import os
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeground.app.answering.models import ANSWER_MODELS, EMBEDDED, embedded_model_path
from codeground.app.errors import CodegroundError
from codeground.app.pipeline.loader import PIPELINES_DIR, ollama_url

RUNTIMES = ("auto", "ollama", "openai", "embedded")
PROBE_S = 0.5  # an Ollama on this machine answers /api/version in milliseconds
SERVERS_FIX = "start Ollama (`just ollama`), set CODEGROUND_OPENAI_BASE_URL to an OpenAI-compatible endpoint"
SERVER_FIX = f"{SERVERS_FIX}, or fetch the embedded model once online (`codeground fetch-model {EMBEDDED}`)"


@dataclass(frozen=True)
class AnswerChoice:
    """The query pipeline to answer with, the runtime behind it, and a line for the user (or None)."""

    pipeline: Path
    runtime: str
    note: str | None = None


def ollama_answers(url: str, timeout: float = PROBE_S) -> bool:
    """Whether an Ollama server answers at ``url`` (its ``/api/version``) within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(f"{url}/api/version", timeout=timeout) as response:  # noqa: S310
            return response.status == 200
    except (OSError, ValueError):
        return False


def runtime_setting() -> str:
    """``$CODEGROUND_ANSWERS`` (default ``auto``), or the one-line error naming the choices."""
    value = (os.environ.get("CODEGROUND_ANSWERS") or "auto").strip().lower()
    if value not in RUNTIMES:
        raise CodegroundError(f"$CODEGROUND_ANSWERS is {value!r}; use one of {', '.join(RUNTIMES)}")
    return value


def embedded_runtime_installed() -> bool:
    """Whether llama.cpp's Haystack generator can be imported (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None and (
        importlib.util.find_spec("haystack_integrations.components.generators.llama_cpp") is not None
    )


def _embedded(cache: Path, say: Callable[[str], None], fetch: bool) -> AnswerChoice:
    ollama = PIPELINES_DIR / "query.yaml"  # what runs when the embedded model cannot: the search
    if not embedded_runtime_installed():
        return AnswerChoice(
            ollama,
            "ollama",
            "no answering model: no LLM server answers and the embedded runtime (llama.cpp) is not "
            f"installed (`just setup` installs it); {SERVERS_FIX}",
        )
    path = embedded_model_path(cache)
    if not path.is_file():
        if os.environ.get("CODEGROUND_GGUF"):
            return AnswerChoice(ollama, "ollama", f"$CODEGROUND_GGUF names no file: {path}")
        if not fetch:
            note = f"no answering model: {EMBEDDED} is not fetched yet"
            return AnswerChoice(ollama, "ollama", note)
        try:
            ANSWER_MODELS[EMBEDDED].ensure(cache, say=say)
        except CodegroundError as exc:
            return AnswerChoice(ollama, "ollama", f"no answering model: {exc}; {SERVER_FIX}")
    return AnswerChoice(PIPELINES_DIR / "query_embedded.yaml", "embedded")


def names_embedded_model(pipeline: Path) -> bool:
    """Whether a query YAML (its overlays resolved) answers with ``${embedded_model}``."""
    import json

    from codeground.app.pipeline.loader import read_pipeline_dict

    return "${embedded_model}" in json.dumps(read_pipeline_dict(pipeline))


def _fetched_for(pipeline: Path, cache: Path, say: Callable[[str], None]) -> str | None:
    """A given YAML that answers with the embedded model gets it fetched once, as the rule's choice
    does; the line to show when that cannot be done (None: nothing to say)."""
    try:
        if not names_embedded_model(pipeline) or embedded_model_path(cache).is_file():
            return None
    except CodegroundError:
        return None  # a bad YAML is refused, in one line, by whoever loads it
    if os.environ.get("CODEGROUND_GGUF"):
        return f"$CODEGROUND_GGUF names no file: {embedded_model_path(cache)}"
    try:
        ANSWER_MODELS[EMBEDDED].ensure(cache, say=say)
    except CodegroundError as exc:
        return f"no answering model: {exc}; {SERVER_FIX}"
    return None


def choose(
    pipeline: Path | None, *, cache: Path, say: Callable[[str], None] = print, fetch: bool = True
) -> AnswerChoice:
    """The pipeline that answers: ``pipeline`` when one is given, else the rule's choice (``fetch``:
    whether a missing embedded model is fetched now; ``doctor`` only looks)."""
    if pipeline is not None:
        return AnswerChoice(pipeline, "given", _fetched_for(pipeline, cache, say) if fetch else None)
    setting = runtime_setting()
    if setting == "ollama":
        return AnswerChoice(PIPELINES_DIR / "query.yaml", "ollama")
    if setting == "openai":
        return AnswerChoice(PIPELINES_DIR / "query_openai.yaml", "openai")
    if setting == "embedded":
        return _embedded(cache, say, fetch)
    if ollama_answers(ollama_url()):
        return AnswerChoice(PIPELINES_DIR / "query.yaml", "ollama")
    if os.environ.get("CODEGROUND_OPENAI_BASE_URL"):
        return AnswerChoice(PIPELINES_DIR / "query_openai.yaml", "openai")
    return _embedded(cache, say, fetch)
