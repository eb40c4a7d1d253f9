"""The concept prompt: what the model reads first, before the grounding contract.

Rule: a repository may ship its own concept prompt (how its maintainers describe its ideas) as
``<repo>/.codeground/prompt.md``; ``--system-prompt FILE`` (or ``$CODEGROUND_SYSTEM_PROMPT``) replaces
it for one run; without either, ``DEFAULT_CONCEPT_PROMPT`` is used. The query YAMLs put it at the top of
the system message as ``{{ concept_prompt }}`` and append the grounding contract after it, so no
concept prompt can remove or override the contract. A prompt file that is missing, unreadable, not
UTF-8, empty or longer than ``MAX_CHARS`` is a one-line error, never silently replaced by the default.
``.codeground/`` is never indexed (the walker prunes it), so the prompt is not quoted as a source.

Any prompt file is read by one reader (``read_prompt_file``) that opens only a regular file (a FIFO,
a device such as ``/dev/zero``, a socket or a folder is refused without blocking) and reads at most
``MAX_BYTES``; the repository's own ``prompt.md`` must moreover lie inside the repository once every
symlink is resolved (a clone can carry a link to ``~/.ssh/…`` or to anything else on the machine).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from codeground.app.errors import CodegroundError

ENV_VAR = "CODEGROUND_SYSTEM_PROMPT"
REPOSITORY_PROMPT = Path(".codeground") / "prompt.md"
MAX_CHARS = 6000  # it shares the model's context window with up to 8 quoted sources
MAX_BYTES = 4 * MAX_CHARS  # no UTF-8 text of MAX_CHARS characters is longer

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


def _read_regular(path: Path) -> bytes:
    """At most ``MAX_BYTES + 1`` bytes of a regular file, opened without blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise CodegroundError(f"system prompt file not found: {path}") from None
    except OSError as exc:
        raise CodegroundError(f"cannot read system prompt file {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a pipe, device or socket)"
        raise CodegroundError(f"system prompt file {path} is {what}: give a text file")
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise CodegroundError(f"cannot read system prompt file {path}: {exc.strerror or exc}") from None


def read_prompt_file(path: str | Path, *, inside: str | Path | None = None) -> str:
    """The text of a concept prompt file, or a one-line ``CodegroundError`` saying what is wrong with
    it; with ``inside``, a file that (symlinks resolved) lies outside that folder is refused too."""
    path = Path(path)
    if inside is not None and not path.resolve().is_relative_to(Path(inside).resolve()):
        raise CodegroundError(
            f"system prompt file {path} links outside the repository (to {path.resolve()}): "
            "a repository's prompt must be a file inside it"
        )
    data = _read_regular(path)
    if len(data) > MAX_BYTES:
        raise CodegroundError(
            f"system prompt file {path} is over {MAX_BYTES:,} bytes; keep it under {MAX_CHARS:,} "
            "characters (it shares the model's context with the quoted sources)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodegroundError(f"system prompt file {path} is not UTF-8 text") from exc
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
        if os.path.lexists(candidate):  # a dangling link is an error to report, not "no prompt"
            return ConceptPrompt(read_prompt_file(candidate, inside=repo_root), str(candidate))
    if chosen is None:
        return ConceptPrompt(DEFAULT_CONCEPT_PROMPT, "default")
    return ConceptPrompt(read_prompt_file(chosen), str(chosen))
