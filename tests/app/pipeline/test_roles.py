"""Roles are declared in the YAML's metadata; the application names no component itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from codeground.app.errors import CodegroundError
from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict
from codeground.app.pipeline.roles import IndexRoles, QueryRoles, RoleError
from codeground.app.query.engine import QueryEngine
from tests.conftest import make_sample_repo

APP = Path(__file__).resolve().parents[3] / "codeground" / "app"


def _renamed(data: dict, prefix: str = "renamed_") -> dict:
    """``data`` with every component renamed, connections and roles following."""

    def name(ref: str) -> str:
        return prefix + ref

    out = dict(data)
    out["components"] = {name(k): v for k, v in data["components"].items()}
    out["connections"] = [
        {"sender": name(c["sender"]), "receiver": name(c["receiver"])} for c in data["connections"]
    ]
    roles = {
        role: [name(v) for v in value] if isinstance(value, list) else name(value)
        for role, value in data["metadata"]["roles"].items()
        if value is not None
    }
    out["metadata"] = {**data["metadata"], "roles": roles}
    return out


# the query YAMLs that search this index (MiniLM / Ollama vectors need their own index) and those
# that answer through the fake Ollama server (query_openai's endpoint and llama.cpp are not here)
SEARCHABLE_HERE = (
    "query.yaml",
    "bm25.yaml",
    "hybrid_norerank.yaml",
    "dense.yaml",
    "query_llmrerank.yaml",
    "query_named_first.yaml",
    "query_openai.yaml",
)
ANSWERED_HERE = ("query.yaml", "bm25.yaml", "hybrid_norerank.yaml", "dense.yaml", "query_named_first.yaml")


@pytest.mark.parametrize("path", sorted(PIPELINES_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_pipeline_renamed_keeps_its_roles_and_builds(path):
    from codeground.app.pipeline.loader import build_pipeline, resolve

    data = read_pipeline_dict(path)
    if any("llama_cpp" in str(spec) for spec in data["components"].values()):
        pytest.importorskip("haystack_integrations.components.generators.llama_cpp")
    renamed = _renamed(data)
    roles = IndexRoles if path.name.startswith("index") else QueryRoles
    original, again = roles.of(data), roles.of(renamed)
    assert again == type(original)(
        **{
            k: (tuple("renamed_" + x for x in v) if isinstance(v, tuple) else "renamed_" + v if v else v)
            for k, v in original.__dict__.items()
        }
    )
    build_pipeline(resolve(renamed, index_dir="/tmp/codeground-renamed"))


def test_renaming_every_component_of_the_shipped_pipelines_changes_nothing_users_see(
    tmp_path, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply="Call `Trainer.fit` (pkg/trainer.py:33-35).")
    repo = make_sample_repo(tmp_path / "repo")
    renamed = {}
    for name in ("index.yaml", *SEARCHABLE_HERE):
        path = tmp_path / name
        path.write_text(yaml.safe_dump(_renamed(read_pipeline_dict(PIPELINES_DIR / name))))
        renamed[name] = path
    run_index(repo, tmp_path / "plain", PIPELINES_DIR / "index.yaml")
    run_index(repo, tmp_path / "renamed", renamed["index.yaml"])

    def seen(result):
        return [(d.id, round(d.score or 0, 9)) for d in result.documents], result.notices, result.query

    for variant in SEARCHABLE_HERE:
        plain = QueryEngine(tmp_path / "plain", PIPELINES_DIR / variant)
        other = QueryEngine(tmp_path / "renamed", renamed[variant])
        for question in ("What does Gemma2DecoderLayer.forward return?", "how do I fit a trainer"):
            assert seen(other.search(question, k=3)) == seen(plain.search(question, k=3)), variant
        if variant not in ANSWERED_HERE:
            continue
        tokens: list[str] = []
        a = plain.answer("How do I fit a Trainer?")
        b = other.answer("How do I fit a Trainer?", on_token=tokens.append)
        assert (b.answer, b.notices, b.grounding, [d.id for d in b.documents]) == (
            a.answer,
            a.notices,
            a.grounding,
            [d.id for d in a.documents],
        )
        assert "".join(tokens) == b.answer


def test_no_component_name_of_the_shipped_yamls_is_written_in_the_application():
    """Every name a shipped YAML gives a role, unless it is also a socket, an output the application
    reads or an init parameter (``documents``, ``grounding``, ``premise``, ``flags``, ``ranker``),
    appears in no string of codeground/app outside roles.py (whose legacy table is the convention for
    YAMLs without roles)."""
    role_names, other_words = (
        set(),
        {"documents", "replies", "prompt", "query", "notices", "grounding", "premise", "flags", "reranked"},
    )

    def keys(value):
        if isinstance(value, dict):
            for k, v in value.items():
                other_words.add(k)
                keys(v)
        elif isinstance(value, list):
            for v in value:
                keys(v)

    for path in PIPELINES_DIR.glob("*.yaml"):
        data = read_pipeline_dict(path)
        for value in data["metadata"]["roles"].values():
            role_names.update(v.split(".")[0] for v in (value if isinstance(value, list) else [value]) if v)
        for c in data["connections"]:
            other_words.update(end.split(".", 1)[1] for end in (c["sender"], c["receiver"]))
        keys([spec.get("init_parameters") for spec in data["components"].values()])
    forbidden = role_names - other_words
    assert {"file_spread", "llm", "rewriter", "splitter", "chroma_writer", "bm25_writer"} <= forbidden
    offenders = []
    for source in APP.rglob("*.py"):
        if source.name == "roles.py":
            continue
        for lineno, line in enumerate(source.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            for quoted in re.findall(r"[\"']([a-z_0-9]+)[\"']", code):
                if quoted in forbidden:
                    offenders.append(f"{source.name}:{lineno}: {quoted}")
    assert offenders == []


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        ({"documents": "nope"}, "role 'documents' names 'nope'"),
        ({"documents": "a", "notices": "a"}, "must be a list"),
        ({"documents": "a", "colour": "a"}, "unknown role"),
        ({"generation": ["a"]}, "must name documents"),
    ],
)
def test_a_role_that_names_no_component_is_one_clear_error(roles, message):
    data = {"components": {"a": {}}, "metadata": {"roles": roles}}
    with pytest.raises(RoleError, match=message):
        QueryRoles.of(data)


@pytest.mark.parametrize(
    ("given", "reader", "message"),
    [
        (
            "query.yaml",
            IndexRoles,
            "a query pipeline, where an index pipeline is needed (such as pipelines/index.yaml)",
        ),
        (
            "index.yaml",
            QueryRoles,
            "an index pipeline, where a query pipeline is needed (such as pipelines/query.yaml)",
        ),
    ],
)
def test_a_yaml_of_the_other_kind_is_named_as_such(given, reader, message):
    """A query YAML given to `codeground index` (or an index YAML to `search`) is said to be one, not
    listed as eleven unknown roles."""
    with pytest.raises(RoleError) as raised:
        reader.of(read_pipeline_dict(PIPELINES_DIR / given))
    assert str(raised.value) == message


def test_a_query_yaml_with_a_broken_role_is_refused_before_any_model_loads(tmp_path, indexed_sample):
    data = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    data["metadata"]["roles"]["documents"] = "gone"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CodegroundError, match=r"broken.yaml: role 'documents' names 'gone'"):
        QueryEngine(indexed_sample[1], path).search("trainer")


def test_a_yaml_without_roles_gets_the_names_every_shipped_yaml_used():
    query = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    del query["metadata"]
    assert QueryRoles.of(query) == QueryRoles.of(read_pipeline_dict(PIPELINES_DIR / "query.yaml"))
    bm25 = read_pipeline_dict(PIPELINES_DIR / "bm25.yaml")
    declared = QueryRoles.of(bm25)
    del bm25["metadata"]
    assert QueryRoles.of(bm25) == declared
    # index.yaml's dense store is a partial writer, which the names of old YAMLs cannot say
    index = read_pipeline_dict(PIPELINES_DIR / "index_minilm.yaml")
    declared_index = IndexRoles.of(index)
    del index["metadata"]["roles"]
    assert IndexRoles.of(index) == declared_index
