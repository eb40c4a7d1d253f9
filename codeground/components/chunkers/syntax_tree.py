"""Source files of every tree-sitter language → one record per definition (JS/TS, Go, Rust, Java, Ruby,
PHP, C#, Kotlin, Scala, Swift, Elixir, Haskell, Lua, Zig, Bash, C, C++).

One chunker for every language of :mod:`codeground.components.languages`; what differs per language
(definition node kinds, members, doc comments) is data there. The rules are the Python chunker's:

- One record per definition: functions, classes, methods (``Class.method``), interfaces, type
  aliases, enums, structs, traits, ``const f = () => …`` (TS/JS), Go methods as ``Type.Method``
  (from the receiver), Rust functions inside ``impl Type`` / ``impl Trait for Type`` as
  ``Type.method``, nested types as ``Outer.Inner``. Functions inside functions stay in their parent.
  Members are joined to their container with the language's separator (Ruby ``Circle#area``, PHP
  ``App\\Geometry\\Circle::area``, C++ ``geometry::Circle::area``); a body-less namespace line (PHP,
  C#) qualifies the definitions after it; Haskell equations of one function are one record.
  A definition without a name (``export default function () {}``) is ``default``.
- A variable, constant or field declaration is a definition when it is documented (a doc comment
  on it) or exported (``export const schema = …``): then it is API; otherwise it is module or class text.
- Its span starts at its doc comment (JSDoc/TSDoc/Javadoc ``/** */``, Go ``//`` lines and Rust
  ``///`` lines directly above, no blank line between) or at its decorators/attributes, and ends
  where the node ends; ``export`` is part of it.
- Two views where a doc comment exists: an ``api`` record of the doc comment and the signature (up
  to the line where the body opens) carrying the whole definition as meta ``impl``, and an ``impl``
  record of the rest (meta ``body_of``). Without a doc comment the definition is one ``impl`` record.
- A container's (class, impl, trait, namespace) own record is its text before its first member;
  the text between and after members is ``impl`` records of the container's symbol, so no text of a
  definition is lost and none is indexed twice. A Rust ``impl`` or ``mod`` block or a TS namespace
  whose own text is just its header line writes no own record.
- What lies between top-level definitions (constants, ``//!`` docs, package doc comments) becomes
  ``module`` records named after the file's path (``src/v4/core/api.ts`` → ``src.v4.core.api``); runs
  of imports and package lines alone are skipped, unless the file holds nothing else (``export * from
  './schemas'``: a re-export says where a name lives).
- A file that does not parse (tree-sitter reports an error node; a C ``.h`` is tried as C++ first)
  becomes ``text`` records, as any
  text file, and is listed in ``failed`` as ``syntax_error_as_text``: counted, never lost.
- Ids are ``path:symbol:line``; one used twice (two overloads on one line) gets ``+<start_char>``.
Every content is the exact slice ``text[start_char:end_char]``; oversize records are cut
downstream (``OversizeSplitter``).
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from dataclasses import replace
from functools import partial
from pathlib import PurePosixPath

from haystack import Document, component

from codeground.components.chunkers.syntax_names import NAMERS, declared_name, field_text
from codeground.components.chunkers.text import PARSED_AS_TEXT, TextChunker
from codeground.components.languages import Language, grammar, language_for, language_named, masked
from codeground.components.records import Source, make_record, source_text

logger = logging.getLogger(__name__)


class _Bytes:
    """Tree-sitter's UTF-8 byte offsets → Python ``str`` offsets (one table per file)."""

    def __init__(self, text: str, data: bytes) -> None:
        self.ascii = len(text) == len(data)
        self.data = data
        self.byte_starts = [0]
        self.char_starts = [0]
        if not self.ascii:
            char = 0
            for line in text.splitlines(keepends=True):
                char += len(line)
                self.char_starts.append(char)
                self.byte_starts.append(self.byte_starts[-1] + len(line.encode("utf-8")))

    def char(self, byte: int) -> int:
        if self.ascii:
            return byte
        row = bisect_right(self.byte_starts, byte) - 1
        start = self.byte_starts[row]
        return self.char_starts[row] + len(self.data[start:byte].decode("utf-8", errors="ignore"))


@component
class SyntaxTreeChunker:
    """Chunk the tree-sitter languages' sources along their syntax trees (module docstring).

    Usage:
    ```python
    from haystack.dataclasses import ByteStream
    from codeground.components.chunkers.syntax_tree import SyntaxTreeChunker

    src = b"package srv\\n\\n// Server serves.\\ntype Server struct{}\\n\\nfunc (s *Server) Start() {\\n}\\n"
    docs = SyntaxTreeChunker().run(sources=[ByteStream(src, meta={"file_path": "srv.go"})])["documents"]
    assert [d.id for d in docs] == ["srv.go:Server:3", "srv.go:Server.Start:6"]
    ```
    """

    def __init__(self, *, max_impl_chars: int = 12_000, module_records: bool = True) -> None:
        """
        :param max_impl_chars: cap on the implementation carried in meta ``impl`` of ``api`` records.
        :param module_records: also emit what lies between top-level definitions as ``module`` records.
        """
        self.max_impl_chars = max_impl_chars
        self.module_records = module_records

    @component.output_types(documents=list[Document], failed=list[list[str]])
    def run(self, sources: list[Source]) -> dict[str, list]:
        """Chunk each source; one that does not parse becomes text records and is listed in failed."""
        documents: list[Document] = []
        failed: list[list[str]] = []
        for source in sources:
            file_path, text = source_text(source)
            lang = language_for(file_path)
            try:
                records = self._chunk(file_path, text, lang) if lang is not None else None
            except Exception as exc:  # noqa: BLE001 - one odd file must not cost the others (counted)
                logger.warning(
                    "%s: cannot be chunked (%s: %s); indexed as text", file_path, type(exc).__name__, exc
                )
                records = None
            if records is None:
                failed.append([file_path, PARSED_AS_TEXT])
                records = TextChunker().run(sources=[source])["documents"]
            documents.extend(records)
        return {"documents": documents, "failed": failed}

    # ------------------------------------------------------------------------------------------
    def _chunk(self, file_path: str, text: str, lang: Language) -> list[Document] | None:
        from tree_sitter import Parser

        data = text.encode("utf-8")
        tree = Parser(grammar(lang.grammar, lang.entry_for(file_path))).parse(masked(lang, data))
        if tree.root_node.has_error and lang.fallback:  # a C++ header named `.h`
            lang = language_named(lang.fallback)
            tree = Parser(grammar(lang.grammar, lang.entry)).parse(masked(lang, data))
        if tree.root_node.has_error:
            logger.info("%s: syntax error; indexed as text", file_path)
            return None
        walk = _Walk(self, file_path, text, data, lang)
        walk.scope(tree.root_node, prefix="", module=True)
        records = sorted(walk.out, key=lambda d: (d.meta["start_char"], d.meta["end_char"]))
        seen: set[str] = set()
        unique = []
        for doc in records:
            if doc.id in seen:
                doc = replace(doc, id=f"{doc.id}+{doc.meta['start_char']}")
            seen.add(doc.id)
            unique.append(doc)
        return unique


class _Walk:
    """One file's walk: scopes (the file, container bodies) → definitions and the text between them."""

    def __init__(self, chunker: SyntaxTreeChunker, file_path: str, text: str, data: bytes, lang: Language):
        self.chunker = chunker
        self.file_path = file_path
        self.text = text
        self.lang = lang
        self.offsets = _Bytes(text, data)
        self.record = partial(make_record, text=text, file_path=file_path)
        self.module = PurePosixPath(file_path).with_suffix("").as_posix().replace("/", ".")
        self.out: list[Document] = []
        self._documented_kinds = lang.documented | frozenset(lang.wrappers)

    # -- scopes ------------------------------------------------------------------------------------
    def _members(self, node) -> list:
        """The named children of a scope, transparent nodes looked through."""
        members = []
        for child in node.named_children:
            if child.type in self.lang.transparent and not self._definition(child):
                members.extend(self._members(child))
            else:
                members.append(child)
        return members

    def _definitions(self, members: list) -> tuple[dict[int, tuple[int, object, str, int]], set[int]]:
        """``{index: (first attached index, definition node, name, last index)}`` of a scope's
        definitions, and the indexes of the members that belong to them: comments and decorators
        above, and the equations that continue a definition of :attr:`Language.merge_runs`."""
        claimed: set[int] = set()
        defs: dict[int, tuple[int, object, str, int]] = {}
        previous: int | None = None  # the key of the definition that ends at members[i - 1]
        for i in range(len(members)):
            if members[i].type in self.lang.namespaces and not self._body_nodes(members[i]):
                continue  # `namespace App\Geometry;`: names what follows (scope), no record of its own
            found = self._member_definition(members, i)
            if found is None:
                continue
            inner, name = found
            if previous is not None and defs[previous][3] == i - 1 and inner.type in self.lang.merge_runs:
                first, before, before_name, _ = defs[previous]
                if before_name == name and before.type == inner.type:  # `area (Square s) = …` goes on
                    defs[previous] = (first, before, name, i)
                    claimed.add(i)
                    continue
            defs[i] = (self._attached_start(members, i, claimed), inner, name, i)
            previous = i
        return defs, claimed

    def _body_nodes(self, inner) -> list:
        """The nodes holding a container's members: its :attr:`Language.containers` field (every
        node under it: a Scala ``extension`` has one per method), or, when that is ``""``, its first
        child of a :attr:`Language.bodies` kind (Kotlin's ``class_body``, Elixir's ``do_block``)."""
        field = self.lang.containers.get(inner.type)
        if field is None:
            return []
        if field:
            return list(inner.children_by_field_name(field))
        return [c for c in inner.named_children if c.type in self.lang.bodies][:1]

    def _inside(self, inner) -> list:
        """A container's members: those of its body, or its bodies themselves when they are definitions."""
        bodies = self._body_nodes(inner)
        if len(bodies) == 1 and self._definition(bodies[0]) is None:
            return self._members(bodies[0])
        return bodies

    def _join(self, prefix: str, container: str, inner, name: str) -> str:
        """``name`` qualified by its container's symbol with the language's separator: the first of
        :attr:`Language.separators` ``"<ancestor kind>/<kind>"`` (a node between the member and its
        container: Ruby's ``class << self``), ``"<container kind>/<kind>"``, ``"<kind>"``, else
        :attr:`Language.separator`."""
        if not prefix:
            return name
        table = self.lang.separators
        parent, steps = inner.parent, 0
        while parent is not None and steps < 4 and parent.type != container:
            sep = table.get(f"{parent.type}/{inner.type}")
            if sep is not None:
                return f"{prefix}{sep}{name}"
            parent, steps = parent.parent, steps + 1
        sep = table.get(f"{container}/{inner.type}", table.get(inner.type, self.lang.separator))
        return f"{prefix}{sep}{name}"

    def scope(
        self, node, *, prefix: str, module: bool, owner: str | None = None, container: str = "", found=None
    ) -> None:
        """Records of the definitions among ``node``'s members and of the runs of other members
        between and after them (``module`` records at file level, ``impl`` records of ``owner`` in a
        container of kind ``container``, whose text before its first member is the container's own
        record); ``prefix``: the symbol members are qualified by. A body-less namespace line (PHP,
        C#) qualifies the definitions after it. ``found``: the members and their ``_definitions``,
        when the caller has them already."""
        if found is None:
            members = self._members(node)
            defs, claimed = self._definitions(members)
        else:
            members, (defs, claimed) = found
        run: list = []
        for i, child in enumerate(members):
            if i in defs:
                if module or i != min(defs):  # a container's text before its first member is its own record
                    self._flush(run, module=module, owner=owner)
                run = []
                first, inner, name, last = defs[i]
                symbol = self._join(prefix, container, inner, name)
                self.definition(members, first, i, last, inner, symbol)
            elif i not in claimed:
                run.append(child)
                if module and child.type in self.lang.namespaces:
                    prefix, container = field_text(child) or prefix, child.type
        self._flush(run, module=module, owner=owner, whole=module and not defs)

    def _flush(self, run: list, *, module: bool, owner: str | None, whole: bool = False) -> None:
        """Write ``run`` as one record; ``whole``: it is all the file holds (imports alone are kept then)."""
        if not run:
            return
        if module and not self.chunker.module_records:
            return
        if module and not whole and all(n.type in self.lang.imports for n in run):
            return
        start, end = self._line_start(self._char(run[0].start_byte)), self._char(run[-1].end_byte)
        if not self.text[start:end].strip():
            return
        symbol, source_type = (self.module, "module") if module else (owner, "impl")
        if symbol is not None:
            self.out.append(
                self.record(symbol=symbol, source_type=source_type, start_char=start, end_char=end)
            )

    # -- definitions -------------------------------------------------------------------------------
    def _definition(self, node, documented: bool = False) -> tuple[object, str] | None:
        """``(definition node, name)`` when ``node`` is, or wraps (``export …``), a definition;
        ``documented``: a doc comment is on it, so a declaration (``const``, ``var``, a field) counts
        too, as does any exported one."""
        fields = self.lang.wrappers.get(node.type)
        if fields is not None:
            for field in fields:
                inner = node.child_by_field_name(field) if field else None
                for candidate in [inner] if inner is not None else ([] if field else node.named_children):
                    found = self._definition(candidate, True)  # exported: public API, as if documented
                    if found is not None:
                        return found
            return None
        found = self._named_definition(node)
        if found is None and documented and node.type in self.lang.documented:
            name = declared_name(node)
            return (node, name) if name else None
        return found

    def _named_definition(self, node) -> tuple[object, str] | None:
        """``(node, name)`` by the language's naming rule for ``node``'s kind (``syntax_names``)."""
        how = self.lang.definitions.get(node.type)
        name = NAMERS[how](node) if how is not None else None
        return (node, name) if name else None

    def _member_definition(self, members: list, i: int) -> tuple[object, str] | None:
        """``_definition`` of ``members[i]``, documented declarations included."""
        found = self._definition(members[i])
        if found is None and members[i].type in self._documented_kinds and self._documented(members, i):
            found = self._definition(members[i], documented=True)
        return found

    def _documented(self, members: list, i: int) -> bool:
        """Whether a doc comment is attached to ``members[i]``."""
        first = self._attached_start(members, i, set())
        return any(self._is_doc(members[k]) for k in range(first, i))

    def _is_doc(self, node) -> bool:
        """An attached member that documents: a comment, or an attribute of
        :attr:`Language.doc_attributes` (Elixir's ``@doc``)."""
        if node.type in self.lang.comment_kinds:
            return True
        prefixes = self.lang.doc_attributes
        return bool(prefixes) and node.type in self.lang.leading and node.text.startswith(prefixes)

    def _attached_start(self, members: list, i: int, claimed: set[int]) -> int:
        """Index of the first member attached to the definition at ``i``: its decorators/attributes,
        then its doc comment, directly above it. Those members are added to ``claimed``."""
        lang = self.lang
        first = i
        while (
            first > 0
            and members[first - 1].type in lang.leading
            and self._adjacent(members[first - 1], members[first])
        ):
            first -= 1
        j = first - 1
        if j >= 0 and members[j].type in lang.comment_kinds and self._adjacent(members[j], members[first]):
            comment = members[j].text.decode("utf-8", errors="replace")
            if comment.startswith(lang.doc_block_prefix) and not comment.startswith("/**/"):
                first = j
            elif self._doc_line(comment):
                first = j
                while (
                    first > 0
                    and members[first - 1].type in lang.comment_kinds
                    and self._doc_line(members[first - 1].text.decode("utf-8", errors="replace"))
                    and self._adjacent(members[first - 1], members[first])
                ):
                    first -= 1
        claimed.update(range(first, i))
        return first

    def _doc_line(self, comment: str) -> bool:
        prefix = self.lang.doc_line_prefix
        if not prefix or not comment.startswith(prefix):
            return False
        return prefix != "///" or not comment.startswith("////")  # "////" is a plain comment in Rust

    @staticmethod
    def _adjacent(above, below) -> bool:
        """``above`` ends on the line before ``below`` starts, or on its line: no blank line between."""
        end_row = above.end_point[0] - (1 if above.end_point[1] == 0 else 0)  # a line comment's newline
        return below.start_point[0] - end_row <= 1

    def definition(self, members: list, first: int, i: int, last: int, inner, symbol: str) -> None:
        """The records of the definition ``members[i]`` (attached members from ``first``, continued
        up to ``members[last]``), then of its members when it is a container."""
        has_doc = any(self._is_doc(members[k]) for k in range(first, i))
        start = self._line_start(self._char(members[first].start_byte))
        end = self._char(members[last].end_byte)
        inside = self._inside(inner) if inner.type in self.lang.containers else []
        defs, claimed = self._definitions(inside)
        own_end = end
        if defs:
            first_member = inside[defs[min(defs)][0]]
            own_end = self._trim_end(start, self._line_start(self._char(first_member.start_byte)))
        self._definition_records(inner, symbol, start, own_end, end, has_doc)
        if defs:
            found = (inside, (defs, claimed))
            self.scope(None, prefix=symbol, module=False, owner=symbol, container=inner.type, found=found)

    def _definition_records(
        self, inner, symbol: str, start: int, own_end: int, end: int, has_doc: bool
    ) -> None:
        text = self.text
        if own_end <= start or not text[start:own_end].strip():
            return
        header_only = "\n" not in text[start:own_end].strip().removesuffix("{").strip()  # Allman too
        if inner.type in self.lang.quiet_containers and header_only and own_end < end:
            return
        if not has_doc:
            self.out.append(
                self.record(symbol=symbol, source_type="impl", start_char=start, end_char=own_end)
            )
            return
        sig_end = self._signature_end(inner, own_end)
        meta = {
            "impl": text[start:own_end][: self.chunker.max_impl_chars],
            "impl_start_line": text.count("\n", 0, start) + 1,
            "impl_end_line": text.count("\n", 0, max(own_end - 1, start)) + 1,
        }
        api = self.record(
            symbol=symbol, source_type="api", start_char=start, end_char=sig_end, extra_meta=meta
        )
        self.out.append(api)
        body_start = sig_end + 1 if text[sig_end : sig_end + 1] == "\n" else sig_end
        if body_start < own_end and text[body_start:own_end].strip():
            body_meta = {"body_of": api.id}
            self.out.append(
                self.record(
                    symbol=symbol,
                    source_type="impl",
                    start_char=body_start,
                    end_char=own_end,
                    extra_meta=body_meta,
                )
            )

    def _signature_end(self, inner, own_end: int) -> int:
        """End of the line where the definition's body opens (its whole own text when it has none)."""
        body = inner.child_by_field_name("body") or next(
            (c for c in inner.named_children if c.type in self.lang.bodies), None
        )
        if body is None:
            return own_end
        opened = self._char(body.start_byte)
        line = self.text.rfind("\n", 0, opened)
        if line > self._char(inner.start_byte) and not self.text[line + 1 : opened].strip():
            return min(line, own_end)  # the body opens a line of its own (Ruby, Allman braces)
        line_end = self.text.find("\n", opened)
        line_end = len(self.text) if line_end < 0 else line_end
        return min(max(line_end, opened + 1), own_end)

    # -- offsets -----------------------------------------------------------------------------------
    def _char(self, byte: int) -> int:
        return self.offsets.char(byte)

    def _trim_end(self, start: int, end: int) -> int:
        """``end`` moved back over trailing whitespace, but not before ``start``."""
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return end

    def _line_start(self, char: int) -> int:
        """The start of ``char``'s line when only indentation precedes it (records start at a line)."""
        line = self.text.rfind("\n", 0, char) + 1
        return line if not self.text[line:char].strip() else char
