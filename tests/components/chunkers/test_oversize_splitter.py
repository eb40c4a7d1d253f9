from haystack.dataclasses import ByteStream

from codeground.components.chunkers.oversize import OversizeSplitter, split_on_lines
from codeground.components.chunkers.text import TextChunker


def records_for(text: str, path: str = "big.txt"):
    return TextChunker().run(sources=[ByteStream(data=text.encode(), meta={"file_path": path})])["documents"]


def test_split_on_lines_tiles_content_exactly_and_respects_cap():
    content = "".join(f"line {i} " + "x" * (i % 37) + "\n" for i in range(500))
    spans = split_on_lines(content, 300)
    assert "".join(content[a:b] for a, b in spans) == content
    assert all(b - a <= 300 for a, b in spans)
    assert all(content[b - 1] == "\n" for a, b in spans[:-1])  # cut after a newline


def test_line_longer_than_cap_is_cut_mid_line_only_then():
    content = "short\n" + "y" * 250 + "\nend\n"
    spans = split_on_lines(content, 100)
    assert "".join(content[a:b] for a, b in spans) == content
    assert all(b - a <= 100 for a, b in spans)


def test_oversize_split_preserves_content_and_ranges_exactly():
    text = "".join(f"row {i}: " + "z" * (i % 50) + "\n" for i in range(400))
    pieces = OversizeSplitter(max_chars=500).run(documents=records_for(text))["documents"]
    assert len(pieces) > 1
    assert "".join(p.content for p in pieces) == text.rstrip()
    for p in pieces:
        assert len(p.content) <= 500
        assert text[p.meta["start_char"]: p.meta["end_char"]] == p.content
        assert text.count("\n", 0, p.meta["start_char"]) + 1 == p.meta["start_line"]
        assert text.count("\n", 0, p.meta["end_char"] - 1) + 1 == p.meta["end_line"]
        assert p.id == f"big.txt:big.txt:{p.meta['start_line']}"
    assert len({p.id for p in pieces}) == len(pieces)


def test_small_records_pass_through_untouched():
    docs = records_for("tiny\n")
    assert OversizeSplitter(max_chars=500).run(documents=docs)["documents"] == docs


def test_splitter_does_not_mutate_inputs():
    docs = records_for("a\n" * 2000)
    before = [(d.id, d.content, dict(d.meta)) for d in docs]
    OversizeSplitter(max_chars=100).run(documents=docs)
    assert [(d.id, d.content, dict(d.meta)) for d in docs] == before
