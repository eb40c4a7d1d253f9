"""Ruby, PHP, C#, Kotlin, Scala, Swift, Elixir, Haskell, Lua, Zig, Bash, C and C++, as data.

One row per language, the fields of :class:`codeground.components.languages.Language` (which builds
them; see there for what each field means). Symbols are written as each language writes them:
Ruby ``Geometry::Circle#area`` (``Circle.unit`` for ``def self.unit`` and ``class << self``), PHP
``App\\Geometry\\Circle::area``, C# ``App.Geometry.Circle.Area``, Kotlin ``Circle.area`` and extension
functions ``Circle.diameter``, Scala ``Circle.area`` (``extension (c: Circle)`` members as
``Circle.diameter``), Swift ``Circle.area`` (``extension Circle`` members likewise), Elixir
``Geometry.Circle.area``, Haskell top-level bindings and ``HasArea.perimeter`` (instances by their type,
as Rust's ``impl``), Lua ``M.area`` / ``M.Circle:scale`` / ``square``, Zig ``Circle.area``, C ``func``,
C++ ``geometry::Circle::area``, Bash functions. Every grammar here is the official PyPI wheel, tested
with tree-sitter 0.26 (``pyproject.toml`` pins them).

Usage:
```python
from codeground.components.language_table import LANGUAGE_ROWS

ruby = next(row for row in LANGUAGE_ROWS if row["name"] == "ruby")
assert ".rb" in ruby["extensions"] and ruby["separators"]["method"] == "#"
```
"""

from __future__ import annotations

from typing import Any


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_C_DEFINITIONS = {
    "function_definition": "declarator_name",
    "struct_specifier": "name",
    "union_specifier": "name",
    "enum_specifier": "name",
    "type_definition": "declarator_name",
    "preproc_function_def": "name",
}
_C_TRANSPARENT = _words(
    "preproc_ifdef preproc_if preproc_else preproc_elif linkage_specification declaration_list"
)
_C_STDLIB = _words(
    """
    printf fprintf sprintf snprintf puts putchar getchar fopen fclose fread fwrite fgets fputs
    malloc calloc realloc free memcpy memmove memset memcmp strlen strcpy strncpy strcmp strncmp
    strcat strchr strrchr strstr strdup atoi atol strtol strtoul strtod exit abort assert errno
    size_t ssize_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t uintptr_t
    bool true false NULL FILE stdin stdout stderr EOF sizeof static const void int char long short
    unsigned signed float double struct union enum typedef extern inline restrict volatile
    """
)

LANGUAGE_ROWS: tuple[dict[str, Any], ...] = (
    {
        "name": "ruby",
        "extensions": (".rb", ".rake", ".gemspec"),
        "mime": "text/x-ruby",
        "grammar": "tree_sitter_ruby",
        "definitions": {"method": "name", "singleton_method": "name", "class": "name", "module": "name"},
        "containers": {"class": "body", "module": "body"},
        "transparent": _words("singleton_class body_statement"),
        "separators": {
            "method": "#",
            "singleton_method": ".",
            "singleton_class/method": ".",
            "class": "::",
            "module": "::",
        },
        "doc_line_prefix": "#",
        "test_globs": ("*_spec.rb", "*_test.rb", "test_*.rb", "spec/*", "*/spec/*"),
        "stdlib": _words(
            """
            puts print p pp require require_relative attr_reader attr_writer attr_accessor include
            extend prepend raise rescue ensure yield block_given? lambda proc new initialize self super
            nil true false Array Hash String Symbol Integer Float Kernel Object Class Module Comparable
            Enumerable Struct Set Time File Dir IO Math StandardError ArgumentError RuntimeError
            NotImplementedError each map select reject reduce inject each_with_object to_s to_a to_h
            to_sym freeze frozen? dup respond_to? send public_send define_method private protected public
            """
        ),
    },
    {
        "name": "php",
        "extensions": (".php",),
        "mime": "text/x-php",
        "grammar": "tree_sitter_php",
        "entry": "language_php",
        "definitions": {
            "function_definition": "name",
            "class_declaration": "name",
            "interface_declaration": "name",
            "trait_declaration": "name",
            "enum_declaration": "name",
            "method_declaration": "name",
            "namespace_definition": "name",
        },
        "containers": {
            "class_declaration": "body",
            "interface_declaration": "body",
            "trait_declaration": "body",
            "enum_declaration": "body",
            "namespace_definition": "body",
        },
        "quiet_containers": _words("namespace_definition"),
        "namespaces": _words("namespace_definition"),
        "separator": "::",
        "separators": {
            f"namespace_definition/{kind}": "\\"
            for kind in (
                "class_declaration",
                "interface_declaration",
                "trait_declaration",
                "enum_declaration",
                "function_definition",
                "namespace_definition",
            )
        },
        "imports": _words("php_tag namespace_use_declaration namespace_definition"),
        "test_globs": ("*Test.php", "tests/*.php", "*/tests/*.php"),
        "stdlib": _words(
            """
            echo print isset unset empty array count strlen str_replace sprintf printf implode explode
            array_map array_filter array_keys array_values array_merge in_array json_encode json_decode
            is_array is_string is_int is_null var_dump die exit self static parent this null true false
            string int float bool void mixed iterable callable object never Exception
            InvalidArgumentException RuntimeException LogicException Throwable Closure Countable
            ArrayAccess IteratorAggregate Traversable Stringable __construct __toString __get __set
            """
        ),
    },
    {
        "name": "csharp",
        "extensions": (".cs",),
        "mime": "text/x-csharp",
        "grammar": "tree_sitter_c_sharp",
        "definitions": {
            "class_declaration": "name",
            "struct_declaration": "name",
            "interface_declaration": "name",
            "enum_declaration": "name",
            "record_declaration": "name",
            "method_declaration": "name",
            "constructor_declaration": "name",
            "destructor_declaration": "name",
            "property_declaration": "name",
            "delegate_declaration": "name",
            "namespace_declaration": "name",
        },
        "containers": {
            "class_declaration": "body",
            "struct_declaration": "body",
            "interface_declaration": "body",
            "record_declaration": "body",
            "namespace_declaration": "body",
        },
        "quiet_containers": _words("namespace_declaration"),
        "namespaces": _words("file_scoped_namespace_declaration"),
        "documented": _words("field_declaration event_field_declaration"),
        "imports": _words("using_directive file_scoped_namespace_declaration"),
        "doc_line_prefix": "///",
        "test_globs": ("*Tests.cs", "*Test.cs", "*.Tests/*", "*/*.Tests/*"),
        "stdlib": _words(
            """
            System Console WriteLine Write ReadLine String Object Int32 Int64 Double Boolean Math Task
            List Dictionary HashSet IEnumerable IList IDictionary ICollection Enumerable Linq Select
            Where First FirstOrDefault Any All ToList ToArray Count Exception ArgumentException
            ArgumentNullException InvalidOperationException NotImplementedException Nullable var
            async await void int long double float bool string object decimal char byte null true false
            this base new get set value Func Action Span DateTime TimeSpan Guid StringBuilder
            """
        ),
    },
    {
        "name": "kotlin",
        "extensions": (".kt", ".kts"),
        "mime": "text/x-kotlin",
        "grammar": "tree_sitter_kotlin",
        "definitions": {
            "class_declaration": "name",
            "object_declaration": "name",
            "function_declaration": "receiver",
            "type_alias": "name",
        },
        "containers": {"class_declaration": "", "object_declaration": ""},
        "bodies": _words("class_body enum_class_body function_body"),
        "transparent": _words("companion_object class_body"),
        "documented": _words("property_declaration"),
        "imports": _words("package_header import import_list import_header"),
        "comment_kinds": _words("line_comment block_comment"),
        "test_globs": ("*Test.kt", "*Tests.kt", "src/test/*", "*/src/test/*", "*/src/androidTest/*"),
        "stdlib": _words(
            """
            println print listOf mutableListOf mapOf mutableMapOf setOf mutableSetOf arrayOf emptyList
            lazy require check error TODO let also apply run with takeIf repeat String Int Long Double
            Float Boolean Char Unit Any Nothing List MutableList Map MutableMap Set Array Pair Triple
            Sequence Result Exception IllegalArgumentException IllegalStateException Throwable null
            true false this super it map filter forEach first firstOrNull size isEmpty toString
            """
        ),
    },
    {
        "name": "scala",
        "extensions": (".scala", ".sc"),
        "mime": "text/x-scala",
        "grammar": "tree_sitter_scala",
        "definitions": {
            "class_definition": "name",
            "object_definition": "name",
            "trait_definition": "name",
            "enum_definition": "name",
            "function_definition": "name",
            "function_declaration": "name",
            "given_definition": "name",
            "type_definition": "name",
            "extension_definition": "extension",
        },
        "containers": {
            "class_definition": "body",
            "object_definition": "body",
            "trait_definition": "body",
            "enum_definition": "body",
            "extension_definition": "body",
        },
        "documented": _words("val_definition var_definition val_declaration"),
        "imports": _words("package_clause import_declaration"),
        "comment_kinds": _words("comment block_comment"),
        "test_globs": ("*Spec.scala", "*Test.scala", "*Suite.scala", "src/test/*", "*/src/test/*"),
        "stdlib": _words(
            """
            println print Some None Option List Seq Vector Map Set Array String Int Long Double Boolean
            Unit Any AnyRef Nothing Future Either Left Right Try Success Failure apply unapply map
            flatMap filter foreach fold foldLeft getOrElse toString this super null true false
            """
        ),
    },
    {
        "name": "swift",
        "extensions": (".swift",),
        "mime": "text/x-swift",
        "grammar": "tree_sitter_swift",
        "definitions": {
            "class_declaration": "name",
            "protocol_declaration": "name",
            "function_declaration": "name",
            "protocol_function_declaration": "name",
            "init_declaration": "keyword_name",
            "deinit_declaration": "keyword_name",
            "subscript_declaration": "keyword_name",
            "typealias_declaration": "name",
        },
        "containers": {"class_declaration": "body", "protocol_declaration": "body"},
        "documented": _words("property_declaration"),
        "imports": _words("import_declaration"),
        "comment_kinds": _words("comment multiline_comment"),
        "doc_line_prefix": "///",
        "test_globs": ("*Tests.swift", "*Test.swift", "Tests/*", "*/Tests/*"),
        "stdlib": _words(
            """
            print String Int Double Float Bool Character Array Dictionary Set Optional Result Error
            Never Void Any AnyObject Self self super nil true false init deinit map filter reduce
            forEach compactMap count isEmpty append first last contains Codable Equatable Hashable
            Comparable Identifiable CustomStringConvertible Foundation UIKit SwiftUI View
            """
        ),
    },
    {
        "name": "elixir",
        "extensions": (".ex", ".exs"),
        "mime": "text/x-elixir",
        "grammar": "tree_sitter_elixir",
        "definitions": {"call": "elixir"},
        "containers": {"call": ""},
        "bodies": _words("do_block"),
        "leading": _words("unary_operator"),
        "doc_attributes": (b"@doc",),
        "test_globs": ("*_test.exs", "test/*.exs", "*/test/*.exs"),
        "stdlib": _words(
            """
            Enum Map List String Keyword Kernel Agent GenServer Supervisor Task Process IO File Path
            Logger Application Integer Float Atom Tuple Stream Access Code Module ExUnit nil true false
            is_nil is_atom is_binary is_integer is_list is_map raise throw spawn send receive inspect
            """
        ),
    },
    {
        "name": "haskell",
        "extensions": (".hs",),
        "mime": "text/x-haskell",
        "grammar": "tree_sitter_haskell",
        "definitions": {
            "function": "name",
            "bind": "name",
            "data_type": "name",
            "newtype": "name",
            "type_synonym": "name",
            "type_family": "name",
            "class": "name",
            "instance": "instance",
        },
        "containers": {"class": "declarations", "instance": "declarations"},
        "quiet_containers": _words("instance"),
        "transparent": _words("declarations imports"),
        "leading": _words("signature"),
        "merge_runs": _words("function bind"),
        "imports": _words("import header pragma"),
        "comment_kinds": _words("comment haddock"),
        "doc_block_prefix": "{-|",
        "doc_line_prefix": "-- |",
        "test_globs": ("*Spec.hs", "*Test.hs", "test/*.hs", "*/test/*.hs"),
        "stdlib": _words(
            """
            map filter foldr foldl sum product length null head tail reverse concat concatMap zip
            unzip lookup elem maybe either fst snd show read print putStrLn return pure fmap mapM mapM_
            Maybe Just Nothing Either Left Right IO Int Integer Double Float Bool True False Char String
            Show Eq Ord Functor Applicative Monad Monoid Semigroup otherwise undefined error id const
            """
        ),
    },
    {
        "name": "lua",
        "extensions": (".lua",),
        "mime": "text/x-lua",
        "grammar": "tree_sitter_lua",
        "definitions": {"function_declaration": "name", "assignment_statement": "function_value"},
        "doc_line_prefix": "--",
        "test_globs": ("*_spec.lua", "*_test.lua", "spec/*", "*/spec/*"),
        "stdlib": _words(
            """
            print require pairs ipairs type tostring tonumber error assert pcall xpcall select unpack
            setmetatable getmetatable rawget rawset next table string math os io coroutine debug insert
            remove concat format sub gsub match gmatch find len upper lower floor ceil max min self nil
            true false vim
            """
        ),
    },
    {
        "name": "zig",
        "extensions": (".zig",),
        "mime": "text/x-zig",
        "grammar": "tree_sitter_zig",
        "definitions": {"function_declaration": "name", "variable_declaration": "zig_container"},
        "containers": {"variable_declaration": ""},
        "bodies": _words("struct_declaration enum_declaration union_declaration opaque_declaration"),
        "documented": _words("variable_declaration"),
        "doc_line_prefix": "///",
        "test_globs": ("*_test.zig", "test/*.zig", "*/test/*.zig"),
        "stdlib": _words(
            """
            std mem fmt debug testing heap math fs io os Allocator ArrayList HashMap StringHashMap
            print expect expectEqual self Self void bool u8 u16 u32 u64 usize i8 i16 i32 i64 isize f32
            f64 comptime anytype type null undefined true false try catch defer errdefer
            """
        ),
    },
    {
        "name": "bash",
        "extensions": (".sh", ".bash"),
        "mime": "text/x-shellscript",
        "grammar": "tree_sitter_bash",
        "definitions": {"function_definition": "name"},
        "doc_line_prefix": "#",
        "test_globs": ("*.bats", "test_*.sh", "*_test.sh"),
        "stdlib": _words(
            """
            echo printf read cd pwd ls cat grep sed awk find xargs test set unset export local return
            exit source shift trap eval exec mkdir rm cp mv chmod chown touch head tail sort uniq wc tr
            cut tee sleep kill wait true false if then else fi for do done while case esac function
            """
        ),
    },
    {
        "name": "c",
        "extensions": (".c", ".h"),
        "mime": "text/x-c",
        "grammar": "tree_sitter_c",
        "definitions": _C_DEFINITIONS,
        "documented": _words("declaration preproc_def"),
        "transparent": _C_TRANSPARENT,
        "imports": _words("preproc_include"),
        "doc_line_prefix": "///",
        "fallback": "cpp",  # a `.h` of C++ (classes, namespaces): parsed as C++ instead
        "test_globs": ("test_*.c", "*_test.c", "tests/*.c", "*/tests/*.c", "test/*.c", "*/test/*.c"),
        "stdlib": _C_STDLIB,
    },
    {
        "name": "cpp",
        "extensions": (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"),
        "mime": "text/x-c++",
        "grammar": "tree_sitter_cpp",
        "definitions": {
            **_C_DEFINITIONS,
            "class_specifier": "name",
            "namespace_definition": "name",
            "alias_declaration": "name",
            "concept_definition": "name",
        },
        "containers": {
            "class_specifier": "body",
            "struct_specifier": "body",
            "union_specifier": "body",
            "namespace_definition": "body",
        },
        "quiet_containers": _words("namespace_definition"),
        "documented": _words("declaration field_declaration preproc_def"),
        "transparent": _C_TRANSPARENT,
        "wrappers": {"template_declaration": ("",)},
        "imports": _words("preproc_include using_declaration"),
        "separator": "::",
        "doc_line_prefix": "///",
        "test_globs": ("*_test.cc", "*_test.cpp", "*_unittest.cc", "test_*.cpp", "test_*.cc", "tests/*.cpp"),
        "stdlib": _C_STDLIB
        | _words(
            """
            std vector string map unordered_map set unordered_set pair tuple optional variant array
            unique_ptr shared_ptr weak_ptr make_unique make_shared move forward cout cerr endl size_t
            begin end size empty push_back emplace_back insert erase find count sort max_element
            min_element accumulate function thread mutex lock_guard auto nullptr template typename
            class namespace public private protected virtual override const_cast static_cast
            """
        ),
    },
)
