"""A model build in a child process: the caller never imports what the build imports, and a failure
or a crash in the child is one error in the caller, which goes on."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from codeground.components.embedders.child_build import ChildBuildFailed, in_child

PROBE = """
import json, os, signal

def build(*, out, name, count, flags, nothing):
    import probe_heavy_library  # the stand-in for torch: imported by the build only
    (out / "made.json").write_text(json.dumps({
        "pid": os.getpid(), "out_is_path": type(out).__name__, "name": name, "count": count,
        "flags": flags, "nothing": nothing, "heavy": probe_heavy_library.LOADED,
    }))

def fail(*, out):
    (out / "half.txt").write_text("half")
    print("a warning the tracer printed", flush=True)
    raise RuntimeError("disk full\\nwhile saving")

def crash():
    os.kill(os.getpid(), signal.SIGSEGV)
"""


@pytest.fixture
def probe(tmp_path, monkeypatch) -> Path:
    (tmp_path / "probe_build.py").write_text(PROBE)
    (tmp_path / "probe_heavy_library.py").write_text("LOADED = True\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the child inherits it; the caller's path is added
    out = tmp_path / "out"
    out.mkdir()
    return out


def test_the_build_runs_in_another_process_with_its_arguments_and_its_imports_stay_there(probe):
    in_child("probe_build:build", out=probe, name="minilm", count=3, flags=["a", "b"], nothing=None)
    made = json.loads((probe / "made.json").read_text())
    assert made.pop("pid") != os.getpid()
    assert made == {
        "out_is_path": "PosixPath",
        "name": "minilm",
        "count": 3,
        "flags": ["a", "b"],
        "nothing": None,
        "heavy": True,
    }
    assert "probe_heavy_library" not in sys.modules and "probe_build" not in sys.modules


def test_a_build_that_raises_fails_with_its_exception_on_one_line(probe):
    with pytest.raises(ChildBuildFailed) as failed:
        in_child("probe_build:fail", out=probe)
    message = str(failed.value)
    assert message == (
        "probe_build:fail failed in its child process (exit status 1): RuntimeError: disk full while saving"
    )
    with pytest.raises(ChildBuildFailed, match=r"ModuleNotFoundError: No module named 'no_such_probe'$"):
        in_child("no_such_probe:build")


def test_a_build_that_crashes_fails_with_the_signal_and_the_caller_goes_on(probe):
    with pytest.raises(ChildBuildFailed, match=r"^probe_build:crash failed .* \(killed by SIGSEGV\)"):
        in_child("probe_build:crash")
    in_child("probe_build:build", out=probe, name="after", count=0, flags=[], nothing=None)
    assert (probe / "made.json").is_file()
