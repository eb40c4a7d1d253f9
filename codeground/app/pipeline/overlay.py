"""Pipeline variants as overlays: a YAML that ``extends`` another says only what it changes.

Rule: an overlay is resolved into a full Haystack pipeline dict before anything else reads it, by
applying its keys to its base in this order:

- ``extends: query.yaml`` — the base, a path relative to the overlay's folder (itself possibly an
  overlay; a cycle is an error);
- ``remove: [name, …]`` — components dropped with every connection that touches them;
- ``disconnect: [{sender, receiver}, …]`` — connections of the base dropped (each must exist);
- ``components: {name: spec}`` — components added, or replacing the base's component of that name
  whole (it keeps its place);
- ``set: {dotted.path: value}`` — one value replaced (or added) at a path from the top of the
  document, e.g. ``components.fusion.init_parameters.weights.bm25: 4.0``; every step but the last
  must exist;
- ``connections: [...]`` — appended to the base's remaining connections;
- ``metadata: {...}`` — merged into the base's, mapping by mapping (a value of ``null`` removes a key).

A file without ``extends`` is a full pipeline and is returned as it is.

Usage:
```python
from codeground.app.pipeline.overlay import resolve_overlay

base = {"components": {"a": {"type": "x.A", "init_parameters": {"k": 1}}}, "connections": []}
overlay = {"extends": "base.yaml", "set": {"components.a.init_parameters.k": 2}}
resolved = resolve_overlay(overlay, load_base=lambda name: base)
assert resolved["components"]["a"]["init_parameters"]["k"] == 2
```
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

OVERLAY_KEYS = ("extends", "remove", "disconnect", "components", "set", "connections", "metadata")


class OverlayError(ValueError):
    """An overlay that cannot be applied to its base (the message is one line)."""


def resolve_overlay(data: dict[str, Any], *, load_base: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """The full pipeline dict ``data`` describes; ``load_base(name)`` returns the resolved base."""
    if "extends" not in data:
        return data
    unknown = sorted(set(data) - set(OVERLAY_KEYS))
    if unknown:
        raise OverlayError(
            f"unknown overlay key(s) {', '.join(unknown)} (allowed: {', '.join(OVERLAY_KEYS)})"
        )
    base = copy.deepcopy(load_base(str(data["extends"])))
    components: dict[str, Any] = base.setdefault("components", {})
    connections: list[dict[str, Any]] = base.setdefault("connections", [])

    removed = data.get("remove") or []
    if not isinstance(removed, list):
        raise OverlayError("'remove' must be a list of component names")
    for name in removed:
        if name not in components:
            raise OverlayError(f"cannot remove '{name}': the base has no such component")
    drop_components(base, removed)

    cut = data.get("disconnect") or []
    if not isinstance(cut, list):
        raise OverlayError("'disconnect' must be a list of {sender, receiver}")
    for c in cut:
        pair = {"sender": c.get("sender"), "receiver": c.get("receiver")} if isinstance(c, dict) else None
        if pair not in connections:
            raise OverlayError(f"cannot disconnect {c}: the base has no such connection")
        connections.remove(pair)

    added = data.get("components") or {}
    if not isinstance(added, dict):
        raise OverlayError("'components' must map names to component specs")
    for name, spec in added.items():
        components[name] = copy.deepcopy(spec)

    changes = data.get("set") or {}
    if not isinstance(changes, dict):
        raise OverlayError("'set' must map dotted paths to values")
    for path, value in changes.items():
        _set(base, str(path), copy.deepcopy(value))

    more = data.get("connections") or []
    if not isinstance(more, list):
        raise OverlayError("'connections' must be a list")
    connections.extend(copy.deepcopy(more))

    if "metadata" in data:
        base["metadata"] = _merge(base.get("metadata") or {}, data["metadata"] or {})

    for c in connections:
        for end in (c.get("sender"), c.get("receiver")):
            if _owner(end) not in components:
                raise OverlayError(
                    f"connection {c.get('sender')} -> {c.get('receiver')} names no component '{_owner(end)}'"
                )
    return base


def drop_components(data: dict[str, Any], names: list[str]) -> None:
    """Remove the components ``names`` from a pipeline dict, with every connection touching them."""
    gone = set(names)
    for name in gone:
        (data.get("components") or {}).pop(name, None)
    connections = data.setdefault("connections", [])
    connections[:] = [
        c for c in connections if not {_owner(c.get("sender")), _owner(c.get("receiver"))} & gone
    ]


def _owner(end: Any) -> str:
    return str(end).split(".", 1)[0]


def _set(document: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = document
    for i, key in enumerate(parents):
        if not isinstance(node, dict) or key not in node:
            raise OverlayError(f"cannot set '{path}': '{'.'.join(parents[: i + 1])}' is not in the base")
        node = node[key]
    if not isinstance(node, dict):
        raise OverlayError(f"cannot set '{path}': '{'.'.join(parents)}' is not a mapping")
    node[last] = value


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
