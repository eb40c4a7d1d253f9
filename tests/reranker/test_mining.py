"""Mining rules: what a question is, what its answer shows, which negatives are hard, and reproducibility."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeground.reranker.heldout import mrr_at_10
from codeground.reranker.mining import docstring_summary, mine_tree
from codeground.reranker.sources import CHECK_TREES, TRAIN_TREES, SourceTree

LIBRARY = {
    "shapes/area.py": '''
def circle_area(radius):
    """Compute the area of a circle from its radius.

    Uses pi times the radius squared.
    """
    return 3.14159 * radius * radius


def square_area(side):
    """Compute the area of a square from the length of its side."""
    return side * side


class Polygon:
    """A closed shape made of straight sides joined at corners."""

    def perimeter(self):
        """Add up the lengths of every side of the polygon."""
        return sum(self.sides)

    def corners(self):
        """Count the corners where two sides of the polygon meet."""
        return len(self.sides)
''',
    "shapes/volume.py": '''
def cube_volume(side):
    """Compute the volume of a cube from the length of its side."""
    return side ** 3


class Box:
    """A container with a lid."""

    def corners(self):
        """Give the eight corner points of the box as tuples."""
        return []

    def perimeter(self):
        """Add up the lengths of every side of the polygon."""
        return 0
''',
    "shapes/tests/test_area.py": '''
def test_circle():
    """Check the area of a circle against a known value."""
''',
    "shapes/guide.md": "# Shapes guide\n\nIntro text.\n\n## Drawing a circle quickly\n\n"
    "Call the circle helper with a radius, then pass the result to the renderer which paints it on "
    "the canvas at the given position.\n",
}


@pytest.fixture()
def tree(tmp_path: Path) -> SourceTree:
    for rel, text in LIBRARY.items():
        path = tmp_path / "lib" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return SourceTree("shapes", tmp_path / "lib" / "shapes")


def test_a_docstring_summary_is_its_first_sentence_and_boilerplate_is_no_question():
    assert (
        docstring_summary("Compute the area of a circle. Uses pi.\n\nMore.")
        == "Compute the area of a circle."
    )
    assert docstring_summary("Return self.") is None
    assert docstring_summary("Deprecated alias of foo kept for old callers.") is None
    assert docstring_summary("Too short.") is None


def _group_of(groups, symbol_line):
    return next(g for g in groups if g.positive.split("\n")[1] == symbol_line)


def test_a_code_question_is_the_docstring_summary_and_its_answer_holds_that_sentence_in_half_the_groups(tree):
    groups = [
        _group_of(mine_tree(tree, seed=seed, max_per_tree=50, negatives=2), "circle_area")
        for seed in range(12)
    ]
    for group in groups:
        assert group.kind == "code" and group.query in {
            "Compute the area of a circle from its radius.",
            "Compute the area of a circle from its radius in area",
            "What does circle_area in area do?",
        }
        assert group.positive.startswith(
            "shapes/area.py\ncircle_area\n"
        )  # path, symbol, text: no record type
        assert "def circle_area(radius):" in group.positive and "return 3.14159" in group.positive
        assert "Uses pi times the radius squared." in group.positive  # the rest of the docstring stays
    cut = [g for g in groups if "Compute the area of a circle" not in g.positive]
    assert 0 < len(cut) < len(groups)  # cut out (a paraphrase to learn) or as indexed (words to match)


def test_hard_negatives_are_never_the_answer_its_symbol_or_a_copy_of_its_docstring(tree):
    groups = mine_tree(tree, seed=0, max_per_tree=50, negatives=3)
    perimeter = _group_of(groups, "Polygon.perimeter")
    for negative in perimeter.negatives:
        assert negative.split("\n")[1] not in {
            "Polygon.perimeter",
            "Box.perimeter",
        }  # Box's: the same docstring
    for g in groups:
        assert g.positive not in g.negatives and len(g.negatives) == 3


def test_a_definition_of_the_same_name_elsewhere_is_a_hard_negative(tree):
    corners = _group_of(mine_tree(tree, seed=0, max_per_tree=50, negatives=2), "Polygon.corners")
    assert "Box.corners" in [n.split("\n")[1] for n in corners.negatives]


def test_code_questions_name_what_they_are_about_in_some_of_their_forms():
    import random

    from codeground.reranker.mining import question_forms

    forms = {
        question_forms("Add up the sides.", "Polygon.perimeter", "a/shapes.py", random.Random(i))
        for i in range(40)
    }
    assert forms == {"Add up the sides.", "Add up the sides in Polygon", "What does perimeter in Polygon do?"}
    assert "What does area in shapes do?" in {
        question_forms("Compute it.", "area", "a/shapes.py", random.Random(i)) for i in range(40)
    }


def test_tests_are_not_mined(tree):
    assert all("test_area" not in g.positive for g in mine_tree(tree, seed=0, max_per_tree=50))


def test_a_docs_question_is_its_heading_and_the_answer_is_the_body_without_it(tree):
    group = next(g for g in mine_tree(tree, seed=0, max_per_tree=50) if g.kind == "docs")
    assert group.query == "Drawing a circle quickly"
    assert "Call the circle helper" in group.positive and "Drawing a circle quickly" not in group.positive


def test_mining_is_reproducible_for_a_seed_and_draws_differently_for_another(tree):
    first = mine_tree(tree, seed=3, max_per_tree=3)
    assert first == mine_tree(tree, seed=3, max_per_tree=3)
    assert len(first) == 3


def test_the_held_out_check_scores_only_bm25s_candidates_and_a_missed_answer_counts_zero_for_both(tree):
    groups = mine_tree(tree, seed=0, max_per_tree=50)
    perfect = mrr_at_10(
        groups, lambda query, texts: [1.0 if t in {g.positive for g in groups} else 0.0 for t in texts]
    )
    missed = sum(g.bm25_rank is None for g in groups)
    assert perfect["answer_retrieved"] == len(groups) - missed
    assert perfect["reranker"] >= perfect["bm25"]
    assert perfect["reranker"] <= perfect["answer_retrieved"] / len(groups) + 1e-4


def test_training_and_check_trees_are_disjoint_and_never_the_benchmark_or_the_scientific_stack():
    assert not set(TRAIN_TREES) & set(CHECK_TREES)
    banned = {"vllm", "numpy", "scipy", "pandas", "sklearn", "sympy", "networkx", "torch"}
    assert not banned & (set(TRAIN_TREES) | set(CHECK_TREES))
