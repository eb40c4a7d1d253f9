"""The languages codeground parses with tree-sitter, as data: one entry per language, one chunker.

Each :class:`Language` says which file suffixes it has (the walker routes by them), which grammar
parses it (the official per-language PyPI wheels, compiled, offline), which syntax nodes are
definitions and which hold members (``Class.method``), how a doc comment is written, which paths
are its tests (the fusion's layout priors) and the standard-library names an answer may use without
the repository defining them (the grounding check's allowlist).

Definition node kinds map to a naming rule of :mod:`codeground.components.chunkers.syntax_names`
(``"name"``: the node's ``name`` field, ``"go_method"``, ``"impl"``, ``"declarator_name"``, …). The six
first languages are declared here; Ruby, PHP, C#, Kotlin, Scala, Swift, Elixir, Haskell, Lua, Zig,
Bash, C and C++ are rows of :mod:`codeground.components.language_table`.

Usage:
```python
from codeground.components.languages import language_for

lang = language_for("src/server.go")
assert lang.name == "go" and lang.mime == "text/x-go" and lang.is_test("pkg/server_test.go")
```
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from fnmatch import fnmatch
from functools import cache
from pathlib import PurePosixPath

from codeground.components.language_table import LANGUAGE_ROWS

# Function-like values that make ``const name = …`` a definition (TS/JS arrow functions and friends).
JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "class"}
)


@dataclass(frozen=True, eq=False)  # one object per language: compared and hashed by identity
class Language:
    """One language's parsing and layout rules (see the module docstring)."""

    name: str
    extensions: tuple[str, ...]
    mime: str
    grammar: str  # the PyPI grammar module
    entry: str = "language"  # its function returning the compiled language
    entries_by_suffix: tuple[tuple[str, str], ...] = ()  # e.g. (".tsx", "language_tsx")
    definitions: dict[str, str] = field(default_factory=dict)
    # node kind -> field holding its members (``Class.member``); "" when the body is a child of a
    # `bodies` kind
    containers: dict[str, str] = field(default_factory=dict)
    # containers whose own record is only written when it holds more than its header line
    quiet_containers: frozenset[str] = frozenset()
    # declarations (variables, constants, fields) that are definitions when a doc comment is on them:
    # documented, they are API; undocumented, module or class text
    documented: frozenset[str] = frozenset()
    # node kinds looked through: their children are members of the enclosing scope
    transparent: frozenset[str] = frozenset()
    # wrappers such as ``export …``: the definition is the wrapped node, the span the wrapper's
    wrappers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # top-level kinds that are never a module record on their own (imports, package lines)
    imports: frozenset[str] = frozenset()
    # node kinds attached to the definition below them (decorators, attributes)
    leading: frozenset[str] = frozenset()
    comment_kinds: frozenset[str] = frozenset({"comment"})
    # a doc comment: a block starting with "/**" directly above, or a run of line comments
    doc_block_prefix: str = "/**"
    doc_line_prefix: str | tuple[str, ...] | None = None
    # leading attributes that are doc comments (Elixir's `@doc`), by how their text starts
    doc_attributes: tuple[bytes, ...] = ()
    # how a member's symbol is joined to its container's: `separator`, unless `separators` has
    # "<ancestor or container kind>/<member kind>" or "<member kind>" (Ruby: `Circle#area`)
    separator: str = "."
    separators: dict[str, str] = field(default_factory=dict)
    # body node kinds found among a container's children when its `containers` field is ""
    bodies: frozenset[str] = frozenset()
    # kinds that, written without a body (`namespace App\Geometry;`), qualify the definitions after them
    namespaces: frozenset[str] = frozenset()
    # definition kinds whose directly consecutive same-name definitions are one (Haskell equations)
    merge_runs: frozenset[str] = frozenset()
    test_globs: tuple[str, ...] = ()
    stdlib: frozenset[str] = frozenset()
    # syntax the grammar wheel does not know yet, blanked (same length) before parsing: group 1 of
    # each pattern becomes spaces, so every offset still points into the original text
    masks: tuple[str, ...] = ()
    # the language a file is parsed as when this one's grammar reports an error (C's `.h` → C++)
    fallback: str | None = None

    def entry_for(self, file_path: str) -> str:
        suffix = PurePosixPath(file_path).suffix.lower()
        return dict(self.entries_by_suffix).get(suffix, self.entry)

    def is_test(self, file_path: str) -> bool:
        return any(fnmatch(file_path, g) for g in self.test_globs)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_JS_DEFINITIONS = {
    "function_declaration": "name",
    "generator_function_declaration": "name",
    "class_declaration": "name",
    "class": "name",
    "function_expression": "name",  # export default function () {}
    "arrow_function": "name",  # export default () => {}
    "method_definition": "name",
    "lexical_declaration": "declarator",
    "variable_declaration": "declarator",
}
_TS_DEFINITIONS = {
    **_JS_DEFINITIONS,
    "abstract_class_declaration": "name",
    "function_signature": "name",
    "method_signature": "name",
    "abstract_method_signature": "name",
    "interface_declaration": "name",
    "type_alias_declaration": "name",
    "enum_declaration": "name",
    "internal_module": "name",
    "module": "name",
}
_JS_STDLIB = _words(
    """
    console window document globalThis process require module exports Promise Array Object JSON Math
    Map Set WeakMap WeakSet Date Error TypeError RangeError SyntaxError String Number Boolean BigInt
    Symbol RegExp Reflect Proxy Intl Buffer URL URLSearchParams fetch setTimeout clearTimeout
    setInterval clearInterval queueMicrotask structuredClone parseInt parseFloat isNaN isFinite
    undefined null NaN Infinity this super arguments async await then catch finally resolve reject
    length push pop shift unshift slice splice map filter reduce forEach find findIndex includes
    indexOf join split concat keys values entries assign freeze create defineProperty hasOwnProperty
    toString valueOf stringify parse log warn error info debug trim replace toLowerCase toUpperCase
    startsWith endsWith padStart match test exec apply call bind prototype constructor Partial
    Required Readonly Record Pick Omit Exclude Extract NonNullable ReturnType Parameters InstanceType
    Awaited Iterable AsyncIterable Iterator PromiseLike ArrayLike unknown never any void string number
    boolean object symbol bigint keyof typeof instanceof readonly
    """
)
_JS_TESTS = (
    "*.test.js",
    "*.test.jsx",
    "*.spec.js",
    "*.spec.jsx",
    "*.test.mjs",
    "*.spec.mjs",
    "*/__tests__/*",
)
_TS_TESTS = ("*.test.ts", "*.test.tsx", "*.spec.ts", "*.spec.tsx", "__tests__/*", "*/__tests__/*")

LANGUAGES: tuple[Language, ...] = (
    Language(
        name="javascript",
        extensions=(".js", ".jsx", ".mjs", ".cjs"),
        mime="text/javascript",
        grammar="tree_sitter_javascript",
        definitions=_JS_DEFINITIONS,
        containers={"class_declaration": "body", "class": "body"},
        documented=_words("lexical_declaration variable_declaration field_definition"),
        wrappers={"export_statement": ("declaration", "value")},
        imports=_words("import_statement"),
        leading=_words("decorator"),
        test_globs=_JS_TESTS,
        stdlib=_JS_STDLIB,
    ),
    Language(
        name="typescript",
        extensions=(".ts", ".tsx", ".mts", ".cts"),
        mime="text/x-typescript",
        grammar="tree_sitter_typescript",
        entry="language_typescript",
        entries_by_suffix=((".tsx", "language_tsx"),),
        definitions=_TS_DEFINITIONS,
        containers={
            "class_declaration": "body",
            "abstract_class_declaration": "body",
            "class": "body",
            "internal_module": "body",
            "module": "body",
        },
        quiet_containers=_words("internal_module module"),
        documented=_words("lexical_declaration variable_declaration public_field_definition"),
        transparent=_words("expression_statement"),
        wrappers={"export_statement": ("declaration", "value"), "ambient_declaration": ("",)},
        imports=_words("import_statement import_alias"),
        leading=_words("decorator"),
        test_globs=_TS_TESTS,
        stdlib=_JS_STDLIB,
        # TS 4.7 variance annotations (`interface Box<out T>`) are not in tree-sitter-typescript 0.23.2
        masks=(r"[<,](?:\s|/\*(?:[^*]|\*(?!/))*\*/|//[^\n]*\n)*((?:in\s+)?out\s+|in\s+)(?=[A-Za-z_$])",),
    ),
    Language(
        name="go",
        extensions=(".go",),
        mime="text/x-go",
        grammar="tree_sitter_go",
        definitions={
            "function_declaration": "name",
            "method_declaration": "go_method",
            "type_declaration": "type_spec",
            "type_spec": "name",
        },
        transparent=_words("type_declaration"),
        documented=_words("var_declaration const_declaration"),
        imports=_words("package_clause import_declaration"),
        doc_line_prefix="//",
        test_globs=("*_test.go", "testdata/*", "*/testdata/*"),
        stdlib=_words(
            """
            fmt http os io ioutil strings strconv errors context time sync atomic bytes bufio sort
            filepath path json xml csv log slog regexp reflect runtime unicode utf8 math rand big
            exec signal syscall net url template flag testing embed hash sha256 md5 base64 hex
            binary gzip zip tar heap list ring slices maps cmp iter unsafe builtin
            error string int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr byte rune
            float32 float64 complex64 complex128 bool any comparable nil true false iota
            append cap clear close complex copy delete imag len make max min new panic print println
            real recover
            Println Printf Sprintf Errorf Fprintf Fprintln Sprint Sprintln Print Fprint HandleFunc
            Handle ListenAndServe NewServeMux ResponseWriter Request Context Background TODO
            WithCancel WithTimeout WithValue Duration Now Since Sleep Mutex RWMutex WaitGroup Once
            Builder Reader Writer ReadAll Open Create Exit Getenv Args Stdout Stderr Stdin New Is As
            Unwrap Join Split Contains HasPrefix HasSuffix TrimSpace Itoa Atoi Marshal Unmarshal
            """
        ),
    ),
    Language(
        name="rust",
        extensions=(".rs",),
        mime="text/x-rust",
        grammar="tree_sitter_rust",
        definitions={
            "function_item": "name",
            "function_signature_item": "name",
            "struct_item": "name",
            "enum_item": "name",
            "union_item": "name",
            "trait_item": "name",
            "type_item": "name",
            "macro_definition": "name",
            "mod_item": "name",
            "impl_item": "impl",
            "const_item": "name",
            "static_item": "name",
        },
        containers={"impl_item": "body", "trait_item": "body", "mod_item": "body"},
        quiet_containers=_words("impl_item mod_item"),
        imports=_words("use_declaration extern_crate_declaration"),
        leading=_words("attribute_item"),
        comment_kinds=_words("line_comment block_comment"),
        doc_line_prefix="///",
        test_globs=("tests/*", "benches/*", "*/benches/*"),
        stdlib=_words(
            """
            std core alloc self Self super crate Vec String Option Result Box Rc Arc RefCell Cell Mutex
            RwLock HashMap HashSet BTreeMap BTreeSet VecDeque BinaryHeap Cow Some None Ok Err Default
            Clone Copy Debug Display Eq PartialEq Ord PartialOrd Hash Iterator IntoIterator From Into
            TryFrom TryInto AsRef AsMut Deref DerefMut Drop Fn FnMut FnOnce Send Sync Sized Unpin
            PhantomData Ordering Duration Instant Path PathBuf File Error fmt io mem ptr sync thread
            collections iter cmp ops env fs path str char slice usize isize u8 u16 u32 u64 u128 i8 i16
            i32 i64 i128 f32 f64 bool println print eprintln format write writeln vec panic assert
            assert_eq assert_ne debug_assert unreachable unimplemented todo matches dbg new len push
            pop insert remove get get_mut iter iter_mut into_iter map filter collect unwrap expect
            unwrap_or unwrap_or_else unwrap_or_default ok_or is_some is_none is_ok is_err as_ref as_str
            to_string to_owned clone with_capacity capacity extend contains join split trim
            """
        ),
    ),
    Language(
        name="java",
        extensions=(".java",),
        mime="text/x-java",
        grammar="tree_sitter_java",
        definitions={
            "class_declaration": "name",
            "interface_declaration": "name",
            "enum_declaration": "name",
            "record_declaration": "name",
            "annotation_type_declaration": "name",
            "method_declaration": "name",
            "constructor_declaration": "name",
            "compact_constructor_declaration": "name",
            "annotation_type_element_declaration": "name",
        },
        containers={
            "class_declaration": "body",
            "interface_declaration": "body",
            "enum_declaration": "body",
            "record_declaration": "body",
            "annotation_type_declaration": "body",
        },
        transparent=_words("enum_body_declarations"),
        documented=_words("field_declaration constant_declaration"),
        imports=_words("package_declaration import_declaration"),
        comment_kinds=_words("line_comment block_comment"),
        test_globs=("src/test/*", "*/src/test/*", "*Test.java", "*Tests.java"),
        stdlib=_words(
            """
            java javax System String Object Integer Long Double Float Boolean Character Byte Short Math
            StringBuilder List ArrayList LinkedList Map HashMap LinkedHashMap TreeMap Set HashSet
            TreeSet Collection Collections Arrays Iterator Iterable Optional Stream Collectors
            Objects Exception RuntimeException IllegalArgumentException IllegalStateException
            NullPointerException IOException UnsupportedOperationException Throwable Error Thread
            Runnable Callable Override Deprecated SuppressWarnings FunctionalInterface Class Enum
            Record Comparable Comparator CharSequence Number Void out println print printf format
            length size get put add remove contains isEmpty equals hashCode toString valueOf of
            stream map filter collect forEach iterator next hasNext append charAt substring
            this super null true false void int long double float boolean char byte short new
            """
        ),
    ),
)

LANGUAGES += tuple(Language(**row) for row in LANGUAGE_ROWS)  # Ruby … C++ (language_table)
_BY_NAME: dict[str, Language] = {lang.name: lang for lang in LANGUAGES}
_BY_SUFFIX: dict[str, Language] = {ext: lang for lang in LANGUAGES for ext in lang.extensions}
MIME_BY_SUFFIX: dict[str, str] = {ext: lang.mime for ext, lang in _BY_SUFFIX.items()}
SOURCE_MIMES: tuple[str, ...] = tuple(dict.fromkeys(lang.mime for lang in LANGUAGES))


def language_for(file_path: str) -> Language | None:
    """The language of a file by its suffix, or ``None`` when tree-sitter does not parse it here."""
    return _BY_SUFFIX.get(PurePosixPath(file_path).suffix.lower())


def language_named(name: str) -> Language:
    """The language called ``name`` (``"cpp"``), as :attr:`Language.fallback` names one."""
    return _BY_NAME[name]


@cache
def grammar(module: str, entry: str):
    """The compiled tree-sitter ``Language`` of a grammar wheel (loaded once per process)."""
    from tree_sitter import Language as TSLanguage

    return TSLanguage(getattr(importlib.import_module(module), entry)())


def masked(lang: Language, data: bytes) -> bytes:
    """``data`` with the language's :attr:`Language.masks` blanked out (same length)."""
    for pattern in lang.masks:
        data = _mask_re(pattern).sub(_blank_group, data)
    return data


def _blank_group(match: re.Match[bytes]) -> bytes:
    cut = match.start(1) - match.start(0)
    return match.group(0)[:cut] + b" " * len(match.group(1))


@cache
def _mask_re(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode())


def all_test_globs() -> tuple[str, ...]:
    """Every language's test-path globs (for the fusion's layout priors)."""
    return tuple(dict.fromkeys(g for lang in LANGUAGES for g in lang.test_globs))


def stdlib_names() -> frozenset[str]:
    """Every language's standard-library names (for the grounding check's allowlist)."""
    return frozenset().union(*(lang.stdlib for lang in LANGUAGES))
