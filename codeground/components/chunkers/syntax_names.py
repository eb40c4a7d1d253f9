"""How a definition's name is read off its tree-sitter node: one naming rule per entry of :data:`NAMERS`.

A language's ``definitions`` (:mod:`codeground.components.languages`) map a node kind to one of these
rule names; the rule returns the name as the language writes it, or ``None`` when the node is not a
definition after all (a ``const x = 1`` is not a function). The rules:

- ``name``: the node's ``name`` field (``default`` when it has none: ``export default function () {}``).
- ``keyword_name``: the kind's own keyword (Swift's ``init_declaration`` → ``init``).
- ``go_method``: ``Type.Method`` from a Go method's receiver.
- ``impl``: the implemented type of a Rust ``impl`` block (``impl Display for Point<T>`` → ``Point``).
- ``instance``: the type of a Haskell ``instance`` (``instance HasArea Shape`` → ``Shape``), as Rust's.
- ``type_spec``: a Go ``type X …`` declared alone (a grouped ``type ( … )`` is looked through).
- ``declarator``: ``const f = () => …`` in JS/TS, when the value is a function or class.
- ``declarator_name``: C/C++, the name inside the declarator (``*circle_scale(…)`` → ``circle_scale``,
  ``Circle::area() const`` → ``Circle::area``, ``typedef struct {…} circle_t`` → ``circle_t``).
- ``receiver``: a Kotlin function, with the receiver of an extension (``fun Circle.diameter()`` →
  ``Circle.diameter``).
- ``extension``: a Scala 3 ``extension (c: Circle)`` block, named by the type it extends.
- ``elixir``: a ``defmodule``/``def``/``defp``/``defmacro``/``defprotocol``/``defimpl``/… call, named
  by its first argument (``def scale(c, by) when …`` → ``scale``, ``defmodule Geometry.Circle`` →
  ``Geometry.Circle``; ``defimpl HasArea, for: Circle`` → ``HasArea.Circle``, the module Elixir
  makes); any other call is not a definition.
- ``function_value``: a Lua ``M.unit = function () … end``: the assigned name, when the value is a
  function.
- ``zig_container``: a Zig ``const Circle = struct { … }`` (``enum``, ``union``, ``opaque``): the
  declared name, when the value is a container type.

Usage:
```python
import tree_sitter_c
from tree_sitter import Language, Parser
from codeground.components.chunkers.syntax_names import NAMERS

tree = Parser(Language(tree_sitter_c.language())).parse(b"static int *scale(int *c) { return c; }")
assert NAMERS["declarator_name"](tree.root_node.named_children[0]) == "scale"
```
"""

from __future__ import annotations

from collections.abc import Callable

from codeground.components.languages import JS_FUNCTION_VALUES

# Elixir macros that define something: the module-like ones hold members (the language's containers)
ELIXIR_DEFINERS = frozenset(
    """
    defmodule defprotocol defimpl def defp defmacro defmacrop defguard defguardp defdelegate defn defnp
    """.split()
)
ZIG_CONTAINERS = frozenset(
    {"struct_declaration", "enum_declaration", "union_declaration", "opaque_declaration"}
)
# what a C/C++ declarator's name can be once the declarator wrappers are peeled off
_C_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "operator_name",
        "destructor_name",
        "namespace_identifier",
    }
)


def text_of(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def field_text(node, field: str = "name") -> str | None:
    named = node.child_by_field_name(field)
    return text_of(named) if named is not None else None


def type_name(node) -> str | None:
    """The base name of a type node: ``*Server`` → ``Server``, ``Point<T>`` → ``Point``, ``a::B`` → ``B``."""
    if node is None:
        return None
    if node.type in ("type_identifier", "identifier", "primitive_type", "name"):
        return text_of(node)
    for field in ("type", "name"):
        inner = node.child_by_field_name(field)
        if inner is not None and inner is not node:
            return type_name(inner)
    for child in node.named_children:
        found = type_name(child)
        if found:
            return found
    return None


def declared_name(node) -> str | None:
    """The first name a declaration declares: ``var X = …`` / ``const ( X = … )`` / ``int X = 1, Y`` /
    C's ``static const double X = 1.0;`` / Zig's ``pub const x: f64 = 1.0;``."""
    pending = [node]
    while pending:
        current = pending.pop(0)
        for field in ("name", "pattern"):  # Scala's `val x = …` names a pattern, as Swift's `let x`
            named = current.child_by_field_name(field)
            if named is not None and (named.type.endswith("identifier") or named.type == "pattern"):
                return text_of(named)
        declarator = current.child_by_field_name("declarator")
        if declarator is not None and declarator.type in _C_NAMES:
            return text_of(declarator)
        first = current.named_children[0] if current.named_children else None
        if current.type == "variable_declaration" and first is not None and first.type == "identifier":
            return text_of(first)  # Zig's `const x …`, Kotlin's `val x`: no name field
        pending.extend(
            c for c in current.named_children if c.type.endswith(("_spec", "declarator", "declaration"))
        )
    return None


def _name(node) -> str | None:
    return field_text(node) or "default"


def _keyword_name(node) -> str | None:
    return node.type.removesuffix("_declaration")  # Swift's `init`, `deinit`, `subscript`


def _go_method(node) -> str | None:
    receiver = type_name(node.child_by_field_name("receiver"))
    name = field_text(node) or "default"
    return f"{receiver}.{name}" if receiver else name


def _impl(node) -> str | None:
    return type_name(node.child_by_field_name("type")) or "impl"


def _instance(node) -> str | None:
    return type_name(node.child_by_field_name("patterns")) or field_text(node) or "instance"


def _type_spec(node) -> str | None:
    specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
    return (field_text(specs[0]) or "default") if len(specs) == 1 else None


def _declarator(node) -> str | None:
    for declarator in node.named_children:
        value = declarator.child_by_field_name("value")
        if (
            declarator.type == "variable_declarator"
            and value is not None
            and value.type in JS_FUNCTION_VALUES
        ):
            return field_text(declarator) or "default"
    return None


def _declarator_name(node) -> str | None:
    current = node.child_by_field_name("declarator")
    while current is not None and current.type not in _C_NAMES:
        current = current.child_by_field_name("declarator")
    return text_of(current) if current is not None else None


def _receiver(node) -> str | None:
    named = node.child_by_field_name("name")
    if named is None:
        return None
    receiver = None
    for child in node.named_children:
        if child.start_byte >= named.start_byte:
            break
        if child.type in ("user_type", "nullable_type"):
            receiver = text_of(child)
    return f"{receiver}.{text_of(named)}" if receiver else text_of(named)


def _extension(node) -> str | None:
    parameters = node.child_by_field_name("parameters")
    parameter = parameters.named_children[0] if parameters is not None and parameters.named_children else None
    found = type_name(parameter.child_by_field_name("type")) if parameter is not None else None
    return found or "extension"


def _elixir(node) -> str | None:
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier" or text_of(target) not in ELIXIR_DEFINERS:
        return None
    arguments = next((c for c in node.named_children if c.type == "arguments"), None)
    head = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    while head is not None and head.type == "binary_operator":  # `def f(x) when is_integer(x)`
        head = head.child_by_field_name("left")
    if head is not None and head.type == "call":
        head = head.child_by_field_name("target")
    if head is None or head.type not in ("identifier", "alias", "dot"):
        return text_of(target)  # `def unquote(name)()`
    for_type = [
        pair.child_by_field_name("value")
        for keywords in arguments.named_children
        if keywords.type == "keywords"
        for pair in keywords.named_children
        if pair.type == "pair" and text_of(pair.child_by_field_name("key")).startswith("for:")
    ]
    if text_of(target) == "defimpl" and for_type and for_type[0] is not None:
        return f"{text_of(head)}.{text_of(for_type[0])}"  # the module Elixir makes: `Proto.Type`
    return text_of(head)


def _function_value(node) -> str | None:
    values = next((c for c in node.named_children if c.type == "expression_list"), None)
    variables = next((c for c in node.named_children if c.type == "variable_list"), None)
    if values is None or variables is None or len(variables.named_children) != 1:
        return None
    value = values.named_children[0] if values.named_children else None
    return (
        text_of(variables.named_children[0])
        if value is not None and value.type == "function_definition"
        else None
    )


def _zig_container(node) -> str | None:
    if not any(c.type in ZIG_CONTAINERS for c in node.named_children):
        return None
    return declared_name(node)


NAMERS: dict[str, Callable[[object], str | None]] = {
    "name": _name,
    "keyword_name": _keyword_name,
    "go_method": _go_method,
    "impl": _impl,
    "instance": _instance,
    "type_spec": _type_spec,
    "declarator": _declarator,
    "declarator_name": _declarator_name,
    "receiver": _receiver,
    "extension": _extension,
    "elixir": _elixir,
    "function_value": _function_value,
    "zig_container": _zig_container,
}
