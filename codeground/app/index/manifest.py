"""The manifest written next to each index generation.

It records what the index was built from and with: index format, embedder identity (kind + model)
and dimension, a fingerprint of the indexing pipeline (chunk and embedding settings), the repository
root, every indexed file's sha256 and record ids, and the record count. Indexing uses it to
re-process only new or changed files; the query side uses it to refuse an index that disagrees with
its stores or was embedded by another embedder than the one that would embed the questions.

The per-file entries are kept apart, in ``files.json`` (format 4): a search never needs them, and a
large repository's are most of the manifest (52 MB of 53 for ansible's 37k files, read and parsed by
every cold search before). ``Manifest.load`` reads them on first use of ``files``; indexing, which
needs them all, asks for them at once (``with_files``) and rebuilds when they cannot be read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

# 2: the BM25 store is a SQLite file (bm25.sqlite3); 3: Chroma keeps ids and vectors only; 4: the
# per-file entries in files.json
FORMAT = 4
# the formats this codeground searches and updates: 3's stores are 4's, its entries inside the manifest
READABLE_FORMATS = (3, 4)
MANIFEST = "manifest.json"
FILES = "files.json"


@dataclass
class FileEntry:
    sha256: str
    ids: list[str]


class FileEntries(Mapping[str, FileEntry]):
    """A generation's per-file entries (path → sha256 and record ids), read from its ``files.json`` on
    first use. One that cannot be read then is a one-line error saying how to rebuild the index."""

    def __init__(self, gen: Path, root: str | None) -> None:
        self.gen = gen
        self.root = root
        self._entries: dict[str, FileEntry] | None = None

    def _loaded(self) -> dict[str, FileEntry]:
        if self._entries is None:
            entries = read_entries(self.gen)
            if entries is None:
                from codeground.app.errors import CodegroundError
                from codeground.app.index.index_dir import index_command

                rebuild = index_command(self.gen.parent, self.root, "--full")
                raise CodegroundError(
                    f"the index's file list {self.gen / FILES} cannot be read: rebuild it with `{rebuild}`"
                )
            self._entries = entries
        return self._entries

    def __getitem__(self, path: str) -> FileEntry:
        return self._loaded()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def _entries(raw: dict[str, Any]) -> dict[str, FileEntry]:
    return {p: FileEntry(**e) for p, e in raw.items()}


def read_entries(gen: Path) -> dict[str, FileEntry] | None:
    """The per-file entries of generation ``gen`` (its ``files.json``), or ``None`` if unreadable."""
    try:
        return _entries(orjson.loads((gen / FILES).read_bytes()))
    except (OSError, ValueError, TypeError, AttributeError):
        return None


MODEL_PARAMS = ("model", "model_name_or_path", "model_path", "model_dir")


@dataclass(frozen=True)
class EmbedderIdentity:
    """Which embedder made (or would make) the vectors: its kind and its model.

    ``kind`` is the embedder's class name without ``Document``/``Text`` before ``Embedder``, so a
    pipeline's document embedder and the matching query embedder share it
    (``SentenceTransformersDocumentEmbedder`` and ``SentenceTransformersTextEmbedder`` are both
    ``SentenceTransformersEmbedder``; ``OllamaDocumentEmbedder``/``OllamaTextEmbedder`` are
    ``OllamaEmbedder``). Vectors are comparable only when both the kind and the model agree.
    """

    kind: str
    model: str | None

    def __str__(self) -> str:
        return f"{self.model or '(default model)'} via {self.kind}"


def _kind(type_path: str) -> str:
    return re.sub(r"(?:Document|Text)(?=Embedder$)", "", type_path.rsplit(".", 1)[-1])


def _nested_specs(params: dict[str, Any]) -> bool:
    def has(value: Any) -> bool:
        if isinstance(value, dict):
            return "type" in value or any(has(v) for v in value.values())
        if isinstance(value, list):
            return any(has(v) for v in value)
        return False

    return has(params)


def is_ranker(spec: dict[str, Any] | None) -> bool:
    """Whether a serialized component is a ranker (its type ends with ``Ranker``): the embedders
    inside one compare the question with the candidates only, never with the index's vectors."""
    return str((spec or {}).get("type", "")).endswith("Ranker")


def embedding_rankers(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(name, serialized spec)`` of each ranker of a resolved pipeline definition that holds an
    embedder of its own (``BiEncoderRanker``): the models a question loads besides the index's."""
    from codeground.app.pipeline.loader import _specs

    return [
        (name, spec)
        for name, spec in (data["components"] or {}).items()
        if is_ranker(spec)
        and any(str(s["type"]).endswith("Embedder") for s in _specs(spec.get("init_parameters") or {}))
    ]


def embedder_spec(data: dict[str, Any]) -> dict[str, Any] | None:
    """The serialized form (``type`` + ``init_parameters``) of the first embedder a pipeline definition
    declares, looking through wrappers (a component whose parameters hold another component, like
    ``CachedTextEmbedder``); ``None`` if it embeds nothing. The embedders inside a ranker
    (``BiEncoderRanker``) are not the index's: they embed the question and the candidates alike and
    compare only with each other, so a ranker's parts are never looked at."""
    from codeground.app.pipeline.loader import _specs

    for top in (data["components"] or {}).values():
        if is_ranker(top):
            continue
        for spec in _specs(top):
            if str(spec.get("type", "")).endswith("Embedder") and not _nested_specs(spec["init_parameters"]):
                return spec
    return None


def embedder_identity(data: dict[str, Any]) -> EmbedderIdentity | None:
    """The identity of the first embedder a pipeline definition declares, or ``None`` if it embeds nothing.

    Wrappers are looked through: the identity is the innermost embedder's. Read from the definition
    *before* offline model names are resolved to local paths.
    """
    spec = embedder_spec(data)
    if spec is None:
        return None
    params = spec["init_parameters"]
    model = next((params[k] for k in MODEL_PARAMS if params.get(k)), None)
    return EmbedderIdentity(_kind(str(spec["type"])), str(model) if model is not None else None)


@dataclass
class Manifest:
    embedder: str | None
    settings: str
    root: str
    format: int = FORMAT
    chunk_count: int = 0
    embedding_dim: int | None = None
    embedder_kind: str | None = None  # None: the index has no dense vectors
    records_by_type: dict[str, int] = field(default_factory=dict)
    walk: dict[str, Any] = field(default_factory=dict)
    files: Mapping[str, FileEntry] = field(default_factory=dict)
    created: str = ""
    # the document embedder's vectors for app.index.embedder_probe.PROBES (None: not probed / older index)
    embedder_probe: list[list[float]] | None = None
    # records held by each store that holds only some of them (app.index.store_counts.store_key -> count)
    store_counts: dict[str, int] = field(default_factory=dict)
    # the export the document embedder ran ({"backend", "precision", "weights_sha256"}; None: none)
    embedder_export: dict[str, str] | None = None

    def save(self, gen: Path) -> None:
        """Write ``files.json``, then ``manifest.json`` (each through a temporary file): a generation
        becomes live only after both (``IndexDir.commit``)."""
        # orjson writes the dataclasses as they are (no deep copy of 38k record ids), ~10x json's speed
        head = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "files"}
        files = self.files if isinstance(self.files, dict) else dict(self.files.items())
        for name, data in ((FILES, files), (MANIFEST, head)):
            tmp = gen / (name + ".tmp")
            tmp.write_bytes(orjson.dumps(data))
            os.replace(tmp, gen / name)

    @property
    def embedder_identity(self) -> EmbedderIdentity | None:
        """The identity of the embedder that built this index (None: it has no dense vectors)."""
        if self.embedder is None and self.embedder_kind is None:
            return None
        return EmbedderIdentity(self.embedder_kind or "", self.embedder)

    def embedded_by(self, other: EmbedderIdentity | None) -> bool:
        """Whether vectors from ``other`` can be compared with this index's."""
        return other is None or self.embedder_identity == other

    @classmethod
    def load(cls, gen: Path, *, with_files: bool = False) -> Manifest | None:
        """The manifest of generation ``gen``, or ``None`` if missing or unreadable (with
        ``with_files``: also when its per-file entries are). Its ``files`` are read on first use
        unless ``with_files`` reads them now; before format 4 they were inside the manifest."""
        try:
            raw = orjson.loads((gen / MANIFEST).read_bytes())
            raw.setdefault("format", 1)  # the first manifests did not write it
            if raw["format"] < 4:  # the entries were inside the manifest
                raw["files"] = _entries(raw.get("files", {}))
            elif with_files:
                raw["files"] = read_entries(gen)
                if raw["files"] is None:
                    return None
            else:
                raw["files"] = FileEntries(gen, raw.get("root"))
            return cls(**raw)
        except (OSError, ValueError, TypeError, AttributeError):
            return None
