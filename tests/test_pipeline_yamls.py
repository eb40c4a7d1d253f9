"""Every pipeline YAML shipped in pipelines/ loads, dumps and loads again to the same pipeline."""

from __future__ import annotations

import pytest

from codeground.app.pipeline.loader import ALLOWED_MODULES, PIPELINES_DIR, read_pipeline_dict, resolve

YAMLS = sorted(PIPELINES_DIR.glob("*.yaml"))


def normalized(pipeline) -> dict:
    data = pipeline.to_dict()
    data["connections"] = sorted((c["sender"], c["receiver"]) for c in data["connections"])
    return data


@pytest.mark.parametrize("path", YAMLS, ids=[p.name for p in YAMLS])
def test_pipeline_yaml_round_trips(path, tmp_path):
    from haystack import Pipeline

    if "llama_cpp" in path.read_text():
        pytest.importorskip("haystack_integrations.components.generators.llama_cpp", reason="optional extra")
    data = resolve(read_pipeline_dict(path), index_dir=tmp_path)
    first = Pipeline.from_dict(data, allowed_modules=ALLOWED_MODULES)
    second = Pipeline.loads(first.dumps(), allowed_modules=ALLOWED_MODULES)
    assert normalized(second) == normalized(first)
    third = Pipeline.loads(second.dumps(), allowed_modules=ALLOWED_MODULES)
    assert normalized(third) == normalized(first)


def test_yaml_components_outside_components_package_are_refused(tmp_path):
    from codeground.app.errors import CodegroundError
    from codeground.app.pipeline.loader import build_pipeline

    data = {"components": {"x": {"type": "os.system", "init_parameters": {}}}, "connections": []}
    with pytest.raises(CodegroundError, match="cannot build pipeline"):
        build_pipeline(data)


def test_variants_needing_a_missing_optional_extra_are_not_offered(tmp_path, monkeypatch):
    import yaml

    import codeground.app.bench.eval_runner as runner
    from codeground.app.pipeline.loader import installed, read_pipeline_dict

    bm25 = yaml.safe_dump(read_pipeline_dict(PIPELINES_DIR / "bm25.yaml"))  # resolved: no base needed
    extra = tmp_path / "query_extra.yaml"
    extra.write_text(
        bm25.replace(
            "type: codeground.components.retrievers.bm25.BM25Retriever",
            "type: haystack_integrations.components.retrievers.not_installed.Missing",
        )
    )
    assert not installed(extra) and installed(PIPELINES_DIR / "query.yaml")
    monkeypatch.setattr(runner, "PIPELINES_DIR", tmp_path)
    (tmp_path / "bm25.yaml").write_text(bm25)
    assert [p.name for p in runner.default_variants()] == ["bm25.yaml"]
