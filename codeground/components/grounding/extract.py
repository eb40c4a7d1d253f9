"""Identifiers an answer names: the claims a grounding check verifies against the repository.

Rules:

- **Fenced code** (```` ``` ```` / ``~~~``, Python or untagged) is read as code. Reported: dotted names
  (``vllm.LLM``, ``trainer.fit``), called names (``load_model(``), keyword arguments (``name=`` inside
  a call), imported modules and names (``import x`` / ``from x import y``), attributes
  (``out[0].text`` → ``text``), and bare CamelCase / snake_case names (``SamplingParams``,
  ``MAX_LEN``, ``train_loader``). Plain lowercase bare names that are neither called nor keywords
  (``model``, ``x``) are not claims and are skipped.
- Names the snippet **binds itself** are the answer's own, not the library's: assignment targets,
  ``for`` / ``as`` / ``lambda`` / walrus targets, ``def`` and ``class`` names and ``def`` parameters.
  They are skipped, and a dotted name rooted at one is reported without that root
  (``llm = LLM(...)``; ``llm.generate(...)`` → ``generate``). ``self.`` / ``cls.`` are dropped the same
  way. An import alias is resolved (``import numpy as np``; ``np.array`` → ``numpy.array``). A
  limitation: hook methods the answer overrides (``def training_step``) are its own names too.
- Keyword arguments are the callee's parameter names, so they are reported even when they shadow a
  builtin (``input=``, ``type=``); keyword arguments of a call that is itself ignored
  (``dict(a=1)``, ``json.dumps(indent=2)``) or of the answer's own function are skipped.
- **Inline code** `` `…` `` is read as code, too: `` `Trainer(model, trust_remote_code=False)` `` yields
  ``Trainer`` and ``trust_remote_code``. A span that is a single (dotted) name, `` `fit` `` or
  `` `Trainer.fit()` ``, is reported whatever its case: the author marked it as code.
- **Prose** (and shell / data fences: ``bash``, ``console``, ``text``, ``json``, ``yaml``, …) counts only
  words that look like code: snake_case with an inner underscore, CamelCase with an inner capital
  (``LLMEngine``, ``SamplingParams``), dotted paths (``vllm.LLM``), calls written ``name(`` and
  ``name=value``. Plain English never counts (``The``, ``model``, ``Use``); neither do acronyms and
  their plurals (``GPU``, ``LLMs``), product names written in CamelCase (:data:`PROSE_NAMES`),
  ``e.g.``-style abbreviations, domain names, command-line flags (``--trust-remote-code``), numbers,
  URLs, e-mail addresses, file paths and citations (``pkg/trainer.py:33-35``, ``trainer.py``).
- Everywhere, names in :data:`ALLOWLIST` (Python keywords, builtins, ``self``/``cls``, common standard
  library modules and their usual members) are ignored, as is any dotted name rooted at one
  (``os.path.join``, ``pathlib.Path``, ``str.join``), names imported from a standard module, and
  dunders (``__init__``). Callers may pass more names to ignore (``allowlist=["torch"]``).
- A dotted name is reported as ONE identifier; the checker tests it whole and falls back to its
  last part. Other languages' member separators read as the dot: ``Vec::with_capacity`` and
  ``List#add`` are ``Vec.with_capacity`` and ``List.add``. The result is ordered by first
  appearance and has no duplicates.

Usage:
```python
from codeground.components.grounding.extract import extract_identifiers

extract_identifiers("Call `Trainer.fit(model, max_epochs=3)`; see pkg/trainer.py:33-35.")
# ['Trainer.fit', 'max_epochs']
```
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from codeground.components.identifiers import dotted, is_snake, looks_like_code
from codeground.components.markdown import blocks

# -- the allowlist -----------------------------------------------------------------------------------
#: Common standard-library modules: a dotted name rooted at one (``os.path.join``) is not a repository claim.
STDLIB_MODULES: frozenset[str] = frozenset(
    """
    __future__ abc argparse ast asyncio base64 bisect builtins calendar collections concurrent
    contextlib contextvars copy csv ctypes dataclasses datetime decimal difflib enum fnmatch fractions
    functools gc getpass glob gzip hashlib heapq hmac http importlib inspect io itertools json logging
    math multiprocessing os pathlib pickle platform pprint random re shlex shutil socket sqlite3
    statistics struct subprocess sys sysconfig tarfile tempfile textwrap threading time timeit tomllib
    traceback types typing typing_extensions unicodedata unittest urllib uuid warnings weakref zipfile
    zlib
    """.split()
)

#: Usual members of those modules, as answers write them without the module (``Path``, ``Optional``).
STDLIB_MEMBERS: frozenset[str] = frozenset(
    """
    Path PurePath PosixPath Any Optional Union List Dict Tuple Set FrozenSet Type Callable Iterable
    Iterator Generator AsyncIterator Sequence Mapping MutableMapping Literal TypeVar Generic Protocol
    ClassVar Final Annotated TypedDict NamedTuple Self cast overload TYPE_CHECKING dataclass asdict
    defaultdict Counter OrderedDict deque namedtuple ChainMap partial lru_cache cached_property wraps
    reduce chain islice groupby contextmanager asynccontextmanager suppress ABC abstractmethod Enum
    IntEnum auto timedelta ArgumentParser Namespace deepcopy pprint getLogger basicConfig Logger
    Thread Lock Queue TemporaryDirectory NamedTemporaryFile ThreadPoolExecutor ProcessPoolExecutor
    as_completed Decimal Fraction UUID uuid4 perf_counter SimpleNamespace add_argument parse_args
    """.split()
)

#: Everything an answer may name without the repository defining it.
ALLOWLIST: frozenset[str] = (
    frozenset(keyword.kwlist)
    | frozenset(name for name in dir(builtins) if not name.startswith("_"))
    | {"self", "cls", "_"}
    | STDLIB_MODULES
    | STDLIB_MEMBERS
)

#: Methods of ``str``/``list``/``dict``/files/loggers: skipped when only the method name is left
#: (``results.append`` with ``results`` bound in the snippet).
BUILTIN_METHODS: frozenset[str] = frozenset(
    """
    append extend insert remove pop clear copy count index reverse sort keys values items get update
    setdefault add discard union intersection difference split rsplit splitlines join strip lstrip
    rstrip replace lower upper title startswith endswith format encode decode find rfind read write
    readline readlines close flush seek info debug warning error exception critical
    """.split()
)

#: Product names written in CamelCase in prose; not identifiers.
PROSE_NAMES: frozenset[str] = frozenset(
    """
    PyTorch GitHub GitLab OpenAI HuggingFace JavaScript TypeScript PyPI NumPy SciPy TensorFlow FastAPI
    LangChain LlamaIndex DeepSpeed DeepMind macOS iOS YouTube LinkedIn PostgreSQL MySQL SQLite MongoDB
    GraphQL WebSocket OAuth JupyterLab IPython VSCode ChatGPT PyCharm CoreML ONNXRuntime WebGPU
    """.split()
)

# Fence languages read with the prose rules (commands, output, data) instead of as code.
_PROSE_FENCES = frozenset(
    """
    bash sh shell console zsh fish powershell ps1 bat cmd text txt plaintext output log json jsonc
    yaml yml toml ini cfg env dotenv markdown md rst
    """.split()
)
# File-name extensions; ones that are also common attribute names (``self.cfg``, ``torch.log``) are left out.
_FILE_EXTENSIONS = "py|pyi|pyx|ipynb|md|rst|txt|json|jsonl|ya?ml|toml|ini|sh|html|csv|cpp|cu"
_TLDS = frozenset({"com", "org", "net", "edu", "gov"})

# -- patterns ----------------------------------------------------------------------------------------
_INLINE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_URLS_AND_PATHS = re.compile(
    r"(?:https?|ftp|file)://\S+|www\.\S+"  # URLs
    r"|\S+@\S+\.\w+"  # e-mail addresses
    r"|\S*[/\\]\S*"  # paths, with or without a citation
)
# A file name, with or without a citation; never followed by "(" (``response.json()`` is a call).
_FILE_NAME = re.compile(rf"(?<![\w.])[\w.-]+\.(?:{_FILE_EXTENSIONS})\b(?::\d+(?:-\d+)?)?(?![(\w])")
_NAME = r"[^\W\d]\w*"
_PROSE_WORD = re.compile(rf"(?<![\w.\-])({_NAME}(?:\.{_NAME})*)(\((?!e?s\)))?(=(?![=\s]))?")
_SPAN_SINGLE = re.compile(rf"\s*({_NAME}(?:\.{_NAME})*)\s*(?:\(\s*\))?\s*")
_PROMPTS = re.compile(r"^([ \t]*)(?:>>>|\.\.\.)(?: |$)", re.M)
_STRINGS_COMMENTS = re.compile(
    r"(?<!\w)[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z)"
    r"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')"
    r"|(?P<comment>#[^\n]*)"
)
_CODE_TOKEN = re.compile(
    rf"(?P<name>{_NAME}(?:\.{_NAME})*)"
    r"|(?P<num>\d[\w.]*)"
    r"|(?P<str>\"\")"
    r"|(?P<op>\*\*=?|//=?|==|!=|<=|>=|:=|->|<<=?|>>=?|[-+*/%@&|^]=|[()\[\]{},:;.=<>+\-*/%@&|^~!])"
    r"|(?P<nl>\n)"
)
_KEYWORDS = frozenset(keyword.kwlist)
_OPENERS = {"(": ")", "[": "]", "{": "}"}


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _strip_non_identifiers(text: str) -> str:
    """Blank out URLs, e-mail addresses, paths, file names and citations."""
    return _FILE_NAME.sub(" ", _URLS_AND_PATHS.sub(" ", text))


@dataclass
class _Found:
    """Identifiers with the position of their first appearance."""

    items: list[tuple[int, str]] = field(default_factory=list)

    def add(self, pos: int, name: str | None) -> None:
        if name:
            self.items.append((pos, name))


# -- segments ----------------------------------------------------------------------------------------
def _segments(answer: str) -> list[tuple[str, str]]:
    """``(mode, text)`` pieces in order: ``code`` (fenced code), ``span`` (inline code) or ``prose``."""
    pieces: list[tuple[str, str]] = []
    for block in blocks(answer.splitlines(keepends=True)):
        if block.fence is None:
            pieces.extend(_inline_pieces("".join(block.lines)))
        else:
            mode = "prose" if block.fence.language in _PROSE_FENCES else "code"
            pieces.append((mode, "".join(block.body)))
    return pieces


def _inline_pieces(text: str) -> list[tuple[str, str]]:
    pieces: list[tuple[str, str]] = []
    last = 0
    for match in _INLINE.finditer(text):
        pieces.append(("prose", text[last : match.start()]))
        pieces.append(("span", match.group(2)))
        last = match.end()
    pieces.append(("prose", text[last:]))
    return [(mode, piece) for mode, piece in pieces if piece.strip()]


# -- prose -------------------------------------------------------------------------------------------
def _from_prose(text: str, ignored: frozenset[str], found: _Found, base: int) -> None:
    text = _strip_non_identifiers(text)
    for match in _PROSE_WORD.finditer(text):
        chain, called, kwarg = match.group(1), bool(match.group(2)), bool(match.group(3))
        parts = chain.split(".")
        if len(parts) > 1:
            if all(len(p) <= 2 for p in parts) or parts[-1].lower() in _TLDS:
                continue  # e.g., i.e., a.k.a, example.com
            if parts[0] in ("self", "cls"):
                parts = parts[1:]
            if parts[0] in ignored:
                continue
            name = ".".join(parts)
            if len(parts) == 1 and (_is_dunder(name) or name in BUILTIN_METHODS):
                continue
            found.add(base + match.start(), name)
            continue
        word = chain
        if len(word) < 2 or word in ignored or word in PROSE_NAMES or _is_dunder(word):
            continue
        if called or kwarg or looks_like_code(word):
            found.add(base + match.start(), word)


# -- code --------------------------------------------------------------------------------------------
@dataclass
class _Tok:
    kind: str
    value: str
    pos: int
    depth: int = 0


@dataclass
class _Scope:
    """What a snippet binds itself, and what its imports mean."""

    bound: set[str] = field(default_factory=set)
    aliases: dict[str, str] = field(default_factory=dict)
    ignored: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    skip: set[int] = field(default_factory=set)  # token indices already handled
    paren_kind: dict[int, str] = field(default_factory=dict)  # "(" index → "def" | "class"


def _clean_code(code: str) -> str:
    """Drop ``>>>`` prompts, string literals (kept as ``""``) and comments."""
    code = _PROMPTS.sub(r"\1", code)
    return _STRINGS_COMMENTS.sub(lambda m: "" if m.group("comment") else '""', code)


def _code_tokens(code: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    depth = 0
    for match in _CODE_TOKEN.finditer(code):
        kind = match.lastgroup or "op"
        value = match.group(0)
        if kind == "op" and value in ")]}":
            depth = max(0, depth - 1)
        if kind == "nl" and depth > 0:
            continue  # a statement continues inside brackets
        tokens.append(_Tok(kind, value, match.start(), depth))
        if kind == "op" and value in _OPENERS:
            depth += 1
    return tokens


def _statements(tokens: list[_Tok]) -> list[list[int]]:
    statements: list[list[int]] = [[]]
    for i, tok in enumerate(tokens):
        if tok.kind == "nl" or (tok.value == ";" and tok.depth == 0):
            statements.append([])
        else:
            statements[-1].append(i)
    return [s for s in statements if s]


def _split_top(indices: list[int], tokens: list[_Tok], sep: str) -> list[list[int]]:
    """Split token indices at separators on the statement's outer level."""
    if not indices:
        return []
    level = tokens[indices[0]].depth
    parts: list[list[int]] = [[]]
    for i in indices:
        if tokens[i].value == sep and tokens[i].kind == "op" and tokens[i].depth == level:
            parts.append([])
        else:
            parts[-1].append(i)
    return parts


def _bind_import(stmt: list[int], tokens: list[_Tok], scope: _Scope, found: _Found, ignored: frozenset[str]):
    scope.skip.update(stmt)
    values = [tokens[i].value for i in stmt]
    if values[0] == "import":
        for piece in _split_top(stmt[1:], tokens, ","):
            names = [i for i in piece if tokens[i].kind == "name"]
            if not names:
                continue
            module = tokens[names[0]].value
            alias = tokens[names[-1]].value if len(names) > 2 and tokens[names[1]].value == "as" else None
            if module.split(".")[0] in ignored:
                if alias:
                    scope.ignored.add(alias)
                continue
            found.add(tokens[names[0]].pos, module)
            if alias:
                scope.aliases[alias] = module
        return
    if "import" not in values:
        return
    cut = values.index("import")
    head = stmt[1:cut]
    relative = any(tokens[i].value == "." for i in head)
    module_toks = [i for i in head if tokens[i].kind == "name"]
    module = tokens[module_toks[0]].value if module_toks else ""
    from_stdlib = not relative and module.split(".")[0] in ignored
    if module and not relative and not from_stdlib:
        found.add(tokens[module_toks[0]].pos, module)
    rest = [i for i in stmt[cut + 1 :] if tokens[i].value not in "()"]
    for piece in _split_top(rest, tokens, ","):
        names = [i for i in piece if tokens[i].kind == "name"]
        if not names:
            continue
        name = tokens[names[0]].value
        alias = tokens[names[-1]].value if len(names) > 2 and tokens[names[1]].value == "as" else None
        if from_stdlib:
            scope.ignored.update(n for n in (name, alias) if n)
            continue
        found.add(tokens[names[0]].pos, name)
        scope.imported.add(name)
        if alias:
            scope.aliases[alias] = name


def _bind_targets(indices: list[int], tokens: list[_Tok], scope: _Scope) -> None:
    """Bind the plain names of an assignment / ``for`` target (``a, (b, c)``, ``x: int``)."""
    if not indices:
        return
    level = tokens[indices[0]].depth
    if tokens[indices[0]].value in _KEYWORDS:  # ``if ok: x = 1``: the target follows the last ":"
        colons = [k for k, i in enumerate(indices) if tokens[i].value == ":" and tokens[i].depth == level]
        indices = indices[colons[-1] + 1 :] if colons else []
    for k, i in enumerate(indices):
        tok = tokens[i]
        if tok.kind == "op" and tok.value == ":" and tok.depth == level:
            return  # an annotation follows
        if tok.kind != "name" or "." in tok.value:
            continue
        prev = tokens[indices[k - 1]].value if k else ""
        nxt = tokens[indices[k + 1]].value if k + 1 < len(indices) else ""
        if prev != "." and nxt not in (".", "(", "["):
            scope.bound.add(tok.value)


def _bind(tokens: list[_Tok], found: _Found, ignored: frozenset[str]) -> _Scope:
    scope = _Scope()
    for stmt in _statements(tokens):
        values = [tokens[i].value for i in stmt]
        if values[0] in ("import", "from"):
            _bind_import(stmt, tokens, scope, found, ignored)
            continue
        for k, i in enumerate(stmt):
            value = tokens[i].value
            nxt = stmt[k + 1] if k + 1 < len(stmt) else None
            if value in ("def", "class") and nxt is not None and tokens[nxt].kind == "name":
                scope.bound.add(tokens[nxt].value)
                scope.skip.add(nxt)
                paren = stmt[k + 2] if k + 2 < len(stmt) else None
                if paren is not None and tokens[paren].value == "(":
                    scope.paren_kind[paren] = value
                    if value == "def":
                        _bind_params(stmt[k + 3 :], tokens, tokens[paren].depth + 1, scope)
            elif value == "for":
                end = next((j for j in range(k + 1, len(stmt)) if tokens[stmt[j]].value == "in"), len(stmt))
                _bind_targets(stmt[k + 1 : end], tokens, scope)
            elif value == "as" and nxt is not None and tokens[nxt].kind == "name":
                scope.bound.add(tokens[nxt].value)
            elif value == "lambda":
                for j in stmt[k + 1 :]:
                    if tokens[j].value == ":":
                        break
                    if tokens[j].kind == "name":
                        scope.bound.add(tokens[j].value)
            elif value == ":=" and k > 0 and tokens[stmt[k - 1]].kind == "name":
                scope.bound.add(tokens[stmt[k - 1]].value)
        pieces = _split_top(stmt, tokens, "=")
        for target in pieces[:-1]:
            _bind_targets(target, tokens, scope)
    return scope


def _bind_params(rest: list[int], tokens: list[_Tok], depth: int, scope: _Scope) -> None:
    prev = "("
    for i in rest:
        tok = tokens[i]
        if tok.depth < depth:
            return  # the closing parenthesis
        if tok.depth == depth and tok.kind == "name" and prev in ("(", ",", "*", "**"):
            scope.bound.add(tok.value)
            scope.skip.add(i)
        if tok.depth == depth:
            prev = tok.value


def _resolve(
    parts: list[str], *, attribute: bool, scope: _Scope, ignored: frozenset[str], claim: bool
) -> str | None:
    """The identifier a (dotted) name stands for, or None when it is not a repository claim.

    ``claim``: a bare name counts whatever its shape (it is called, or it is a whole inline span).
    """
    if not attribute:
        root = parts[0]
        if root in ("self", "cls"):
            parts, attribute = parts[1:], True
        elif root in scope.aliases:
            parts = scope.aliases[root].split(".") + parts[1:]
        elif root in ignored or root in scope.ignored:
            return None
        elif root in scope.bound and root not in scope.imported:
            parts, attribute = parts[1:], True
    if not parts:
        return None
    if len(parts) > 1:
        return ".".join(parts)
    name = parts[0]
    if _is_dunder(name):
        return None
    if attribute:
        return None if name in BUILTIN_METHODS else name
    if len(name) < 2 or name in _KEYWORDS:
        return None
    if claim or name in scope.imported or name[0].isupper() or is_snake(name):
        return name
    return None


def _from_code(code: str, ignored: frozenset[str], found: _Found, base: int, *, span: bool = False) -> None:
    code = _clean_code(code)
    if span:
        single = _SPAN_SINGLE.fullmatch(code)
        if single and not _FILE_NAME.fullmatch(single.group(1)):
            parts = single.group(1).split(".")
            found.add(base, _resolve(parts, attribute=False, scope=_Scope(), ignored=ignored, claim=True))
            return
        code = _strip_non_identifiers(code)  # a command line in a span: `python pkg/run.py`
    tokens = _code_tokens(code)
    local = _Found()
    scope = _bind(tokens, local, ignored)
    stack: list[str] = []  # per open bracket: "kept" (a call whose kwargs count) or "other"
    last_call: tuple[int, str | None] = (-1, None)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.kind == "op" and tok.value in _OPENERS:
            kind = "other"
            if tok.value == "(" and i not in scope.paren_kind and last_call[0] == i - 1 and last_call[1]:
                kind = "kept"
            stack.append(kind)
            continue
        if tok.kind == "op" and tok.value in ")]}":
            if stack:
                stack.pop()
            continue
        if tok.kind != "name" or i in scope.skip:
            continue
        name: str | None = None
        at_kwarg = (
            nxt is not None
            and nxt.value == "="
            and prev is not None
            and prev.value in ("(", ",")
            and "." not in tok.value
            and tok.depth > 0
        )
        if at_kwarg and stack:
            if stack[-1] == "kept" and tok.value not in _KEYWORDS:
                name = tok.value
        elif not at_kwarg:
            attribute = prev is not None and prev.kind == "op" and prev.value == "."
            called = nxt is not None and nxt.value == "("
            name = _resolve(
                tok.value.split("."), attribute=attribute, scope=scope, ignored=ignored, claim=called
            )
        last_call = (i, name)
        found.add(base + tok.pos, name)
    for pos, name in local.items:
        found.add(base + pos, name)


# -- entry point -------------------------------------------------------------------------------------
def extract_identifiers(answer: str, *, allowlist: Iterable[str] = ()) -> list[str]:
    """The identifiers ``answer`` names, in order of first appearance, without duplicates.

    :param answer: the model's answer (Markdown).
    :param allowlist: names to ignore on top of :data:`ALLOWLIST` (a dotted name rooted at one, too).
    """
    if not answer or not answer.strip():
        return []
    ignored = ALLOWLIST | frozenset(allowlist)
    found = _Found()
    offset = 0
    for mode, text in _segments(dotted(answer)):
        base = offset
        offset += len(text) + 1  # positions only need to grow segment by segment
        if mode == "prose":
            _from_prose(text, ignored, found, base)
        elif mode == "span":
            _from_code(text, ignored, found, base, span=True)
        else:
            _from_code(text, ignored, found, base)
    seen: dict[str, None] = {}
    for _, name in sorted(found.items, key=lambda item: item[0]):
        seen.setdefault(name, None)
    return list(seen)
