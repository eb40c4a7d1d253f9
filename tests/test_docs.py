"""The README is the front door and the pages under docs/ hold the rest: the README stays short,
and every relative link in them leads to a file that exists and, with ``#anchor``, to one of its
headings (GitHub's slugs; headings inside fenced code are not headings)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

README_MAX_LINES = 250
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.lstrip().startswith("```"):
            inside = not inside
        elif not inside:
            yield number, line


def _anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose(path):
        if m := re.match(r"#{1,6} (.*)", line):
            slug = _slug(m.group(1))
            found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")  # a repeat gets -1, -2, …
            seen[slug] = seen.get(slug, 0) + 1
    return found


def test_the_readme_is_a_front_door_not_a_lab_notebook():
    lines = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; measurements go to docs/measurements/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_relative_link_leads_to_a_file_and_a_heading_that_exist(page):
    broken = []
    for number, line in _prose(page):
        for m in LINK.finditer(re.sub(r"`+[^`]*`+", "", line)):  # inline code holds no links
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = page if not path else (page.parent / path).resolve()
            if not target or not dest.exists():
                broken.append(f"{number}: {m.group(0)} (no such file)")
            elif anchor and (dest.suffix != ".md" or anchor not in _anchors(dest)):
                broken.append(f"{number}: {m.group(0)} (no such heading)")
    assert not broken, "\n".join(broken)
