"""Cut records longer than a cap on line boundaries; the pieces concatenate to the original exactly."""

from __future__ import annotations

from dataclasses import replace

from haystack import Document, component

from codeground.components.records import line_of, provenance_header, record_id


def split_on_lines(content: str, max_chars: int) -> list[tuple[int, int]]:
    """``(start, end)`` pieces of ``content`` of at most ``max_chars`` each, cut after a ``\\n``.

    Greedy: each piece takes as many whole lines as fit. A single line longer than the cap is cut
    at the cap (the only case a piece ends mid-line). The pieces tile ``content`` exactly.
    """
    pieces: list[tuple[int, int]] = []
    start, n = 0, len(content)
    while start < n:
        if n - start <= max_chars:
            pieces.append((start, n))
            break
        limit = start + max_chars
        cut = content.rfind("\n", start, limit)  # index of the last newline that fits
        end = cut + 1 if cut >= start else limit
        pieces.append((start, end))
        start = end
    return pieces


@component
class OversizeSplitter:
    """Split every record longer than ``max_chars`` into line-aligned pieces.

    Rule: pieces keep the record's symbol and source type; each piece's content is an exact slice
    of the original content, their concatenation is the original, and their line/char ranges are
    shifted accordingly (ids ``path:symbol:line`` stay unique). Notebook records, whose content is
    not a slice of the file, keep the original range and get ``(part i/n)`` in the symbol. Meta
    ``impl`` stays on the first piece only. Whitespace-only pieces are merged into the previous one.

    Usage:
    ```python
    from codeground.components.chunkers.oversize import OversizeSplitter
    from codeground.components.records import make_record

    text = "".join(f"x{i} = {i}\\n" for i in range(600))
    record = make_record(text=text, file_path="big.py", symbol="big", source_type="module",
                         start_char=0, end_char=len(text))
    pieces = OversizeSplitter(max_chars=2000).run(documents=[record])["documents"]
    assert "".join(p.content for p in pieces) == text and all(len(p.content) <= 2000 for p in pieces)
    ```
    """

    def __init__(self, *, max_chars: int = 2000, max_chars_by_type: dict[str, int] | None = None) -> None:
        """
        :param max_chars: largest content a record may keep; longer ones are cut.
        :param max_chars_by_type: a smaller cap for some source types, e.g. ``{"impl": 1000}``: a
            citation of code should point at the lines that matter, not a whole long function.
        """
        caps = [max_chars, *(max_chars_by_type or {}).values()]
        if any(c < 1 for c in caps):
            raise ValueError("caps must be positive")
        self.max_chars = max_chars
        self.max_chars_by_type = dict(max_chars_by_type or {})

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        """Return the records with every oversize one replaced by its pieces (order kept)."""
        out: list[Document] = []
        for doc in documents:
            content = doc.content or ""
            cap = self.max_chars_by_type.get(doc.meta.get("source_type"), self.max_chars)
            if len(content) <= cap:
                out.append(doc)
                continue
            spans = self._merge_blank(content, split_on_lines(content, cap))
            for i, (a, b) in enumerate(spans):
                out.append(self._piece(doc, content, a, b, i, len(spans)))
        return {"documents": out}

    @staticmethod
    def _merge_blank(content: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        merged: list[tuple[int, int]] = []
        for a, b in spans:
            if merged and not content[a:b].strip():
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        return merged

    @staticmethod
    def _piece(doc: Document, content: str, a: int, b: int, index: int, total: int) -> Document:
        meta = dict(doc.meta)
        if index > 0:
            meta.pop("impl", None)
            meta.pop("impl_start_line", None)
            meta.pop("impl_end_line", None)
        meta["part"] = f"{index + 1}/{total}"
        path, symbol, stype = meta["file_path"], meta["symbol"], meta["source_type"]
        if stype == "notebook":
            symbol = f"{symbol} (part {index + 1}/{total})"
            meta["symbol"] = symbol
            meta["header"] = provenance_header(path, symbol, stype)
            doc_id = record_id(path, symbol, meta["start_line"])
        else:
            start_line = meta["start_line"] + line_of(content, a) - 1
            meta["start_line"] = start_line
            meta["end_line"] = meta["start_line"] + line_of(content[a:b], b - 1 - a) - 1
            meta["start_char"] = doc.meta["start_char"] + a
            meta["end_char"] = doc.meta["start_char"] + b
            doc_id = record_id(path, symbol, start_line)
            if a > 0 and content[a - 1] != "\n":  # a line longer than the cap was cut mid-line
                doc_id = f"{doc_id}+{meta['start_char']}"
        return replace(doc, id=doc_id, content=content[a:b], meta=meta)
