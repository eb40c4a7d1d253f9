"""Which component plays which part in a pipeline: declared in the YAML's ``metadata.roles``.

Rule: the application never names a component; it reads the roles a pipeline declares, and a role
that names no component of the (resolved) pipeline is a one-line error when the YAML is read. A YAML
that declares no roles (written before they existed) gets the component names every shipped YAML
used then (``reseat``, ``llm``, ``splitter``, …), those it has.

Query pipelines (``QueryRoles``):
- ``documents`` (required): the component whose ``documents`` output is the final ranked list;
- ``generation``: components needed only to answer (left out for ``search``);
- ``notices``: components whose ``notices`` output the user sees, in this order;
- ``rewriter``: takes the question and the conversation (``question`` + ``history``) and outputs
  the ``query`` every retriever gets; without it the question goes to the retrievers as it is;
- ``top_k``: takes how many sources the caller asked for (its ``top_k`` input);
- ``prompt``: takes the ``concept_prompt`` and outputs the ``prompt`` messages;
- ``answer``: streams (``streaming_callback``) and outputs the ``replies``;
- ``grounding``: outputs the ``grounding`` report;
- ``flags``: outputs the ``flags`` report (the answer's command-line flags the repository lacks,
  ``AnswerFlags``); the repair asks again about them as about the check's names;
- ``premise``: outputs the ``premise`` report (what the question names that the repository lacks,
  ``QuestionPremise``); the repair asks again about those names when an answer uses them;
- ``reranker``: the reranking stage (its ``reranked`` output says whether it had an opinion).

Index pipelines (``IndexRoles``):
- ``entry`` (required): ``component.socket`` the repository's files go into;
- ``chunked`` (required): the last component of the chunk stage (its ``documents`` are the records);
- ``embedder``: outputs the records with their vectors;
- ``writers`` (required): the writers whose stores must hold every record (deleted from, counted);
- ``partial_writers``: writers whose stores hold only the records routed to them (the dense store
  behind a router): deleted from, and counted against what was written to them; the manifest keeps
  their counts (``store_counts``).

Usage:
```python
from codeground.app.pipeline.roles import QueryRoles

data = {"components": {"bm25": {}}, "metadata": {"roles": {"documents": "bm25"}}}
assert QueryRoles.of(data).documents == "bm25"
```
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


class RoleError(ValueError):
    """A role missing, of the wrong shape, or naming no component (one line)."""


# A YAML written before roles were declared used these component names (every shipped YAML did;
# `premise`, `flags` and `file_spread` came later, and a YAML without them simply has none).
_LEGACY_QUERY = {
    # the first present
    "documents": ["file_spread", "reseat", "floor", "ranker", "merge", "fusion", "bm25", "dense"],
    "generation": ["premise", "excerpts", "prompt", "llm", "grounding", "flags"],
    "notices": ["rewriter", "ranker", "premise", "llm", "grounding", "flags"],
    "rewriter": ["rewriter"],
    "top_k": ["file_spread", "reseat"],
    "prompt": ["prompt"],
    "answer": ["llm"],
    "grounding": ["grounding"],
    "flags": ["flags"],
    "premise": ["premise"],
    "reranker": ["ranker"],
}
_LEGACY_INDEX = {"entry": "router.sources", "chunked": "splitter", "embedder": "embedder"}


def _declared(data: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
    roles = (data.get("metadata") or {}).get("roles")
    if isinstance(roles, dict):
        return roles
    if roles is not None:
        raise RoleError("metadata.roles must map role names to component names")
    return legacy


def _legacy_query(data: dict[str, Any]) -> dict[str, Any]:
    present = data.get("components") or {}
    out: dict[str, Any] = {}
    for role, names in _LEGACY_QUERY.items():
        found = [n for n in names if n in present]
        if role in ("generation", "notices"):
            out[role] = found
        elif found:
            out[role] = found[0]
    return out


def _legacy_index(data: dict[str, Any]) -> dict[str, Any]:
    present = data.get("components") or {}
    out = {k: v for k, v in _LEGACY_INDEX.items() if v.split(".", 1)[0] in present}
    out["writers"] = [
        n for n, spec in present.items() if str(spec.get("type", "")).endswith("DocumentWriter")
    ]
    return out


def _check(
    cls: type, data: dict[str, Any], required: tuple[str, ...], legacy: dict[str, Any]
) -> dict[str, Any]:
    roles = _declared(data, legacy)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(roles) - known)
    other = _OTHER_KIND[cls.__name__]
    if unknown and set(roles) <= {f.name for f in fields(other)}:
        raise RoleError(
            f"{_KIND[other.__name__]}, where {_KIND[cls.__name__]} is needed "
            f"(such as {_EXAMPLE[cls.__name__]})"
        )
    if unknown:
        raise RoleError(f"unknown role(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    missing = [r for r in required if not roles.get(r)]
    if missing:
        raise RoleError(f"metadata.roles must name {', '.join(missing)}")
    components = data.get("components") or {}
    values: dict[str, Any] = {}
    for f in fields(cls):
        value = roles.get(f.name)
        many = isinstance(f.default, tuple)
        if value is None:
            continue
        if many:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise RoleError(f"role '{f.name}' must be a list of component names")
            value = tuple(value)
        elif not isinstance(value, str):
            raise RoleError(f"role '{f.name}' must be one component name")
        for name in value if many else (value,):
            if name.split(".", 1)[0] not in components:
                raise RoleError(f"role '{f.name}' names '{name}', which is not a component of this pipeline")
        values[f.name] = value
    return values


@dataclass(frozen=True)
class QueryRoles:
    """The parts of a query pipeline (see the module docstring)."""

    documents: str = ""
    generation: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    rewriter: str | None = None
    top_k: str | None = None
    prompt: str | None = None
    answer: str | None = None
    grounding: str | None = None
    flags: str | None = None
    premise: str | None = None
    reranker: str | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> QueryRoles:
        return cls(**_check(cls, data, ("documents",), _legacy_query(data)))


@dataclass(frozen=True)
class IndexRoles:
    """The parts of an index pipeline (see the module docstring)."""

    entry: str = ""
    chunked: str = ""
    embedder: str | None = None
    writers: tuple[str, ...] = ()
    partial_writers: tuple[str, ...] = ()

    @property
    def all_writers(self) -> tuple[str, ...]:
        """Every writer, those holding every record first."""
        return (*self.writers, *self.partial_writers)

    @classmethod
    def of(cls, data: dict[str, Any]) -> IndexRoles:
        values = _check(cls, data, ("entry", "chunked", "writers"), _legacy_index(data))
        if "." not in values["entry"]:
            raise RoleError("role 'entry' must be component.socket (e.g. router.sources)")
        return cls(**values)


# A YAML of the other kind (a query YAML given to `codeground index`, an index YAML to `search`) is
# named as such rather than as a list of unknown roles.
_OTHER_KIND = {"QueryRoles": IndexRoles, "IndexRoles": QueryRoles}
_KIND = {"QueryRoles": "a query pipeline", "IndexRoles": "an index pipeline"}
_EXAMPLE = {"QueryRoles": "pipelines/query.yaml", "IndexRoles": "pipelines/index.yaml"}
