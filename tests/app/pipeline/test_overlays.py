"""Variants are overlays on query.yaml / index.yaml: resolved into full Haystack pipeline dicts that
round-trip, each rule of the overlay format holding, and the contract text written once."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from codeground.app.cli import cli
from codeground.app.errors import CodegroundError
from codeground.app.pipeline.loader import PIPELINES_DIR, build_pipeline, read_pipeline_dict, resolve
from codeground.app.pipeline.overlay import OverlayError, resolve_overlay

SHIPPED = sorted(PIPELINES_DIR.glob("*.yaml"))
BASES = {"query.yaml", "index.yaml"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_variant_is_an_overlay_of_a_base_and_resolves_to_a_pipeline_that_round_trips(path):
    raw = yaml.safe_load(path.read_text())
    assert ("extends" in raw) == (path.name not in BASES)
    data = read_pipeline_dict(path)
    if any("llama_cpp" in str(s.get("type")) for s in data["components"].values()) or any(
        "llama_cpp" in str(s) for s in data["components"].values()
    ):
        pytest.importorskip("haystack_integrations.components.generators.llama_cpp")
    pipeline = build_pipeline(resolve(data, index_dir="/tmp/codeground-overlay-test"))
    again = type(pipeline).from_dict(pipeline.to_dict(), allowed_modules=["codeground.components.*"])
    assert again.to_dict() == pipeline.to_dict()
    assert set(again.graph.nodes) == set(data["components"])


def test_the_grounding_contract_is_written_once():
    texts = [p.read_text() for p in SHIPPED]
    assert sum("Grounding contract" in t for t in texts) == 1
    contract = read_pipeline_dict(PIPELINES_DIR / "query.yaml")["components"]["prompt"]
    for path in SHIPPED:
        data = read_pipeline_dict(path)
        if "prompt" in data["components"]:
            assert data["components"]["prompt"] == contract, path.name


BASE = {
    "metadata": {"roles": {"documents": "b"}, "walker": {"ignore": ["x"]}},
    "components": {
        "a": {"type": "x.A", "init_parameters": {"k": 1, "nested": {"m": 1, "n": 2}}},
        "b": {"type": "x.B", "init_parameters": {}},
        "c": {"type": "x.C", "init_parameters": {}},
    },
    "connections": [
        {"sender": "a.out", "receiver": "b.in"},
        {"sender": "b.out", "receiver": "c.in"},
    ],
}


def _resolve(overlay: dict) -> dict:
    return resolve_overlay({"extends": "base.yaml", **overlay}, load_base=lambda name: BASE)


def test_remove_drops_the_component_and_every_connection_touching_it():
    out = _resolve({"remove": ["b"], "connections": [{"sender": "a.out", "receiver": "c.in"}]})
    assert list(out["components"]) == ["a", "c"]
    assert out["connections"] == [{"sender": "a.out", "receiver": "c.in"}]
    assert "b" in BASE["components"]  # the base is not changed


def test_components_replace_whole_in_place_or_are_added_at_the_end():
    out = _resolve({"components": {"a": {"type": "x.Z", "init_parameters": {}}, "d": {"type": "x.D"}}})
    assert list(out["components"]) == ["a", "b", "c", "d"]
    assert out["components"]["a"] == {"type": "x.Z", "init_parameters": {}}


def test_set_replaces_one_value_at_a_dotted_path_and_keeps_its_siblings():
    out = _resolve(
        {"set": {"components.a.init_parameters.nested.m": 5, "components.a.init_parameters.new": [1]}}
    )
    assert out["components"]["a"]["init_parameters"] == {"k": 1, "nested": {"m": 5, "n": 2}, "new": [1]}


def test_metadata_merges_by_mapping_and_null_removes_a_key():
    out = _resolve({"metadata": {"roles": {"documents": "c", "top_k": "c"}, "walker": None}})
    assert out["metadata"] == {"roles": {"documents": "c", "top_k": "c"}}


@pytest.mark.parametrize(
    ("overlay", "message"),
    [
        ({"remove": ["nope"]}, "cannot remove 'nope'"),
        ({"set": {"components.nope.init_parameters.k": 1}}, "'components.nope' is not in the base"),
        ({"connections": [{"sender": "a.out", "receiver": "zz.in"}]}, "names no component 'zz'"),
        (
            {"remove": ["a"], "connections": [{"sender": "a.out", "receiver": "c.in"}]},
            "names no component 'a'",
        ),
        ({"replace": {}}, "unknown overlay key"),
    ],
)
def test_an_overlay_that_does_not_fit_its_base_is_one_clear_error(overlay, message):
    with pytest.raises(OverlayError, match=message):
        _resolve(overlay)


def test_overlays_chain_and_a_cycle_is_refused(tmp_path: Path):
    (tmp_path / "base.yaml").write_text((PIPELINES_DIR / "query.yaml").read_text())
    (tmp_path / "mid.yaml").write_text(
        "extends: base.yaml\nset:\n  components.fusion.init_parameters.k: 20\n"
    )
    (tmp_path / "top.yaml").write_text(
        "extends: mid.yaml\nremove: [ranker, floor]\n"
        "connections:\n- {sender: merge.documents, receiver: reseat.documents}\n"
    )
    data = read_pipeline_dict(tmp_path / "top.yaml")
    assert data["components"]["fusion"]["init_parameters"]["k"] == 20 and "ranker" not in data["components"]
    (tmp_path / "a.yaml").write_text("extends: b.yaml\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(CodegroundError, match="cycle"):
        read_pipeline_dict(tmp_path / "a.yaml")
    (tmp_path / "lost.yaml").write_text("extends: missing.yaml\n")
    with pytest.raises(CodegroundError, match="pipeline file not found"):
        read_pipeline_dict(tmp_path / "lost.yaml")


def test_a_yaml_naming_the_old_components_package_loads_with_one_notice(tmp_path: Path, capsys):
    old = (
        (PIPELINES_DIR / "query.yaml")
        .read_text()
        .replace("type: codeground.components.", "type: components.")
    )
    path = tmp_path / "mine.yaml"
    path.write_text(old)
    data = read_pipeline_dict(path)
    assert data == read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    read_pipeline_dict(path)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'components.'" in err[0] and "codeground.components." in err[0]


def test_pipeline_show_prints_the_resolved_pipeline_and_its_graph():
    result = CliRunner().invoke(cli, ["pipeline", "show", "hybrid_norerank"])
    assert result.exit_code == 0, result.output
    body = result.output.split("```mermaid")[0].split("\n", 1)[1]
    assert yaml.safe_load(body) == read_pipeline_dict(PIPELINES_DIR / "hybrid_norerank.yaml")
    assert 'merge -- "documents → documents" --> reseat' in result.output
    graph = CliRunner().invoke(cli, ["pipeline", "show", "bm25.yaml", "--graph"]).output
    assert graph.startswith("flowchart TD") and "ranker" not in graph
    bad = CliRunner().invoke(cli, ["pipeline", "show", "nope"])
    assert bad.exit_code == 1 and "pipeline file not found: nope (a shipped one is named" in bad.output


def test_listing_the_pipelines_parses_each_yaml_text_once_and_every_caller_gets_its_own_copy():
    """The chat lists the pipelines before serving its page: that read each file and its base 167
    times with the pure-Python parser (1.8 s of a 4.4 s start)."""
    from codeground.app.pipeline.loader import _parse_yaml
    from codeground.app.serve.ui import picker_pipelines

    _parse_yaml.cache_clear()
    listed = picker_pipelines()
    assert listed[0].name == "query.yaml"
    assert _parse_yaml.cache_info().misses <= len(SHIPPED)
    first = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    first["components"].clear()
    assert read_pipeline_dict(PIPELINES_DIR / "query.yaml")["components"]


def test_a_changed_yaml_is_read_anew_in_the_same_process(tmp_path: Path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: base.yaml\nset:\n  components.fusion.init_parameters.k: 20\n")
    (tmp_path / "base.yaml").write_text((PIPELINES_DIR / "query.yaml").read_text())
    assert read_pipeline_dict(path)["components"]["fusion"]["init_parameters"]["k"] == 20
    path.write_text("extends: base.yaml\nset:\n  components.fusion.init_parameters.k: 30\n")
    assert read_pipeline_dict(path)["components"]["fusion"]["init_parameters"]["k"] == 30


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_libyaml_and_the_pure_python_loader_read_every_shipped_yaml_alike(path):
    text = path.read_text()
    assert yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == yaml.safe_load(text)


def test_every_pipeline_option_takes_a_shipped_name_from_any_folder(tmp_path, monkeypatch):
    """``--pipeline bm25`` (or ``bm25.yaml``, or ``pipelines/bm25.yaml`` as docs/cli.md writes it from
    codeground's checkout) names the shipped YAML from any folder; a file at the given path wins."""
    from codeground.app.pipeline.loader import pipeline_file

    monkeypatch.chdir(tmp_path)
    shipped = PIPELINES_DIR / "bm25.yaml"
    for given in ("bm25", "bm25.yaml", "pipelines/bm25.yaml"):
        assert pipeline_file(given) == shipped, given
    (tmp_path / "pipelines").mkdir()
    own = tmp_path / "pipelines" / "bm25.yaml"
    own.write_text("components: {}\n")
    assert pipeline_file("pipelines/bm25.yaml") == Path("pipelines/bm25.yaml")
    for missing in ("nope", "elsewhere/bm25.yaml", str(tmp_path / "bm25.yaml")):
        assert pipeline_file(missing) == Path(missing), missing


def test_every_pipeline_option_of_every_command_resolves_shipped_names():
    """Each ``--pipeline`` / ``--index-pipeline`` the CLI declares goes through the one resolution
    (``cli.root._pipeline_files``): a command added without it would take ``bm25`` as a missing file."""
    import typer

    def options(command, path: str):
        if hasattr(command, "commands"):  # a group (Typer's own click)
            for name, sub in command.commands.items():
                yield from options(sub, f"{path} {name}")
        for param in command.params:
            if {"--pipeline", "--index-pipeline"} & set(param.opts):
                yield f"{path} {param.opts[0]}", param

    found = dict(options(typer.main.get_command(cli), "codeground"))
    assert len(found) >= 14
    assert [where for where, param in found.items() if param.callback is None] == []
    shipped = PIPELINES_DIR / "bm25.yaml"
    for where, param in found.items():  # each the same resolution (Typer calls it with ctx, param, value)
        value = [Path("bm25")] if param.multiple else Path("bm25")
        assert param.callback(None, param, value) == ([shipped] if param.multiple else shipped), where


def test_a_users_own_overlay_anywhere_extends_a_shipped_pipeline_by_name(tmp_path):
    """``extends: hybrid_norerank`` in a YAML of the user's own folder is the shipped base (it had
    been looked for only next to the overlay); a file of that name next to it still wins."""
    mine = tmp_path / "mine.yaml"
    mine.write_text("extends: hybrid_norerank\nset:\n  components.fusion.init_parameters.k: 20\n")
    data = read_pipeline_dict(mine)
    expected = read_pipeline_dict(PIPELINES_DIR / "hybrid_norerank.yaml")
    expected["components"]["fusion"]["init_parameters"]["k"] = 20
    assert data == expected
    (tmp_path / "hybrid_norerank.yaml").write_text("extends: bm25.yaml\n")
    mine.write_text("extends: hybrid_norerank\n")
    assert (
        read_pipeline_dict(mine)["components"].keys()
        == read_pipeline_dict(PIPELINES_DIR / "bm25.yaml")["components"].keys()
    )
    # a user's own query.yaml extending `query` means the shipped one, not itself
    own_query = tmp_path / "query.yaml"
    own_query.write_text("extends: query\nset:\n  components.fusion.init_parameters.k: 20\n")
    assert read_pipeline_dict(own_query)["components"]["fusion"]["init_parameters"]["k"] == 20
    mine.write_text("extends: nowhere.yaml\n")
    with pytest.raises(CodegroundError, match=r"pipeline file not found: .*nowhere.yaml"):
        read_pipeline_dict(mine)


def test_a_pipeline_name_means_the_users_file_here_first_and_a_shipped_file_name_gets_a_note(
    tmp_path, monkeypatch, capsys
):
    """``--pipeline bm25`` with a ``bm25.yaml`` in the working folder is that file (the rule
    ``extends`` follows too); ``bm25.yaml`` that is not here is the shipped one with a note on
    stderr, as the user may have meant a file of theirs elsewhere; a bare name or docs/cli.md's
    ``pipelines/bm25.yaml`` gets none."""
    from codeground.app.cli.root import _pipeline_files

    monkeypatch.chdir(tmp_path)
    shipped = PIPELINES_DIR / "bm25.yaml"
    assert _pipeline_files(Path("bm25")) == shipped
    assert _pipeline_files(Path("pipelines/bm25.yaml")) == shipped
    assert capsys.readouterr().err == ""
    assert _pipeline_files([Path("bm25.yaml")]) == [shipped]
    assert capsys.readouterr().err == f"note: no bm25.yaml here; using codeground's shipped {shipped}\n"
    (tmp_path / "bm25.yaml").write_text("extends: query\n")
    assert _pipeline_files(Path("bm25")) == Path("bm25.yaml")
