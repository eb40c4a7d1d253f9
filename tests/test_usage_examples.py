"""Every usage example in a docstring of codeground runs as written (from the project root,
offline, without an LLM server: the examples show what a user sees then)."""

from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def _examples() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "codeground").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef | ast.FunctionDef))]:
            doc = ast.get_docstring(node)
            for block in FENCE.findall(doc or ""):
                found.append((f"{path.relative_to(ROOT)}:{getattr(node, 'name', 'module')}", block))
    return found


EXAMPLES = _examples()


def test_every_component_module_has_a_usage_example():
    documented = {name.split(":")[0] for name, _ in EXAMPLES}
    components = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "codeground" / "components").rglob("*.py")
        if p.name != "__init__.py" and "@component" in p.read_text(encoding="utf-8")
    }
    assert components <= documented, sorted(components - documented)


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_usage_example_runs_as_written(where, code, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    # the examples' scratch folders (``tempfile.mkdtemp()``, as a user would write them) go under
    # pytest's own, which it prunes; in the system's they were left behind, nine per run
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens: the no-server path
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    exec(compile(code, where, "exec"), {"__name__": "__example__"})
