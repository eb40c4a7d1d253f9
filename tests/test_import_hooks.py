"""around_import: code around one module's first execution, nothing else changed."""

from __future__ import annotations

import contextlib
import inspect
import sys

from codeground.import_hooks import around_import


def _fresh(name: str) -> None:
    sys.modules.pop(name, None)


def test_the_context_sees_the_module_before_and_after_its_code_runs():
    seen = []

    @contextlib.contextmanager
    def around(module):
        seen.append(hasattr(module, "rgb_to_hsv"))
        yield
        seen.append(hasattr(module, "rgb_to_hsv"))

    _fresh("colorsys")
    around_import("colorsys", around)
    import colorsys

    assert seen == [False, True]
    assert "def rgb_to_hsv" in inspect.getsource(colorsys)  # the file's own loader still answers


def test_only_the_first_import_runs_inside_the_context():
    calls = []

    @contextlib.contextmanager
    def around(module):
        calls.append(module.__name__)
        yield

    _fresh("colorsys")
    around_import("colorsys", around)
    around_import("colorsys", around)  # idempotent while pending
    import colorsys  # noqa: F401

    _fresh("colorsys")
    import colorsys  # noqa: F401,F811

    assert calls == ["colorsys"]


def test_an_imported_module_is_left_alone():
    import json

    @contextlib.contextmanager
    def around(module):
        raise AssertionError("must not run")
        yield

    around_import("json", around)
    assert sys.modules["json"] is json


def test_a_module_that_does_not_exist_still_fails_as_usual():
    @contextlib.contextmanager
    def around(module):
        yield

    around_import("no_such_module_xyz", around)
    try:
        import no_such_module_xyz  # noqa: F401
    except ModuleNotFoundError as exc:
        assert exc.name == "no_such_module_xyz"
    else:
        raise AssertionError("imported a module that does not exist")
