"""chromadb's package is imported with ``overrides``' decorators only marking its methods; the checks
``EnforceOverrides`` makes stay, docstrings are inherited as before, and the real decorators are back
afterwards (codeground.chromadb_start)."""

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


def test_chromadb_is_marked_by_codeground_keeps_its_docstrings_and_gets_the_real_decorators_back():
    """Each line: what decorated chromadb's client (codeground's marker, not ``overrides``' check),
    the mark ``EnforceOverrides`` reads, how many marked methods lack a docstring (the same 3 of 124
    as without codeground: the rest take their base's), and that the real decorators are back."""
    script = textwrap.dedent("""
        import sys
        import codeground, chromadb, overrides
        from chromadb.api.client import Client
        from chromadb.config import System
        real = sys.modules['overrides.overrides']
        print(sys.modules['chromadb.api.client'].override.__module__)
        print(Client.reset.__override__, issubclass(System, overrides.EnforceOverrides))
        marked = [
            getattr(v, '__func__', None) or getattr(v, 'fget', None) or v
            for name, module in list(sys.modules.items()) if name.startswith('chromadb')
            for cls in list(vars(module).values()) if isinstance(cls, type) and cls.__module__ == name
            for v in vars(cls).values()
        ]
        marked = [f for f in marked if getattr(f, '__override__', False)]
        print(len(marked) > 100, sum(not f.__doc__ for f in marked) <= 3, bool(Client.reset.__doc__))
        print(overrides.override is real.override, overrides.overrides is real.overrides)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == [
        "codeground.chromadb_start", "True True", "True True True", "True True"
    ]


@pytest.fixture
def scratch_module(tmp_path, monkeypatch):
    """Writes a module executed with ``marks_only``, imports it, and removes it afterwards."""
    made: list[str] = []
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name: str, body: str):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
        sys.modules.pop(name, None)
        made.append(name)
        around_import(name, marks_only)
        return __import__(name)

    yield make
    for name in made:
        sys.modules.pop(name, None)


BASE = """
    from overrides import EnforceOverrides, override, overrides

    class Base(EnforceOverrides):
        def count(self, where: str) -> int:
            "How many."
            return 0
"""


def test_a_marked_override_is_kept_unchecked_and_takes_its_base_docstring(scratch_module):
    module = scratch_module("cg_marked_ok", BASE + """
    class Marked(Base):
        @override
        def count(self, where, extra):  # a signature the full check refuses
            return 1

    class WithOptions(Base):
        @overrides(check_signature=True)
        def count(self, where: str) -> int:
            "Counted my way."
            return 2
    """)
    assert module.Marked().count("a", "b") == 1 and module.WithOptions().count("a") == 2
    assert module.Marked.count.__override__ and module.WithOptions.count.__override__
    assert module.Marked.count.__doc__ == "How many."  # inherited, as the real decorator does
    assert module.WithOptions.count.__doc__ == "Counted my way."
    assert overrides.override is REAL_OVERRIDE  # the real decorator is back


def test_an_override_without_the_mark_is_still_refused(scratch_module):
    with pytest.raises(TypeError, match="does not have @override decorator"):
        scratch_module("cg_unmarked", BASE + """
    class Unmarked(Base):
        def count(self, where: str) -> int:
            return 3
    """)
    assert overrides.override is REAL_OVERRIDE


class _Base(overrides.EnforceOverrides):  # at module level: `overrides` finds bases in the globals
    def count(self, where: str) -> int:
        return 0


def test_outside_the_package_signatures_are_still_checked():
    class Right(_Base):
        @overrides.override
        def count(self, where: str) -> int:
            return 1

    with pytest.raises(TypeError, match="return type"):

        class Wrong(_Base):
            @overrides.override
            def count(self, where, extra):
                return 1

    assert Right().count("a") == 1
