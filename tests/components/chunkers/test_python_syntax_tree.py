"""Python this interpreter's ``ast`` refuses gets the records ``ast`` would give it (tree-sitter)."""

import ast
from pathlib import Path

import pytest
from haystack.dataclasses import ByteStream

from codeground.components.chunkers.python_ast import PythonAstChunker
from codeground.components.chunkers.python_syntax_tree import outline
from codeground.components.chunkers.text import PARSED_AS_TEXT

ROOT = Path(__file__).resolve().parents[3]

# every form the chunker reads: decorators, async, nested and one-line classes, docstrings of each
# kind (and strings that are not docstrings), private names with and without arguments, `;` and
# trailing comments after a body, imports runs, module code between definitions
FORMS = '''"""Module doc."""
import os
from typing import (
    Any,
)
X = 1; Y = 2  # two statements


@decorator
@decorator_factory(
    1,
)
class Outer(Base, metaclass=Meta):
    """Outer doc."""

    attr: int = 1

    class Inner:
        def method(self, a, /, b=1, *args, c, d=2, **kw):
            return a  # trailing

        # a comment after the body

    async def coro(self) -> None:
        ("""parenthesized doc""")
        await thing();

    def _private(self):
        return 1

    def _private_args(self, x):
        return x

    @property
    def prop(self):
        f"""not a docstring"""
        return 2

    def concatenated(self):
        "part one " 'part two'

    def empty_doc(self):
        """"""
        return 3

    def bytes_doc(self):
        b"""bytes are not a docstring"""


class OneLine: x = 1
class WithMethodOnOneLine: pass


def typed(a: int, *, b: "str" = "x", **kwargs: Any) -> int:
    """Typed."""
    if a:
        return a
    else:
        return b  # tail
    # after the body


def _helper():
    pass


def _helper_documented():
    """Documented private."""


if __name__ == "__main__":
    typed(1)
'''

NEWER = '''"""Python 3.12+ syntax (PEP 695, PEP 701)."""
type Pair[T] = tuple[T, T]


class Box[T]:
    """A box of one T."""

    def get[U](self, default: U) -> T | U:
        """The item, or default."""
        return f"{self.items["first"]}" or default


def render(rows):
    return "\\n".join(f"{row["name"]}: {row["value"]!r}" for row in rows)
'''


def _chunk(text: str, path: str = "pkg/mod.py"):
    src = ByteStream(data=text.encode("utf-8"), mime_type="text/x-python", meta={"file_path": path})
    return PythonAstChunker().run(sources=[src])


def _records(text: str, tree) -> list[tuple]:
    docs = PythonAstChunker()._chunk("pkg/mod.py", text, tree)
    return [(d.id, d.content, sorted(d.meta.items(), key=str)) for d in docs]


@pytest.mark.parametrize(
    "text",
    [
        FORMS,
        FORMS.replace("\n", "\r\n"),
        FORMS.replace("\n", "\r"),
        "\ufeff" + FORMS,
        "class A:\n    def f(self): ...\n    def g(self, x):\n        '''G.'''\n",
        "def café(naïve='é'):\n    '''Ünïcode.'''\n    return naïve\n",
    ],
    ids=["forms", "crlf", "cr-only", "bom", "one-line-methods", "non-ascii"],
)
def test_outline_gives_the_records_ast_gives(text):
    assert _records(text, outline(text)) == _records(text, ast.parse(text.removeprefix("\ufeff")))


def test_outline_gives_the_records_ast_gives_on_every_python_file_of_this_repository():
    files = sorted((ROOT / "codeground").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    compared = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue  # the fixtures' deliberately broken file
        assert _records(text, outline(text)) == _records(text, tree), path
        compared += 1
    assert compared > 100


def test_python_newer_than_the_interpreter_gets_structural_records_with_exact_slices():
    with pytest.raises(SyntaxError):
        ast.parse(NEWER)  # this interpreter is 3.11: PEP 695 and PEP 701 are newer
    out = _chunk(NEWER)
    assert out["failed"] == []
    docs = out["documents"]
    by_symbol = {(d.meta["symbol"], d.meta["source_type"]) for d in docs}
    assert {("Box", "api"), ("Box.get", "api"), ("Box.get", "impl"), ("render", "impl")} <= by_symbol
    assert ("pkg.mod", "module") in by_symbol  # the docstring and the `type` alias
    for d in docs:
        assert NEWER[d.meta["start_char"] : d.meta["end_char"]] == d.content, d.id
    get = next(d for d in docs if d.id == "pkg/mod.py:Box.get:8" and d.meta["source_type"] == "api")
    assert get.content.endswith('"""The item, or default."""')
    assert 'self.items["first"]' in get.meta["impl"]


def test_python_2_print_statements_still_give_definitions():
    text = 'def greet(name):\n    """Say hello."""\n    print "hello", name\n'
    out = _chunk(text, "legacy/greet.py")
    assert out["failed"] == []
    assert [(d.meta["symbol"], d.meta["source_type"]) for d in out["documents"]] == [
        ("greet", "api"),
        ("greet", "impl"),
    ]


def test_a_file_neither_parser_reads_is_indexed_as_text_and_counted_never_lost():
    text = "def broken(:\n    return {{ cookiecutter.value }}\n"
    out = _chunk(text, "tmpl/broken.py")
    assert out["failed"] == [["tmpl/broken.py", PARSED_AS_TEXT]]
    assert [(d.meta["source_type"], d.content) for d in out["documents"]] == [("text", text.rstrip())]


def test_definitions_nested_past_the_recursion_limit_fall_back_to_text():
    depth = 1_200
    text = "".join(f"{'    ' * i}class C{i}:\n" for i in range(depth)) + "    " * depth + "pass\n"
    out = _chunk(text, "deep.py")
    assert out["failed"] == [["deep.py", PARSED_AS_TEXT]]
    assert {d.meta["source_type"] for d in out["documents"]} == {"text"}


def test_mutated_sources_never_raise_and_every_record_is_an_exact_slice():
    """Half-typed files (cut, characters dropped, brackets or keywords inserted): each is chunked by
    ``ast``, the outline or as text, never fails, and every record is the file's exact slice."""
    import random

    rng = random.Random(7)
    pieces = ["(", ")", ":", "\n", "    ", '"""', "@", "def ", "class ", "\t", "\r", "[", "f'", "\\"]
    outlined = 0
    for _ in range(600):
        src = rng.choice([FORMS, NEWER])
        for _ in range(rng.randint(1, 4)):
            k, op = rng.randrange(max(1, len(src))), rng.random()
            if op < 0.4:
                src = src[:k] + src[k + rng.randint(1, 5) :]
            elif op < 0.7:
                src = src[:k] + rng.choice(pieces) + src[k:]
            else:
                src = src[:k]
        outlined += outline(src) is not None
        out = _chunk(src, "f.py")
        assert all(why == PARSED_AS_TEXT for _, why in out["failed"]), src
        for d in out["documents"]:
            assert src[d.meta["start_char"] : d.meta["end_char"]] == d.content, src
    assert outlined > 100  # the outline was exercised, not only the text fallback
