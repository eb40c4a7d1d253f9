"""Command-line flags an answer writes that the repository never does (``--max-model-length``).

An invented flag is the command-line form of an invented keyword argument, and the grounding check
does not read flags (they are not identifiers). The question's flags are the premise's
(``QuestionPremise``: a flag asked about that the repository lacks is refused before the model is
called, a standard tool's flag included, since the repository cannot answer about it); this module
reads the answer's.

Rules:
- A flag is ``--name`` (letters, digits, ``-`` and ``_``, starting with a letter) anywhere in the
  reply: prose, inline code and code blocks alike; ``--name=value`` is the flag ``--name``.
- **known** when the repository writes it anywhere (``--tensor-parallel-size`` in a doc, a
  ``"--tensor-parallel-size"`` in an argparse call), when it has several parts and an identifier of
  the repository has its letters (``tensor_parallel_size``; case, ``_`` and ``-`` ignored, or the
  head of a longer identifier cut at a part boundary: ``components.grounding.vocabulary``'s
  ``near``; a one-word flag such as ``--email`` must be written as a flag, since any English word
  of the repository is an identifier of it), or when it is
  one of ``STANDARD_FLAGS``: what pip, python, git, docker, npm and the shell tools an answer uses
  to install and run a project accept (``pip install --upgrade``, ``docker run --rm``), which a
  repository need not spell out.
- **unknown** otherwise: ``flags["unknown"]`` lists them once each, in the reply's order, and a
  notice marks them as the grounding check marks names (``not found in this repository: --x``), so
  a client shows both the same way and the repair (``codeground.app.query.repair``) asks again once.
- Without a store, or with an empty one, nothing is decided (no flag is unknown). No reply, or an
  empty one: an empty report, no notice. Inputs are never mutated.

Usage:
```python
from haystack import Document
from haystack.dataclasses import ChatMessage
from codeground.components.grounding.flags import AnswerFlags
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

store = SQLiteBM25DocumentStore()
store.write_documents([Document(content='parser.add_argument("--max-model-len", type=int)')])
check = AnswerFlags(document_store=store)
check.warm_up()
reply = ChatMessage.from_assistant("Run `serve --max-model-length 4096 --max-model-len 4096 --help`.")
out = check.run(replies=[reply])
assert out["flags"]["unknown"] == ["--max-model-length"] and out["notices"]
```
"""

from __future__ import annotations

import re
from typing import Any

from haystack import component, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage

from codeground.components.grounding.vocabulary import RepositoryVocabulary, vocabulary_of, written_in
from codeground.components.notices import UNKNOWN_IDENTIFIERS, Notice

FLAG = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*[A-Za-z0-9])")

# flags of the tools an answer uses to install and run a project; a repository need not write them
# fmt: off
STANDARD_FLAGS = frozenset({
    # common to most command lines
    "help", "version", "verbose", "quiet", "debug", "dry-run", "force", "yes", "output", "config",
    "all", "recursive", "interactive",
    # pip
    "upgrade", "user", "editable", "pre", "no-deps", "no-cache-dir", "index-url", "extra-index-url",
    "requirement", "force-reinstall", "no-binary", "only-binary", "target", "prefix",
    "no-build-isolation", "find-links", "constraint", "break-system-packages",
    # python, uv, conda, venv
    "system-site-packages", "python", "clear", "channel",
    # git
    "depth", "branch", "recurse-submodules", "single-branch", "global", "local", "hard", "soft",
    "amend", "rebase", "oneline", "no-verify",
    # docker
    "rm", "it", "detach", "gpus", "ipc", "name", "env", "env-file", "volume", "publish", "port",
    "network", "shm-size", "runtime", "entrypoint", "privileged", "build-arg", "tag", "file",
    "platform", "restart", "mount", "workdir", "memory", "cpus", "device", "cap-add", "security-opt",
    "group-add", "ulimit", "init", "pull", "no-cache",
    # npm, node
    "save", "save-dev", "save-exact", "legacy-peer-deps", "production", "prefer-offline",
    "max-old-space-size", "inspect", "experimental-vm-modules", "require", "loader", "import",
    # go, cargo, mvn
    "release", "features", "all-features", "no-default-features", "manifest-path", "race", "tags",
    "ldflags", "mod", "batch-mode",
    # curl, ssh, shell tools
    "header", "data", "request", "location", "insecure", "silent", "fail", "include", "user-agent",
    "compressed", "color", "colour",
})
# fmt: on


def flag_known(names: RepositoryVocabulary, store: Any, flag: str) -> bool:
    """Whether the repository has ``--flag`` (``flag`` without its dashes; module rules)."""
    if flag.lower() in STANDARD_FLAGS:
        return True
    if ("-" in flag or "_" in flag) and (names.is_known(flag) or names.near(flag)):
        return True
    return written_in(store, f"--{flag}")


@component
class AnswerFlags:
    """The flags an answer writes that the repository never does (module rules)."""

    def __init__(self, *, document_store: Any = None) -> None:
        """
        :param document_store: the store holding every record (the BM25 store), as the grounding check's.
        """
        self.document_store = document_store
        self._names: RepositoryVocabulary | None = None

    def warm_up(self) -> None:
        """Read the repository's vocabulary once (shared with the grounding check and the premise)."""
        if self._names is None:
            names = vocabulary_of(self.document_store)
            names.index_spellings()
            self._names = names

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerFlags:
        return default_from_dict(cls, data)

    @component.output_types(flags=dict, notices=list[str])
    def run(self, replies: list[ChatMessage]) -> dict[str, Any]:
        """The first reply's flags and those of them the repository lacks."""
        self.warm_up()
        names = self._names
        assert names is not None
        text = (replies[0].text or "") if replies else ""
        flags = list(dict.fromkeys(FLAG.findall(text)))
        decided = bool(names.identifiers or names.symbols)  # no repository to read: nothing is decided
        unknown = [f"--{f}" for f in flags if decided and not flag_known(names, self.document_store, f)]
        notices = [Notice(UNKNOWN_IDENTIFIERS, f"not found in this repository: {', '.join(unknown)}")]
        report = {"flags": [f"--{f}" for f in flags], "unknown": unknown}
        return {"flags": report, "notices": notices if unknown else []}
