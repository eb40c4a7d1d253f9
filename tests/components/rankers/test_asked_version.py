"""Tests for AskedVersionPrior: a question naming a major version puts the candidates under that
version's ``vN/`` folder first, where the repository keeps versions side by side; nothing else moves."""

from __future__ import annotations

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.components.rankers.asked_version import AskedVersionPrior, asked_versions, version_folders


def _docs(*paths: str) -> list[Document]:
    return [
        Document(id=p, content="...", meta={"file_path": p}, score=2.0 - n * 0.1) for n, p in enumerate(paths)
    ]


def _ids(question: str, docs: list[Document], boost: float = 1.5) -> list[str]:
    return [d.id for d in AskedVersionPrior(boost=boost).run(query=question, documents=docs)["documents"]]


ZOD = ("src/v4/core/errors.ts", "README.md", "src/v4/classic/errors.ts", "src/v3/ZodError.ts")


def test_a_question_naming_a_version_puts_that_versions_copy_above_the_other_versions():
    assert _ids("In Zod 3, what is the priority of error maps?", _docs(*ZOD)) == [
        "src/v3/ZodError.ts",  # 1.7 x 1.5
        "README.md",  # outside version folders: kept
        "src/v4/core/errors.ts",  # 2.0 / 1.5
        "src/v4/classic/errors.ts",
    ]
    assert _ids("Which methods of the v4 ZodError are deprecated?", _docs(*reversed(ZOD)))[0].startswith(
        "src/v4/"
    )


def test_a_version_no_candidate_lies_under_changes_nothing():
    # vLLM has v1/ but no v3/: "Llama 3" asks nothing of it
    docs = _docs("vllm/v1/engine/core.py", "vllm/model_executor/models/llama.py", "docs/models/llama.md")
    assert _ids("Which Llama 3 models does vLLM support?", docs) == [d.id for d in docs]


def test_a_question_naming_no_version_and_a_boost_of_one_change_nothing():
    docs = _docs(*ZOD)
    assert _ids("What is the priority of error maps?", docs) == list(ZOD)
    assert _ids("In Zod 3, what is the priority of error maps?", docs, boost=1.0) == list(ZOD)
    before = [(d.id, d.score) for d in docs]
    _ids("In Zod 3, what is the priority of error maps?", docs)
    assert [(d.id, d.score) for d in docs] == before  # inputs are not changed


@pytest.mark.parametrize(
    ("question", "versions"),
    [
        ("In Zod 3, what does refine take?", {"v3"}),
        ("Is it still in Zod 4.x?", {"v4"}),
        ("the v3 API", {"v3"}),
        ("How does the vLLM V1 engine schedule?", {"v1"}),
        ("since version 2", {"v2"}),
        ("What models does vLLM support for GPT-2?", set()),  # a hyphenated model name, not a version
        ("more than 16 pairs", set()),  # a lowercase word and a number is a count
    ],
)
def test_the_versions_a_question_names(question, versions):
    assert asked_versions(question) == versions


def test_only_folders_count_as_version_folders():
    assert version_folders("src/v4/core/api.ts") == {"v4"}
    assert version_folders("vllm/v1/engine/core.py") == {"v1"}
    assert version_folders("vllm/v1.py") == set() and version_folders("docs/v2_notes.md") == set()


def test_a_boost_that_is_not_positive_is_refused_and_the_parameters_round_trip():
    with pytest.raises(ValueError, match="boost must be positive"):
        AskedVersionPrior(boost=0)
    data = component_to_dict(AskedVersionPrior(boost=2.0), "asked_version")
    assert data["init_parameters"] == {"boost": 2.0}
    assert (
        component_to_dict(component_from_dict(AskedVersionPrior, data, "asked_version"), "asked_version")
        == data
    )


def test_query_yaml_applies_the_rule_after_the_default_rule_and_before_the_interface_rule():
    data = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    edges = {(c["sender"], c["receiver"]) for c in data["connections"]}
    assert {
        ("asked_default.documents", "asked_version.documents"),
        ("rewriter.query", "asked_version.query"),
        ("asked_version.documents", "asked_interface.documents"),
    } <= edges
