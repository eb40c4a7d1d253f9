"""Tests for the layout rule: notebooks and the folders that show how to use a library are usage
areas; the library's own source, its docs and its tests are not."""

from __future__ import annotations

import pytest

from codeground.components.layout import in_usage_area


@pytest.mark.parametrize(
    "path",
    [
        "examples/control/Part_1_stabilize.py",
        "examples/ODEs/Part_3_tutorial.ipynb",
        "docs/source/tutorials/quickstart.md",
        "Tutorials/intro.py",  # any case
        "notebooks/demo.ipynb",
        "demo/app.py",
        "samples/basic/main.go",
        "scripts/train.sh",
        "cookbook/rag.md",
        "src/pkg/system.ipynb",  # a notebook is a usage area wherever it lies
        "examples\\windows\\path.py",
    ],
)
def test_notebooks_and_usage_folders_at_any_depth_are_usage_areas(path):
    assert in_usage_area(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/neuromancer/system.py",
        "vllm/entrypoints/llm.py",
        "docs/usage/faq.md",
        "tests/test_system.py",
        "examples.py",  # a file named so is not a folder of examples
        "src/example_utils.py",
        "",
    ],
)
def test_the_librarys_own_source_docs_and_tests_are_not(path):
    assert not in_usage_area(path)
