"""Line numbers of record spans: every line ending counts once, whatever the file's convention."""

import random

from codeground.components.records import line_of


def _counted(text: str, offset: int) -> int:
    """The definition: lines before ``offset`` end at \\n, or at a \\r not followed by \\n."""
    before = text[:offset]
    lone_cr = sum(1 for i, c in enumerate(before) if c == "\r" and text[i + 1 : i + 2] != "\n")
    return before.count("\n") + lone_cr + 1


def test_line_of_counts_lf_crlf_and_lone_cr_endings_once_each():
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(["a", "\n", "\r", "\r\n", "b"]) for _ in range(rng.randint(0, 40)))
        for offset in range(len(text) + 1):
            assert line_of(text, offset) == _counted(text, offset), (text, offset)


def test_line_of_numbers_the_lines_of_a_large_file():
    text = "x = 1\n" * 50_000
    assert [line_of(text, i * 6) for i in range(0, 50_000, 7)] == list(range(1, 50_001, 7))
