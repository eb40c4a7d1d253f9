"""End to end over the shipped pipelines: a question about what a class's constructor accepts is
answered by the definition in the package's source, not by the tutorials that call it far more
often (``query.yaml``'s ``AskedInterfacePrior``); a how-to question still gets the tutorials."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.app.query.engine import QueryEngine

INTERFACE = "What arguments does the Node constructor accept?"
HOW_TO = "How do I build a Node in the tutorial?"
NODE = '''class Node:
    """Wrap a callable so that it reads and writes named entries of a data dictionary."""

    def __init__(self, callable, input_keys, output_keys, name=None):
        self.callable = callable
        self.input_keys = list(input_keys)
        self.output_keys = list(output_keys)
        self.name = name or "node"
'''


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("interface")
    repo = base / "repo"
    (repo / "src" / "toolkit").mkdir(parents=True)
    (repo / "examples" / "tutorials").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "src" / "toolkit" / "__init__.py").write_text("")
    (repo / "src" / "toolkit" / "system.py").write_text(NODE)
    for i in (1, 2, 3):  # tutorials that repeat the class's name and the question's words
        (repo / "examples" / "tutorials" / f"part_{i}.py").write_text(
            f'"""Tutorial part {i}: building a Node and its arguments step by step."""\n'
            "from toolkit.system import Node\n\n"
            "# The Node constructor takes the callable, then the input keys, then the output keys.\n"
            'node_a = Node(lambda x: (x,), ["x"], ["y"], name="identity")\n'
            'node_b = Node(lambda y: (2 * y,), ["y"], ["z"])\n'
            "# Which arguments does a Node accept? Pass the callable and the keys as arguments.\n"
            'nodes = [Node(f, ["x"], ["y"]) for f in (abs, round)]\n'
        )
    (repo / "docs" / "guide.md").write_text("# Guide\n\n## Installing\n\nInstall the toolkit with pip.\n")
    run_index(repo, base / "idx", DEFAULT_INDEX_PIPELINE)
    return base / "idx"


def _shown(index_dir: Path, pipeline: Path, question: str) -> list[tuple[str, str]]:
    docs = QueryEngine(index_dir, pipeline).search(question, k=5).documents
    return [(d.meta["file_path"], d.meta.get("symbol")) for d in docs]


@pytest.fixture(scope="module")
def without_rule(index_dir, tmp_path_factory) -> Path:
    overlay = tmp_path_factory.mktemp("off") / "off.yaml"
    overlay.write_text(
        yaml.safe_dump(
            {
                "extends": str(PIPELINES_DIR / "hybrid_norerank.yaml"),
                # the file ranking does the same for files (examples count less, one record
                # per file first): off too, so the record order is the rule's alone
                "set": {
                    "components.asked_interface.init_parameters.usage_factor": 1.0,
                    "components.file_roles.init_parameters.examples": 1.0,
                    "components.coherence.init_parameters.boost": 0.0,
                    "components.file_spread.init_parameters.decay": 1.0,
                },
            }
        )
    )
    return overlay


def test_without_the_rule_the_tutorials_that_call_the_class_come_before_its_definition(
    index_dir, without_rule
):
    shown = _shown(index_dir, without_rule, INTERFACE)
    assert shown[0][0].startswith("examples/tutorials/")
    tutorials = [i for i, (path, _) in enumerate(shown) if path.startswith("examples/")]
    assert shown.index(("src/toolkit/system.py", "Node.__init__")) > min(tutorials)


@pytest.mark.parametrize("name", ["query.yaml", "hybrid_norerank.yaml"])
def test_an_interface_question_shows_the_definition_before_every_tutorial_that_calls_it(index_dir, name):
    shown = _shown(index_dir, PIPELINES_DIR / name, INTERFACE)
    tutorials = [i for i, (path, _) in enumerate(shown) if path.startswith("examples/")]
    # relative places only: the static vectors, distilled on each machine, may move the docs page
    assert tutorials and shown.index(("src/toolkit/system.py", "Node.__init__")) < min(tutorials), shown
    assert not shown[0][0].startswith("examples/")


@pytest.mark.parametrize("name", ["query.yaml", "hybrid_norerank.yaml"])
def test_a_how_to_question_still_gets_the_tutorials_first(index_dir, name, without_rule):
    shown = _shown(index_dir, PIPELINES_DIR / name, HOW_TO)
    assert shown[:3] == _shown(index_dir, without_rule, HOW_TO)[:3]
    assert all(path.startswith("examples/tutorials/") for path, _ in shown[:3])
