"""Plain-text fallback: any other text file is one record, cut later by the oversize splitter."""

from __future__ import annotations

from pathlib import PurePosixPath

from haystack import Document, component

from codeground.components.records import Source, make_record, source_text

# the ``failed`` reason of a source file its chunker could not parse, indexed as text instead
PARSED_AS_TEXT = "syntax_error_as_text"


@component
class TextChunker:
    """One ``text`` record per non-blank file; its symbol is the file name.

    Rule: the whole file is the record (the ``OversizeSplitter`` downstream cuts it on line
    boundaries); trailing whitespace is left out of the slice, whitespace-only files yield nothing.

    Usage:
    ```python
    from haystack.dataclasses import ByteStream
    from codeground.components.chunkers.text import TextChunker

    TextChunker().run(sources=[ByteStream(b"hello\\n", meta={"file_path": "NOTES.txt"})])
    ```
    """

    def __init__(self) -> None:
        pass

    @component.output_types(documents=list[Document])
    def run(self, sources: list[Source]) -> dict[str, list[Document]]:
        """One record per non-blank source."""
        documents = []
        for source in sources:
            file_path, text = source_text(source)
            end = len(text.rstrip())
            start = len(text) - len(text.lstrip())
            if end <= start:
                continue
            start = text.rfind("\n", 0, start) + 1  # keep the first line's indentation
            documents.append(
                make_record(
                    text=text,
                    file_path=file_path,
                    symbol=PurePosixPath(file_path).name,
                    source_type="text",
                    start_char=start,
                    end_char=end,
                )
            )
        return {"documents": documents}
