"""Which collections on a server an index generation owns: a JSON list in the generation's folder.

Rule: a store that creates a server collection for a generation adds ``entry`` (where it is and its
name) to ``register_in``; an incremental run's folder starts as a copy of the previous one's, so the
list keeps only entries named after this generation. Removing a generation drops what ``owned``
lists (only the collections named after it), so the generation it was copied from keeps its own.

Usage:
```python
import tempfile
from pathlib import Path
from codeground.components.stores.server_registry import owned, register

gen = Path(tempfile.mkdtemp()) / "gen-2"
register(gen / "collections.json", {"collection": "codeground-gen-2"}, "gen-2")
assert owned(gen, "collections.json") == [{"collection": "codeground-gen-2"}]
```
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def register(path: str | Path, entry: dict[str, Any], generation: str | None) -> None:
    """Add ``entry`` to the list at ``path`` (atomically), dropping entries of other generations."""
    path = Path(path)
    entries = json.loads(path.read_text()) if path.is_file() else []
    entries = [e for e in entries if not generation or generation in str(e.get("collection"))]
    if entry not in entries:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps([*entries, entry]))
        os.replace(tmp, path)


def owned(gen: Path, filename: str) -> list[dict[str, Any]]:
    """The entries of ``gen``'s list named after ``gen`` (the ones removing it must drop)."""
    path = Path(gen) / filename
    if not path.is_file():
        return []
    return [e for e in json.loads(path.read_text()) if Path(gen).name in str(e.get("collection"))]
