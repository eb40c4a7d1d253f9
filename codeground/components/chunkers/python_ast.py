"""Python files → one record per class, function and method, with two views of each.

Rules:
- One record per top-level class/function and per method; methods are ``Class.method``, nested
  classes ``Outer.Inner`` (their methods ``Outer.Inner.method``). Functions nested in functions
  stay inside their parent. ``async def`` counts as a function.
- Dunders are skipped except ``__init__``. Private names (leading ``_``) are kept only when they
  have a docstring or take arguments (``self``/``cls`` don't count). With ``all_definitions`` every
  definition is kept: a skipped one's code is in no record at all (``__call__`` of a pass class, an
  ``_init_executor(self)``), so no question can reach it (on the vLLM dev code questions, keeping
  them found 2 more at R@5, both on the *check* half).
- A documented symbol (has a docstring) becomes type ``api``: its content is the signature and
  docstring (decorators included), and its whole implementation is carried as meta ``impl``
  (capped at ``max_impl_chars``). An undocumented symbol becomes type ``impl``: its content is its
  code.
- With ``body_records`` (default), the code after a docstring is also a searchable ``impl`` record
  of the same symbol (meta ``body_of`` = the api record's id), so a question about a line deep in
  a documented function can cite that line; the api record still carries the whole ``impl``.
- A class's own record covers the class statement up to its first method or nested class (its
  attributes); the methods are their own records, so no text is indexed twice.
- Module-level code between definitions (module docstring, constants, ``if __name__ …``) becomes
  records of type ``module`` named after the dotted module path; runs of bare imports are skipped,
  unless the file holds nothing else (a re-export is where its name lives for the package's users).
- A file this Python's ``ast`` cannot parse is parsed by tree-sitter's Python grammar
  (:mod:`~codeground.components.chunkers.python_syntax_tree`): syntax newer than the interpreter
  (``def f[T]()``, ``type X = …``, PEP 701 f-strings) or older (Python 2's ``print x``) gets the same
  records ``ast`` would give. A file neither parses (a real syntax error, a template) becomes ``text``
  records, as any text file, listed in ``failed`` as ``syntax_error_as_text``: counted, never lost.
  A file the chunker cannot handle otherwise is listed as ``chunker_error``.
Every content is the exact slice ``text[start_char:end_char]`` of the file.
"""

from __future__ import annotations

import ast
import logging
import re
import warnings
from bisect import bisect_right
from functools import partial

from haystack import Document, component

from codeground.components.chunkers.python_syntax_tree import outline
from codeground.components.chunkers.text import PARSED_AS_TEXT, TextChunker
from codeground.components.records import Source, make_record, source_text

logger = logging.getLogger(__name__)

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BOM = "\ufeff"
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _takes_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> bool:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if in_class and positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    return bool(positional or args.kwonlyargs or args.vararg or args.kwarg)


class _Offsets:
    """Converts ast (line, UTF-8 byte column) positions to ``str`` offsets.

    Lines end where Python's tokenizer ends them (``\\r\\n``, a lone ``\\r`` or ``\\n``), so files
    with old-Mac or mixed line endings map correctly; a leading BOM is not part of line 1's columns.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        origin = 1 if text.startswith(_BOM) else 0
        self.line_starts = [origin]
        self._lines = []
        for match in _NEWLINE.finditer(text, origin):
            self._lines.append(text[self.line_starts[-1] : match.start()])
            self.line_starts.append(match.end())
        self._lines.append(text[self.line_starts[-1] :])

    def at(self, lineno: int, byte_col: int) -> int:
        line = self._lines[lineno - 1]
        col = len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return self.line_starts[lineno - 1] + col

    def line_start(self, lineno: int) -> int:
        return self.line_starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        """Offset of the end of line ``lineno`` (before its newline)."""
        return self.line_starts[lineno - 1] + len(self._lines[lineno - 1])

    def line_of(self, offset: int) -> int:
        return bisect_right(self.line_starts, offset)


@component
class PythonAstChunker:
    """Chunk Python sources along the AST (see module docstring for the rules).

    Usage:
    ```python
    from haystack.dataclasses import ByteStream
    from codeground.components.chunkers.python_ast import PythonAstChunker

    src = b'class Model:\\n    \\"\\"\\"A model.\\"\\"\\"\\n    def fit(self, x):\\n        return x\\n'
    docs = PythonAstChunker().run(sources=[ByteStream(src, meta={"file_path": "m.py"})])["documents"]
    [d.id for d in docs]  # ['m.py:Model:1', 'm.py:Model.fit:3']
    ```
    """

    def __init__(
        self,
        *,
        max_impl_chars: int = 12_000,
        module_records: bool = True,
        body_records: bool = True,
        all_definitions: bool = False,
    ) -> None:
        """
        :param max_impl_chars: cap on the implementation carried in meta ``impl`` of ``api`` records.
        :param module_records: also emit module-level code between definitions as ``module`` records.
        :param body_records: also emit the code after a docstring as ``impl`` records of the same symbol.
        :param all_definitions: also emit dunders and private definitions without docstring or arguments.
        """
        self.max_impl_chars = max_impl_chars
        self.module_records = module_records
        self.body_records = body_records
        self.all_definitions = all_definitions

    @component.output_types(documents=list[Document], failed=list[list[str]])
    def run(self, sources: list[Source]) -> dict[str, list]:
        """Chunk each Python source; one that neither ``ast`` nor tree-sitter parses becomes text records."""
        documents: list[Document] = []
        failed: list[list[str]] = []
        for source in sources:
            file_path, text = source_text(source)
            tree = self._parse(file_path, text)
            if tree is None:
                failed.append([file_path, PARSED_AS_TEXT])
                documents.extend(TextChunker().run(sources=[source])["documents"])
                continue
            try:
                documents.extend(self._chunk(file_path, text, tree))
            except Exception as exc:  # noqa: BLE001 - one odd file must not cost the others (counted)
                logger.warning("skipping %s: cannot be chunked (%s: %s)", file_path, type(exc).__name__, exc)
                failed.append([file_path, "chunker_error"])
        return {"documents": documents, "failed": failed}

    @staticmethod
    def _parse(file_path: str, text: str) -> ast.Module | None:
        """``ast``'s tree, else tree-sitter's outline (Python newer or older than this), else ``None``."""
        try:
            # Python accepts a UTF-8 BOM in a file but not in a string: parse without it. The file's
            # own warnings (an invalid escape such as "\\.") are its authors' business, not the index's.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
                return ast.parse(text.removeprefix(_BOM), filename=file_path)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            why = exc.__class__.__name__
        try:
            tree = outline(text)
        except Exception as exc:  # noqa: BLE001 - one odd file must not cost the others
            tree, why = None, f"{why}; tree-sitter's outline: {type(exc).__name__}: {exc}"
        if tree is None:
            logger.info("%s: does not parse (%s); indexed as text", file_path, why)
        return tree

    # ------------------------------------------------------------------------------------------
    def _chunk(self, file_path: str, text: str, tree: ast.Module) -> list[Document]:
        offsets = _Offsets(text)
        records: list[Document] = []
        if self.module_records:
            records.extend(self._module_records(file_path, text, tree, offsets))
        for node in tree.body:
            if isinstance(node, _DEFS):
                self._visit(
                    node,
                    prefix="",
                    in_class=False,
                    file_path=file_path,
                    text=text,
                    offsets=offsets,
                    out=records,
                )
        records.sort(key=lambda d: d.meta["start_char"])
        return records

    def _visit(
        self,
        node,
        *,
        prefix: str,
        in_class: bool,
        file_path: str,
        text: str,
        offsets: _Offsets,
        out: list[Document],
    ) -> None:
        name = node.name
        symbol = f"{prefix}{name}"
        docstring = ast.get_docstring(node, clean=False)
        is_class = isinstance(node, ast.ClassDef)
        keep = True
        if self.all_definitions:
            pass
        elif _is_dunder(name):
            keep = name == "__init__"
        elif name.startswith("_") and not is_class:
            keep = bool(docstring) or _takes_arguments(node, in_class)
        elif name.startswith("_") and is_class:
            keep = bool(docstring) or any(isinstance(n, _DEFS) for n in node.body)
        if not keep:
            return

        first_line = min([d.lineno for d in node.decorator_list] + [node.lineno])
        start = offsets.line_start(first_line)
        if is_class:
            own_end = self._class_own_end(node, offsets)
        else:
            own_end = offsets.at(node.end_lineno, node.end_col_offset)
        impl_text = text[start:own_end]

        record = partial(make_record, text=text, file_path=file_path, symbol=symbol)
        if docstring:
            doc_node = node.body[0]
            meta = {
                "impl": impl_text[: self.max_impl_chars],
                "impl_start_line": first_line,
                "impl_end_line": offsets.line_of(max(own_end - 1, start)),
            }
            end = offsets.at(doc_node.end_lineno, doc_node.end_col_offset)
            api = record(source_type="api", start_char=start, end_char=end, extra_meta=meta)
            out.append(api)
            has_next_line = doc_node.end_lineno < len(offsets.line_starts)
            body_start = offsets.line_start(doc_node.end_lineno + 1) if has_next_line else own_end
            if self.body_records and body_start < own_end and text[body_start:own_end].strip():
                body_meta = {"body_of": api.id}
                out.append(
                    record(source_type="impl", start_char=body_start, end_char=own_end, extra_meta=body_meta)
                )
        else:
            out.append(record(source_type="impl", start_char=start, end_char=own_end))

        if is_class:
            for child in node.body:
                if isinstance(child, _DEFS):
                    self._visit(
                        child,
                        prefix=f"{symbol}.",
                        in_class=True,
                        file_path=file_path,
                        text=text,
                        offsets=offsets,
                        out=out,
                    )

    @staticmethod
    def _class_own_end(node: ast.ClassDef, offsets: _Offsets) -> int:
        """End of the class's own text: the statements before its first method or nested class."""
        body = node.body
        first_def = next((i for i, n in enumerate(body) if isinstance(n, _DEFS)), None)
        if first_def is None:
            return offsets.at(node.end_lineno, node.end_col_offset)
        if first_def > 0:
            last = body[first_def - 1]
            return offsets.at(last.end_lineno, last.end_col_offset)
        child = body[0]
        child_first = min([d.lineno for d in child.decorator_list] + [child.lineno])
        if child_first <= node.lineno:  # `class A: def f(self): ...` on one line
            return offsets.at(node.end_lineno, node.end_col_offset)
        # the header ends on the line before the first method (or its decorators / comments)
        header_last = child_first - 1
        while header_last > node.lineno and not offsets._lines[header_last - 1].strip():
            header_last -= 1
        return offsets.line_end(header_last)

    def _module_records(
        self, file_path: str, text: str, tree: ast.Module, offsets: _Offsets
    ) -> list[Document]:
        module = file_path[:-3] if file_path.endswith(".py") else file_path.rsplit(".", 1)[0]
        module = module.replace("/", ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        records: list[Document] = []
        run: list[ast.stmt] = []
        # a file of imports alone (a re-export: `from starlette.middleware.cors import CORSMiddleware`)
        # is one record: it is where the name lives for this package's users
        bare = not any(isinstance(stmt, _DEFS) for stmt in tree.body)

        def flush() -> None:
            if run and (bare or any(not isinstance(s, (ast.Import, ast.ImportFrom)) for s in run)):
                start = offsets.line_start(run[0].lineno)
                end = offsets.at(run[-1].end_lineno, run[-1].end_col_offset)
                if text[start:end].strip():
                    records.append(
                        make_record(
                            text=text,
                            file_path=file_path,
                            symbol=module,
                            source_type="module",
                            start_char=start,
                            end_char=end,
                        )
                    )
            run.clear()

        for stmt in tree.body:
            if isinstance(stmt, _DEFS):
                flush()
            else:
                run.append(stmt)
        flush()
        return records
