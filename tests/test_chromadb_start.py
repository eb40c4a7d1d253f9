"""chromadb's package is imported with ``overrides``' decorators only marking its methods; the checks
``EnforceOverrides`` makes stay, and the real decorators are back afterwards (codeground.chromadb_start)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import overrides
import pytest

from codeground.chromadb_start import marks_only
from codeground.import_hooks import around_import
from tests.conftest import PROJECT_ROOT

REAL_OVERRIDE = sys.modules["overrides.overrides"].override


def test_chromadb_after_codeground_has_its_overrides_marked_and_the_real_decorators_back():
    script = (
        "import codeground, chromadb, overrides, sys\n"
        "from chromadb.api.client import Client\n"
        "from chromadb.config import System\n"
        "real = sys.modules['overrides.overrides']\n"
        "print(Client.heartbeat.__override__, overrides.override is real.override,\n"
        "      overrides.overrides is real.overrides, issubclass(System, overrides.EnforceOverrides))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True True True True"


def _module(tmp_path, monkeypatch, name: str, body: str):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    around_import(name, marks_only)
    return __import__(name)


BASE = """
    from overrides import EnforceOverrides, override, overrides

    class Base(EnforceOverrides):
        def count(self, where: str) -> int:
            "How many."
            return 0
"""


def test_a_marked_override_is_kept_unchecked_while_the_package_executes(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "cg_marked_ok", BASE + """
    class Marked(Base):
        @override
        def count(self, where, extra):  # a signature the full check refuses
            return 1

    class WithOptions(Base):
        @overrides(check_signature=True)
        def count(self, where: str) -> int:
            return 2
    """)
    assert module.Marked().count("a", "b") == 1 and module.WithOptions().count("a") == 2
    assert module.Marked.count.__override__ and module.WithOptions.count.__override__
    assert overrides.override is REAL_OVERRIDE  # the real decorator is back


def test_an_override_without_the_mark_is_still_refused(tmp_path, monkeypatch):
    with pytest.raises(TypeError, match="does not have @override decorator"):
        _module(tmp_path, monkeypatch, "cg_unmarked", BASE + """
    class Unmarked(Base):
        def count(self, where: str) -> int:
            return 3
    """)
    assert overrides.override is REAL_OVERRIDE


def test_outside_the_package_the_full_check_still_runs():
    with pytest.raises(TypeError):

        class Base(overrides.EnforceOverrides):
            def count(self, where: str) -> int:
                return 0

        class Wrong(Base):
            @overrides.override
            def count(self, where, extra):
                return 1
