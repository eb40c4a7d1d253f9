"""Python the running interpreter cannot parse → the ``ast`` outline the Python chunker reads, by tree-sitter.

Rule: codeground runs on Python 3.11, whose ``ast`` refuses syntax added since (PEP 695's
``def f[T]()`` and ``type X = …``, PEP 701's f-strings that reuse their quotes, 3.14's ``except A, B:``).
A repository written for a newer Python would lose those files: in CPython 3.13's own ``Lib``, 19
of 2,132 files, ``typing.py``, ``dataclasses.py`` and ``traceback.py`` among them. When ``ast.parse``
fails, tree-sitter's Python grammar (the official ``tree-sitter-python`` wheel) parses the file; if it
finds no error, :func:`outline` builds the ``ast.Module`` that :class:`PythonAstChunker` reads, so
the file gets the records ``ast`` would have given it:

- the statements of the module and of every definition's body, each with ``ast``'s positions
  (1-based line, UTF-8 byte column; the end after the statement's last token, never after a
  trailing comment or ``;``; lines end at ``\\r\\n``, ``\\r`` or ``\\n`` as Python's tokenizer ends them);
- definitions as ``FunctionDef`` / ``ClassDef`` with their name, decorators (positions only) and
  arguments (names: positional, keyword-only, ``*args``, ``**kwargs``);
- a body's first statement as ``Expr(Constant(str))`` when it is a plain string literal, so
  ``ast.get_docstring`` finds the docstring; imports as ``Import`` / ``ImportFrom``; any other
  statement is a ``Pass`` placeholder (the chunker slices the source by position only).

``outline`` returns ``None`` when tree-sitter finds an error too (a real syntax error, a template);
the chunker then indexes the file as text. A file ``ast`` parses never comes here: the two give the
same records on every file of CPython 3.13's ``Lib``, vLLM 0.10.1 and Django 6.0 that both parse
(checked by ``tests/components/chunkers/test_python_syntax_tree.py`` on this repository's sources).

Usage:
```python
import ast
from codeground.components.chunkers.python_syntax_tree import outline

src = 'type Pair[T] = tuple[T, T]\\n\\nclass Box[T]:\\n    \"\"\"A box.\"\"\"\\n    def get(self): ...\\n'
module = outline(src)
box = module.body[1]
assert (box.name, ast.get_docstring(box), box.body[1].name) == ("Box", "A box.", "get")
assert outline("def broken(:\\n    pass\\n") is None
```
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right

from codeground.components.languages import grammar

_BOM = "\ufeff"
_NEWLINE = re.compile(rb"\r\n|\r|\n")
_LONE_CR = re.compile(rb"\r(?!\n)")
_IMPORTS = {"import_statement", "import_from_statement", "future_import_statement"}
_STRINGS = {"string", "concatenated_string"}


def outline(text: str) -> ast.Module | None:
    """The ``ast.Module`` outline of Python source ``text``, or ``None`` if tree-sitter finds an error."""
    from tree_sitter import Parser

    data = text.removeprefix(_BOM).encode("utf-8")
    # a lone CR ends a line for Python, not for the grammar: the same byte as LF, so positions hold
    tree = Parser(grammar("tree_sitter_python", "language")).parse(_LONE_CR.sub(b"\n", data))
    if tree.root_node.has_error:
        return None
    try:
        return ast.Module(body=_Outline(data).statements(tree.root_node), type_ignores=[])
    except RecursionError:  # definitions nested hundreds deep
        return None


class _Outline:
    def __init__(self, data: bytes) -> None:
        self.line_starts = [0, *(m.end() for m in _NEWLINE.finditer(data))]

    def _point(self, byte: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, byte)
        return line, byte - self.line_starts[line - 1]

    def _at(self, node) -> dict[str, int]:
        """``ast``'s position attributes for ``node``: its first byte to the end of its last token."""
        last = node
        while True:
            tokens = [c for c in last.children if not c.is_extra and c.end_byte > c.start_byte]
            if not tokens:
                break
            last = tokens[-1]
        lineno, col = self._point(node.start_byte)
        end_lineno, end_col = self._point(last.end_byte)
        return {"lineno": lineno, "col_offset": col, "end_lineno": end_lineno, "end_col_offset": end_col}

    def statements(self, block) -> list[ast.stmt]:
        return [self._statement(c) for c in block.named_children if not c.is_extra]

    def _statement(self, node) -> ast.stmt:
        decorators: list[ast.expr] = []
        if node.type == "decorated_definition":
            for dec in node.named_children:
                if dec.type == "decorator":
                    expr = next((c for c in dec.named_children if not c.is_extra), dec)
                    decorators.append(ast.Name(id="_", ctx=ast.Load(), **self._at(expr)))
            node = node.child_by_field_name("definition")
        if node.type in ("function_definition", "class_definition"):
            name = node.child_by_field_name("name").text.decode("utf-8")
            body = self.statements(node.child_by_field_name("body"))
            if node.type == "class_definition":
                return ast.ClassDef(
                    name=name, bases=[], keywords=[], body=body, decorator_list=decorators, **self._at(node)
                )
            return ast.FunctionDef(
                name=name,
                args=_arguments(node.child_by_field_name("parameters")),
                body=body,
                decorator_list=decorators,
                **self._at(node),
            )
        if node.type in _IMPORTS:
            kind = ast.Import if node.type == "import_statement" else ast.ImportFrom
            return kind(names=[], **self._at(node))
        at = self._at(node)
        doc = _string_value(node)
        return ast.Pass(**at) if doc is None else ast.Expr(value=ast.Constant(value=doc, **at), **at)


def _string_value(statement) -> str | None:
    """The text inside a statement that is one plain (not f-, t- or bytes) string literal, else ``None``."""
    if statement.type != "expression_statement":
        return None
    parts = [c for c in statement.named_children if not c.is_extra]
    if len(parts) != 1:
        return None
    expr = parts[0]
    while expr.type == "parenthesized_expression":
        inner = [c for c in expr.named_children if not c.is_extra]
        if len(inner) != 1:
            return None
        expr = inner[0]
    if expr.type not in _STRINGS:
        return None
    literals = [expr] if expr.type == "string" else [c for c in expr.named_children if c.type == "string"]
    value = []
    for literal in literals:
        start = literal.child(0)
        prefix = start.text.decode("utf-8").rstrip("'\"").lower() if start is not None else ""
        if any(p in prefix for p in "fbt"):
            return None
        value += [c.text.decode("utf-8") for c in literal.named_children if c.type == "string_content"]
    return "".join(value)


def _arguments(parameters) -> ast.arguments:
    """The argument names of a ``parameters`` node (what the chunker asks: are there any besides self)."""
    positional: list[ast.arg] = []
    keyword_only: list[ast.arg] = []
    vararg = kwarg = None
    after_star = False
    for param in parameters.named_children if parameters is not None else []:
        kind = param.type
        if param.is_extra or kind == "positional_separator":
            continue
        if kind == "keyword_separator":
            after_star = True
            continue
        inner = next((c for c in param.named_children if not c.is_extra), None)
        splat = param if kind.endswith("splat_pattern") else inner if kind == "typed_parameter" else None
        if splat is not None and splat.type == "list_splat_pattern":
            vararg, after_star = ast.arg(arg=_name(splat)), True
        elif splat is not None and splat.type == "dictionary_splat_pattern":
            kwarg = ast.arg(arg=_name(splat))
        else:
            (keyword_only if after_star else positional).append(ast.arg(arg=_name(param)))
    return ast.arguments(
        posonlyargs=[],
        args=positional,
        vararg=vararg,
        kwonlyargs=keyword_only,
        kw_defaults=[None] * len(keyword_only),
        kwarg=kwarg,
        defaults=[],
    )


def _name(param) -> str:
    """A parameter's name (``x``, ``x: int``, ``x=1``, ``x: int = 1``, ``*x``, ``**x``)."""
    if param.type == "identifier":
        return param.text.decode("utf-8")
    named = param.child_by_field_name("name")
    if named is not None:
        return named.text.decode("utf-8")
    first = next((c for c in param.named_children if not c.is_extra), None)
    return _name(first) if first is not None else ""
