"""The figures in docs/reliability.md are the sizes of this suite's tables, not numbers typed by
hand: a table that grows or shrinks without docs/reliability.md following fails here."""

from __future__ import annotations

import re

from tests.conftest import PROJECT_ROOT
from tests.reliability import test_bad_repository, test_bad_user_input, test_faults, test_load, test_security


def _row(label: str) -> str:
    page = (PROJECT_ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    section = page.split("# Reliability and security", 1)[1].split("\n## ", 1)[0]
    return next(line for line in section.splitlines() if line.startswith(f"| {label} |"))


def _bold_numbers(label: str) -> list[int]:
    return [int(n) for n in re.findall(r"\*\*(\d+)\*\*", _row(label))]


def test_reliability_doc_counts_match_the_reliability_tables():
    bad_repository = len(test_bad_repository.BAD_FILES) + 1  # + the empty repository
    # + the reranker, + the file list (files.json), + SIGKILL
    faults = len(test_faults.LLM_FAULTS) + 1 + len(test_faults.STORE_FAULTS) + 1 + 1
    assert _bold_numbers("bad repository inputs") == [bad_repository]
    assert _bold_numbers("bad user inputs") == [len(test_bad_user_input.BAD_INPUTS)]
    assert _bold_numbers("faults injected") == [faults]
    assert _bold_numbers("concurrent chat sessions") == [test_load.SESSIONS]
    assert _bold_numbers("security") == [
        len(test_security.SECRET_VALUES),
        len(test_security.CITATION_QUESTIONS),
    ]
    assert f"{len(test_security.SECRET_FILES)} secret files" in _row("security")
    assert f"{len(test_security.INJECTION_MARKERS)} injection markers" in _row("security")
