"""A pipeline as people read it: the resolved YAML and a Mermaid graph, made offline.

Rule: what is shown is the pipeline the loader builds (an overlay resolved against its base, roles
included), so ``codeground pipeline show query_minilm.yaml`` is the whole pipeline, not the overlay.
The graph is Mermaid ``flowchart`` text built from the connections (Haystack's ``Pipeline.show`` /
``draw`` ask a web service to render it; this never leaves the machine).

Usage:
```python
from codeground.app.pipeline.pipeline_view import mermaid

data = {"components": {"a": {"type": "x.A"}, "b": {"type": "x.B"}},
        "connections": [{"sender": "a.documents", "receiver": "b.documents"}]}
assert 'a -- "documents → documents" --> b' in mermaid(data)
```
"""

from __future__ import annotations

from typing import Any

import yaml


def resolved_yaml(data: dict[str, Any]) -> str:
    """The full pipeline dict as YAML, keys in the order the pipeline declares them."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


def mermaid(data: dict[str, Any]) -> str:
    """A Mermaid flowchart: one node per component (name and class), one edge per connection."""
    roles = (data.get("metadata") or {}).get("roles") or {}
    played: dict[str, list[str]] = {}
    for role, names in roles.items():
        for name in names if isinstance(names, list) else [names]:
            if isinstance(name, str):
                played.setdefault(name.split(".", 1)[0], []).append(role)
    lines = ["flowchart TD"]
    for name, spec in (data.get("components") or {}).items():
        kind = str((spec or {}).get("type", "?")).rsplit(".", 1)[-1]
        extra = f"<br/><i>{', '.join(played[name])}</i>" if name in played else ""
        lines.append(f'  {name}["<b>{name}</b><br/>{kind}{extra}"]')
    for c in data.get("connections") or []:
        sender, _, out = str(c["sender"]).partition(".")
        receiver, _, inp = str(c["receiver"]).partition(".")
        lines.append(f'  {sender} -- "{out or "?"} → {inp or "?"}" --> {receiver}')
    return "\n".join(lines) + "\n"
