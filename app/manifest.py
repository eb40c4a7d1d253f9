"""The manifest written next to each index generation.

It records what the index was built from and with: index format, embedder id and dimension, a
fingerprint of the indexing pipeline (chunk and embedding settings), the repository root, every
indexed file's sha256 and record ids, and the record count. Indexing uses it to re-process only
new or changed files; the query side uses it to refuse an index that disagrees with its stores.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
MANIFEST = "manifest.json"


@dataclass
class FileEntry:
    sha256: str
    ids: list[str]


@dataclass
class Manifest:
    embedder: str | None
    settings: str
    root: str
    format: int = FORMAT
    chunk_count: int = 0
    embedding_dim: int | None = None
    records_by_type: dict[str, int] = field(default_factory=dict)
    walk: dict[str, Any] = field(default_factory=dict)
    files: dict[str, FileEntry] = field(default_factory=dict)
    created: str = ""

    def save(self, gen: Path) -> None:
        tmp = gen / (MANIFEST + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(asdict(self), fh, ensure_ascii=False)
        os.replace(tmp, gen / MANIFEST)

    @classmethod
    def load(cls, gen: Path) -> Manifest | None:
        """The manifest of generation ``gen``, or ``None`` if missing or unreadable."""
        try:
            raw = json.loads((gen / MANIFEST).read_text(encoding="utf-8"))
            raw["files"] = {p: FileEntry(**e) for p, e in raw.get("files", {}).items()}
            return cls(**raw)
        except (OSError, ValueError, TypeError):
            return None
