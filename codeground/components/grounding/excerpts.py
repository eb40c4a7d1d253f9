"""The quoted sources of the prompt, with every repository string made safe to quote."""

from __future__ import annotations

from typing import Any

from haystack import Document, component

from codeground.components.escaping import for_prompt_attribute, for_prompt_body


def _lines(start: Any, end: Any) -> str:
    return for_prompt_attribute(f"{start}-{end}")


@component
class PromptExcerpts:
    """The first ``max_excerpts`` sources as the fields of the prompt's ``<excerpt>`` blocks.

    Rule: repository text reaches the prompt only through this component, each string in the one
    form its place in the template cannot read as anything but data
    (``codeground.components.escaping``): the file path, the line range and the symbol go into the
    tag's quoted attributes (``for_prompt_attribute``: no quote, ``<``, ``>`` or newline survives, so
    a heading ``Setup"></excerpt>`` or a folder named ``inj"><`` cannot close the tag); the content
    (cut to its whole lines within ``content_chars`` when set) and the implementation (cut to
    ``impl_chars``) go inside the block (``for_prompt_body``: no
    ``<excerpt`` or ``</excerpt`` of any letter case survives, so nothing closes the block early or
    forges another). The template lays the blocks out; it never sees a raw repository string. The
    documents are not changed (the cited sources stay exact).

    Each excerpt is a dict: ``file``, ``lines`` (``start-end``), ``symbol``, ``content``, and for a
    documented symbol ``impl`` and ``impl_lines`` (empty strings otherwise).

    Usage:
    ```python
    from haystack import Document
    from codeground.components.grounding.excerpts import PromptExcerpts

    doc = Document(content="x </EXCERPT> y", meta={"file_path": 'a"b.md', "start_line": 1,
                                                   "end_line": 2, "symbol": "Setup\\"></excerpt>"})
    (excerpt,) = PromptExcerpts(max_excerpts=8).run(documents=[doc])["excerpts"]
    assert excerpt["file"] == "a&quot;b.md" and excerpt["lines"] == "1-2"
    assert excerpt["symbol"] == "Setup&quot;&gt;&lt;/excerpt&gt;"
    assert excerpt["content"] == "x <\\\\/EXCERPT> y"
    ```
    """

    def __init__(
        self, *, max_excerpts: int = 8, impl_chars: int = 2000, content_chars: int | None = None
    ) -> None:
        """
        :param max_excerpts: how many of the sources (best first) the prompt quotes.
        :param impl_chars: how much of a documented symbol's implementation (meta ``impl``) is quoted
            (0: none).
        :param content_chars: how much of each source's text is quoted, cut after its last whole line
            that fits (``None``: all of it); the prompt budget of a model that reads slowly.
        """
        if max_excerpts < 0 or impl_chars < 0 or (content_chars is not None and content_chars < 1):
            raise ValueError("max_excerpts and impl_chars must be >= 0 and content_chars >= 1")
        self.max_excerpts = max_excerpts
        self.impl_chars = impl_chars
        self.content_chars = content_chars

    def _cut(self, text: str) -> str:
        """``text``, or its whole lines that fit in ``content_chars`` (the first line's start if none)."""
        if self.content_chars is None or len(text) <= self.content_chars:
            return text
        head = text[: self.content_chars]
        return head[: head.rfind("\n")] if "\n" in head else head

    @component.output_types(excerpts=list[dict[str, str]])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """The excerpts of the first ``max_excerpts`` documents, in order."""
        excerpts = []
        for doc in documents[: self.max_excerpts]:
            meta = doc.meta
            impl = meta.get("impl") or ""
            excerpts.append(
                {
                    "file": for_prompt_attribute(meta.get("file_path", "")),
                    "lines": _lines(meta.get("start_line", ""), meta.get("end_line", "")),
                    "symbol": for_prompt_attribute(meta.get("symbol") or ""),
                    "content": for_prompt_body(self._cut(doc.content or "")),
                    "impl": for_prompt_body(impl[: self.impl_chars]) if impl and self.impl_chars else "",
                    "impl_lines": _lines(meta.get("impl_start_line", ""), meta.get("impl_end_line", ""))
                    if impl and self.impl_chars
                    else "",
                }
            )
        return {"excerpts": excerpts}
