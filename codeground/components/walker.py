"""Walk a repository checkout and yield the files worth indexing, as ``ByteStream`` objects.

The walker is the first step of the index pipeline ("walk the checkout (ignore lists,
.gitignore, secrets) → route by file type → chunkers"). It decides *which* files are read and tags
each with a MIME type the router dispatches on; it never interprets file contents beyond the
checks needed to refuse binary, non-UTF-8 and empty files.

Every file it meets is either indexed or skipped with a named reason, so a report can say exactly
why a file is missing from the index; nothing outside the repository is ever read (symlinks are
not followed) and secrets are never indexed, whatever the configuration says: secret files are
refused by name (``secret_files``), keys pasted into any other file are overwritten before the
file leaves the walker (``secret_scan``), so no key byte reaches a chunker, an embedder or a store.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import logging
import os
import re
import stat
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pathspec
from haystack import component, default_from_dict, default_to_dict
from haystack.dataclasses import ByteStream

from codeground.components.generated_dirs import GENERATED_DIR_NAMES  # pruned too, but counted
from codeground.components.languages import MIME_BY_SUFFIX as LANGUAGE_MIMES
from codeground.components.secret_files import is_secret_file
from codeground.components.secret_scan import redact

logger = logging.getLogger(__name__)

# Directories never walked and never counted (VCS metadata, build output, virtualenvs, caches).
PRUNED_DIR_NAMES: frozenset[str] = frozenset(
    [
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "env",
        ".env",
        ".eggs",
        ".ipynb_checkpoints",
        ".codeground",
        "site-packages",
        ".idea",
        ".vscode",
    ]
)
PRUNED_DIR_GLOBS: tuple[str, ...] = ("*.egg-info",)
# Minified bundles: skipped as ``minified`` by name, or when a parsed language's file has lines a
# person does not write (mean over MINIFIED_MEAN_LINE chars in a file of at least 2 KB).
MINIFIED_GLOBS: tuple[str, ...] = ("*.min.js", "*.min.mjs", "*.min.cjs", "*-min.js", "*.bundle.js")
MINIFIED_MEAN_LINE = 300

LOCKFILE_GLOBS: tuple[str, ...] = tuple(
    [
        "*.lock",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "Cargo.lock",
    ]
)

DEFAULT_TEXT_EXTENSIONS: tuple[str, ...] = tuple(
    [
        ".txt",
        ".cfg",
        ".ini",
        ".toml",
        ".yaml",
        ".yml",
        ".bats",
        ".cu",
        ".cuh",
        ".proto",
        ".cmake",
        ".in",
        ".sql",
    ]
)
# Build files recognised by name (``Dockerfile.cpu`` counts as a Dockerfile); they are ``text/plain``.
TEXT_FILE_NAMES: frozenset[str] = frozenset(
    {"Dockerfile", "Containerfile", "Makefile", "GNUmakefile", "makefile", "Justfile", "justfile"}
)
TEXT_FILE_PREFIXES: tuple[str, ...] = ("Dockerfile.", "Containerfile.")

MIME_BY_SUFFIX: dict[str, str] = {
    **LANGUAGE_MIMES,  # every suffix of languages.LANGUAGES: parsed by tree-sitter
    ".py": "text/x-python",
    ".pyi": "text/x-python",
    ".ipynb": "application/x-ipynb+json",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
}
TEXT_MIME = "text/plain"

# Skip reasons (keys of ``report["skipped"]``).
IGNORED = "ignored"
SECRET = "secret"
LOCKFILE = "lockfile"
SYMLINK = "symlink"
UNSUPPORTED_TYPE = "unsupported_type"
TOO_LARGE = "too_large"
UNREADABLE = "unreadable"
VANISHED = "vanished"
BINARY = "binary"
NOT_UTF8 = "not_utf8"
EMPTY = "empty"
MINIFIED = "minified"

_BINARY_SNIFF_BYTES = 8192
_PARSED_MIMES = frozenset(LANGUAGE_MIMES.values())


def _looks_minified(text: str) -> bool:
    """A bundle or minified file: at least 2 KB whose lines average over ``MINIFIED_MEAN_LINE`` chars."""
    return len(text) >= 2048 and len(text) / (text.count("\n") + 1) > MINIFIED_MEAN_LINE


_USER_IGNORE_FILE = ".codegroundignore"

# (prefix relative to root, "" or "a/b/", compiled spec); evaluated in order, the last match wins.
_SpecStack = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
_Keys = tuple[frozenset[str], dict[str, tuple[int, dict[str, int]]]]  # digests known clean; redactions


@functools.cache
def _glob_union(globs: tuple[str, ...]) -> Callable[[str], re.Match | None]:
    """One compiled pattern for a tuple of globs (``fnmatchcase`` semantics), built once."""
    return re.compile("|".join(fnmatch.translate(g) for g in globs)).match


def _matches_any(name: str, globs: tuple[str, ...]) -> bool:
    return _glob_union(globs)(name) is not None


def _is_ignored(rel: str, stack: _SpecStack) -> bool:
    """Git semantics: walk the specs from lowest to highest precedence; the last matching rule wins."""
    ignored = False
    for prefix, spec in stack:
        if prefix and not rel.startswith(prefix):
            continue
        include = spec.check_file(rel[len(prefix) :]).include
        if include is not None:
            ignored = include
    return ignored


def _compile(lines: list[str]) -> pathspec.GitIgnoreSpec | None:
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return spec if len(spec) else None


def _read_ignore_file(path: str) -> pathspec.GitIgnoreSpec | None:
    """Compile a gitignore-syntax file; an unreadable one is logged and treated as empty."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _compile(fh.read().splitlines())
    except OSError as exc:
        logger.warning("cannot read ignore file %s: %s", path, exc)
        return None


@component
class RepositoryWalker:
    """
    Walk a repository checkout and return the files to index as ``ByteStream`` objects.

    Rules, in the order they are applied to each entry:

    1. Always pruned (not walked, not counted): directories named ``.git .hg .svn __pycache__
       .mypy_cache .pytest_cache .ruff_cache .tox .nox .venv venv env .env .eggs *.egg-info
       .ipynb_checkpoints .codeground site-packages .idea .vscode``. Generated and vendored trees
       (``generated_dirs``: ``node_modules dist build vendor target Pods _build deps .zig-cache``
       …) are pruned as well, and counted in ``report["pruned"]`` (directory name → how many).
    2. Ignore rules, lowest to highest precedence, last match wins (git semantics, ``!`` negation
       included): ``.git/info/exclude``, ``.gitignore`` at every level (relative to its own
       directory, deeper files override shallower), then the user's patterns (``ignore`` plus the
       root ``.codegroundignore``), relative to the root. They *add* to the defaults above. A
       directory matched by an ignore rule is pruned and its contents are counted nowhere; an
       ignored file is counted as ``ignored``.
    3. Secret files (the table ``secret_files.SECRET_FILES``, case-insensitive: ``.env*``, private
       keys and keystores, ``secret(s).*``, ``credentials.*``, ``.netrc``, ``*.tfvars``,
       kubeconfigs, ...; never a ``.py``/``.md``/... file, which is code or prose) are skipped as
       ``secret``, lock files as ``lockfile`` and minified bundles (``*.min.js``, ``*.bundle.js``,
       ...) as ``minified`` -- whatever any ignore file or negation says.
    4. Symlinks (to files or directories) are never followed; each counts as ``symlink``.
    5. Type by suffix: ``.py``/``.pyi`` → ``text/x-python``, ``.ipynb`` → ``application/x-ipynb+json``,
       ``.md``/``.markdown`` → ``text/markdown``, ``.rst`` → ``text/x-rst``, the tree-sitter languages
       (``languages.LANGUAGES``, one MIME type each: ``.js`` → ``text/javascript``, ``.go`` →
       ``text/x-go``, ``.rb`` → ``text/x-ruby``, ``.h`` → ``text/x-c``, ``.cpp`` → ``text/x-c++``, …),
       ``text_extensions`` and build files (``Dockerfile*``, ``Makefile``, ...) → ``text/plain``;
       anything else is ``unsupported_type``.
    6. Content: over ``max_file_bytes`` → ``too_large`` (checked before reading); a NUL byte in the
       first 8 KiB → ``binary``; invalid UTF-8 → ``not_utf8``; empty or whitespace only → ``empty``;
       an OS error while reading → ``unreadable``; gone between listing and reading → ``vanished``;
       a tree-sitter language's file of at least 2 KB whose lines average over 300 characters
       (a bundle, whatever its name) → ``minified``.
    7. Keys in the text of an indexed file (``secret_scan``: PEM private keys, AWS, GitHub, Slack,
       OpenAI, ... tokens) are overwritten in place by ``[REDACTED:<kind>]***`` of the same length:
       the stream's bytes are the redacted text (line numbers and offsets unchanged), its
       ``sha256`` is the file's on disk; ``report["redacted"]`` says how many lines, per file, and
       ``report["redacted_kinds"]`` how many keys of each kind. A file whose sha256 is in ``clean``
       (contents the caller knows hold no key under these rules) is not scanned again.

    Special files (FIFOs, sockets, devices) are neither read nor counted. A directory that cannot
    be listed is logged and contributes nothing. ``report["seen"]`` equals ``indexed`` plus the sum
    of ``report["skipped"]``.

    Usage example:
    ```python
    from codeground.components.walker import RepositoryWalker

    walker = RepositoryWalker(max_file_bytes=500_000, ignore=["tests/fixtures/"])
    result = walker.run(root=".")
    for stream in result["files"]:
        print(stream.meta["file_path"], stream.mime_type)
    print(result["report"]["skipped"])  # e.g. {"binary": 3, "ignored": 12, "unsupported_type": 40}
    ```
    """

    def __init__(
        self,
        *,
        max_file_bytes: int = 1_000_000,
        ignore: list[str] | None = None,
        text_extensions: list[str] | None = None,
        max_notebook_bytes: int = 20_000_000,
    ) -> None:
        """
        Create the walker.

        :param max_file_bytes: Files larger than this many bytes are skipped as ``too_large``.
        :param max_notebook_bytes: The cap for ``.ipynb`` files, whose size is mostly stored outputs
            (plots, tables) that the notebook chunker drops.
        :param ignore: Extra gitignore-style patterns, relative to the repository root. They add to
            the default exclusions and to ``.gitignore``; they cannot re-include secrets.
        :param text_extensions: Suffixes (with the dot, case-insensitive) indexed as ``text/plain``.
            ``None`` uses ``DEFAULT_TEXT_EXTENSIONS``; an empty list disables the plain-text fallback.
        """
        if not isinstance(max_file_bytes, int) or max_file_bytes <= 0:
            raise ValueError(f"max_file_bytes must be a positive integer, got {max_file_bytes!r}")
        if not isinstance(max_notebook_bytes, int) or max_notebook_bytes <= 0:
            raise ValueError(f"max_notebook_bytes must be a positive integer, got {max_notebook_bytes!r}")
        self.max_file_bytes = max_file_bytes
        self.max_notebook_bytes = max_notebook_bytes
        self.ignore = list(ignore) if ignore is not None else None
        self.text_extensions = list(text_extensions) if text_extensions is not None else None

        exts = DEFAULT_TEXT_EXTENSIONS if text_extensions is None else text_extensions
        self._text_extensions = frozenset(
            (e if e.startswith(".") else "." + e).lower() for e in exts if e and e != "."
        )
        self._user_spec = _compile(list(ignore or []))

    def to_dict(self) -> dict[str, Any]:
        """Serialise the init parameters."""
        return default_to_dict(
            self,
            max_file_bytes=self.max_file_bytes,
            ignore=self.ignore,
            text_extensions=self.text_extensions,
            max_notebook_bytes=self.max_notebook_bytes,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RepositoryWalker:
        """Rebuild a walker from ``to_dict`` output."""
        return default_from_dict(cls, data)

    def mime_type_for(self, name: str) -> str | None:
        """MIME type for a file name, or ``None`` when the walker does not index that kind of file."""
        suffix = os.path.splitext(name)[1].lower()
        mime = MIME_BY_SUFFIX.get(suffix)
        if mime is not None:
            return mime
        if suffix in self._text_extensions:
            return TEXT_MIME
        if name in TEXT_FILE_NAMES or name.startswith(TEXT_FILE_PREFIXES):
            return TEXT_MIME
        return None

    @component.output_types(files=list[ByteStream], report=dict[str, Any])
    def run(self, root: str, clean: list[str] | None = None) -> dict[str, Any]:
        """
        Walk ``root`` and return the files to index and a report of everything skipped.

        :param root: Path of the repository checkout (a directory).
        :param clean: sha256 digests of contents known to hold no key (``secret_scan``'s rules as
            they are now; the index run passes those of an index built under the same settings):
            such files are not scanned for keys again.
        :returns: ``files``: ``ByteStream`` list sorted by ``meta["file_path"]`` (POSIX, relative to
            ``root``), each with ``mime_type`` and ``meta["sha256"]``; ``report``: JSON-serialisable
            ``{"root", "seen", "indexed", "skipped": {reason: count}, "skipped_files": [[path, reason]],
            "pruned": {dir name: count}, "redacted": {path: lines}, "redacted_kinds": {kind: keys}}``.
        :raises ValueError: if ``root`` is not a directory.
        """
        root_path = Path(root).expanduser().resolve()
        if not root_path.is_dir():
            raise ValueError(f"repository root is not a directory: {root}")
        root_str = str(root_path)

        base: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        exclude = os.path.join(root_str, ".git", "info", "exclude")
        if os.path.isfile(exclude) and not os.path.islink(exclude):
            spec = _read_ignore_file(exclude)
            if spec is not None:
                base.append(("", spec))
        user_specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        if self._user_spec is not None:
            user_specs.append(("", self._user_spec))
        user_file = os.path.join(root_str, _USER_IGNORE_FILE)
        if os.path.isfile(user_file) and not os.path.islink(user_file):
            spec = _read_ignore_file(user_file)
            if spec is not None:
                user_specs.append(("", spec))
        user = tuple(user_specs)

        files: list[ByteStream] = []
        skipped_files: list[tuple[str, str]] = []
        pruned: Counter[str] = Counter()
        redacted: dict[str, tuple[int, dict[str, int]]] = {}  # path -> (lines, {kind: keys})
        known = frozenset(clean or ())
        seen = 0

        # Iterative depth-first walk; each item carries the gitignore specs of its ancestors.
        pending: list[tuple[str, str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]]] = [
            (root_str, "", tuple(base))
        ]
        while pending:
            abs_dir, rel_dir, inherited = pending.pop()
            try:
                with os.scandir(abs_dir) as it:
                    entries = list(it)
            except OSError as exc:
                logger.warning("cannot list directory %s: %s", abs_dir, exc)
                continue

            gitignore = next((e for e in entries if e.name == ".gitignore"), None)
            chain = inherited
            if gitignore is not None and gitignore.is_file(follow_symlinks=False):
                spec = _read_ignore_file(gitignore.path)
                if spec is not None:
                    chain = (*inherited, (rel_dir, spec))
            stack = chain + user

            for entry in entries:
                name = entry.name
                rel = rel_dir + name
                try:
                    is_link = entry.is_symlink()
                    is_dir = not is_link and entry.is_dir(follow_symlinks=False)
                    is_file = not is_link and not is_dir and entry.is_file(follow_symlinks=False)
                except OSError as exc:  # type unknown and lstat failed: gone or inaccessible
                    seen += 1
                    gone = isinstance(exc, FileNotFoundError)
                    skipped_files.append((rel, VANISHED if gone else UNREADABLE))
                    continue
                if is_dir:
                    if name in PRUNED_DIR_NAMES or _matches_any(name, PRUNED_DIR_GLOBS):
                        continue
                    if name in GENERATED_DIR_NAMES:
                        pruned[name] += 1
                        continue
                    if _is_ignored(rel + "/", stack):
                        continue
                    pending.append((entry.path, rel + "/", chain))
                    continue
                if not (is_link or is_file):
                    continue  # FIFO, socket, device: never opened, never counted

                seen += 1
                reason, stream = self._check_file(entry, name, rel, stack, is_link, (known, redacted))
                if stream is not None:
                    files.append(stream)
                else:
                    skipped_files.append((rel, reason))

        files.sort(key=lambda s: s.meta["file_path"])
        skipped_files.sort()
        counts = Counter(reason for _, reason in skipped_files)
        kinds: Counter[str] = Counter()
        for _, found in redacted.values():
            kinds.update(found)
        report = {
            "root": root_str,
            "seen": seen,
            "indexed": len(files),
            "skipped": dict(sorted(counts.items())),
            "skipped_files": [[path, reason] for path, reason in skipped_files],
            "pruned": dict(sorted(pruned.items())),
            "redacted": {path: redacted[path][0] for path in sorted(redacted)},
            "redacted_kinds": dict(sorted(kinds.items())),
        }
        return {"files": files, "report": report}

    def _check_file(
        self, entry: os.DirEntry, name: str, rel: str, stack: _SpecStack, is_link: bool, keys: _Keys
    ) -> tuple[str, ByteStream | None]:
        """Apply rules 2-7 to one file; return ``(reason, None)`` or ``("", stream)``. ``keys``:
        the digests known clean, and where rule 7 notes each redacted file's lines and kinds."""
        if _is_ignored(rel, stack):
            return IGNORED, None
        if is_secret_file(rel):  # after the ignore rules: no negation re-includes a secret
            return SECRET, None
        if _matches_any(name, LOCKFILE_GLOBS):
            return LOCKFILE, None
        if _matches_any(name, MINIFIED_GLOBS):
            return MINIFIED, None
        if is_link:
            return SYMLINK, None
        mime = self.mime_type_for(name)
        if mime is None:
            return UNSUPPORTED_TYPE, None

        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            return VANISHED, None
        except OSError:
            return UNREADABLE, None
        if stat.S_ISLNK(st.st_mode):
            return SYMLINK, None  # replaced by a symlink after listing
        cap = self.max_notebook_bytes if mime == "application/x-ipynb+json" else self.max_file_bytes
        if st.st_size > cap:
            return TOO_LARGE, None

        reason, data = self._read(entry.path, cap)
        if data is None:
            return reason, None
        if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
            return BINARY, None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return NOT_UTF8, None
        if not text.strip():
            return EMPTY, None
        if mime in _PARSED_MIMES and _looks_minified(text):
            return MINIFIED, None
        meta = {"file_path": rel, "sha256": hashlib.sha256(data).hexdigest()}  # of the file on disk
        found = None if meta["sha256"] in keys[0] else redact(text)
        if found is not None and found.lines:  # keys overwritten in place: what is chunked and stored
            data = found.text.encode("utf-8")
            keys[1][rel] = (found.lines, found.kinds)
        return "", ByteStream(data=data, meta=meta, mime_type=mime)

    def _read(self, path: str, cap: int) -> tuple[str, bytes | None]:
        """Read a regular file without following symlinks or blocking on FIFOs; cap at the size limit."""
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        flags |= getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            return VANISHED, None
        except OSError as exc:
            # O_NOFOLLOW on a symlink fails with ELOOP: the file was swapped for a link after listing.
            if os.path.islink(path):
                return SYMLINK, None
            logger.debug("cannot open %s: %s", path, exc)
            return UNREADABLE, None
        try:
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return UNREADABLE, None
                data = fh.read(cap + 1)
        except OSError as exc:
            logger.debug("cannot read %s: %s", path, exc)
            return UNREADABLE, None
        if len(data) > cap:
            return TOO_LARGE, None  # grew after stat
        return "", data
