"""query_named_first.yaml: a method the question names in full is the first source."""

from __future__ import annotations

from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine

QUESTION = "Which arguments does Trainer.fit take when called from a training script?"


def _symbols(index_dir, yaml_name):
    result = QueryEngine(index_dir, PIPELINES_DIR / yaml_name).search(QUESTION, k=5)
    return [d.meta["symbol"] for d in result.documents], [d.score for d in result.documents]


def test_a_named_method_comes_first_where_the_default_pipeline_puts_it_lower(indexed_sample):
    default, _ = _symbols(indexed_sample[1], "query.yaml")
    named_first, scores = _symbols(indexed_sample[1], "query_named_first.yaml")
    assert default[0] != "Trainer.fit" and "Trainer.fit" in default  # fusion ranks a guide first
    assert named_first[0] == "Trainer.fit"
    assert scores == sorted(scores, reverse=True)
