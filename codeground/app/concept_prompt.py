"""The concept prompt: what the model reads first, before the grounding contract.

Rule: a repository may ship its own concept prompt (how its maintainers describe its ideas) as
``<repo>/.codeground/prompt.md``; ``--system-prompt FILE`` (or ``$CODEGROUND_SYSTEM_PROMPT``) replaces
it for one run; without either, ``DEFAULT_CONCEPT_PROMPT`` is used. The query YAMLs put it at the top of
the system message as ``{{ concept_prompt }}`` and append the grounding contract after it, so no
concept prompt can remove or override the contract. A prompt file that is missing, unreadable, not
UTF-8, empty or longer than ``MAX_CHARS`` is a one-line error, never silently replaced by the default.
``.codeground/`` is never indexed (the walker prunes it), so the prompt is not quoted as a source.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from codeground.app.errors import CodegroundError

ENV_VAR = "CODEGROUND_SYSTEM_PROMPT"
REPOSITORY_PROMPT = Path(".codeground") / "prompt.md"
MAX_CHARS = 6000  # it shares the model's context window with up to 8 quoted sources

DEFAULT_CONCEPT_PROMPT = (
    "You are codeground, an assistant that answers questions about one code repository by reading its "
    "source code and documentation, which are quoted to you below the question's heading. Explain the "
    "idea first (what the code is for and how its parts fit together) in plain words, then show how to "
    "use it, spelling every name exactly as the repository does."
)


@dataclass(frozen=True)
class ConceptPrompt:
    """The prompt text and where it came from (a file path, or ``"default"``)."""

    text: str
    source: str


def read_prompt_file(path: str | Path) -> str:
    """The text of a concept prompt file, or a one-line ``CodegroundError`` saying what is wrong with it."""
    path = Path(path)
    if not path.exists():
        raise CodegroundError(f"system prompt file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CodegroundError(f"system prompt file {path} is not UTF-8 text") from exc
    except OSError as exc:
        raise CodegroundError(f"cannot read system prompt file {path}: {exc.strerror or exc}") from exc
    text = text.strip()
    if not text:
        raise CodegroundError(
            f"system prompt file {path} is empty: describe the repository's concepts in it, "
            "or remove it to use the default prompt"
        )
    if len(text) > MAX_CHARS:
        raise CodegroundError(
            f"system prompt file {path} has {len(text):,} characters; keep it under {MAX_CHARS:,} "
            "(it shares the model's context with the quoted sources)"
        )
    return text


def repository_prompt_path(repo_root: str | Path) -> Path:
    """Where a repository keeps its own concept prompt."""
    return Path(repo_root) / REPOSITORY_PROMPT


def resolve_concept_prompt(
    *, system_prompt: str | Path | None = None, repo_root: str | Path | None = None
) -> ConceptPrompt:
    """The concept prompt for one run: ``system_prompt``, else ``$CODEGROUND_SYSTEM_PROMPT``, else the
    repository's ``.codeground/prompt.md``, else the default."""
    chosen = system_prompt or os.environ.get(ENV_VAR, "").strip() or None
    if chosen is None and repo_root is not None:
        candidate = repository_prompt_path(repo_root)
        if candidate.exists():
            chosen = candidate
    if chosen is None:
        return ConceptPrompt(DEFAULT_CONCEPT_PROMPT, "default")
    return ConceptPrompt(read_prompt_file(chosen), str(chosen))
