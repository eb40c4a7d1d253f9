"""Build or update an index: walk, diff against the manifest, run the index pipeline, commit.

Rules:
- Only new or changed files (by sha256) are chunked; records of deleted files are removed first.
  A changed file's new records are compared with its old ones: a record whose id, content and meta
  are unchanged is kept as it is (not embedded, not written again: its text, and so its vector, is
  the same), the others are removed and written anew. An incremental run therefore leaves exactly
  the records a full rebuild would.
- A change of index format, embedder (kind or model), indexing settings (the pipeline definition)
  or repository root forces a full rebuild; so does ``full=True``.
- The run writes a new generation and commits it atomically (``app.index.index_dir``); any failure (an
  embedding server that is down, a model that cannot load) is one line and leaves the previous
  generation live and untouched.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.index.disk_space import disk_full_hint, folder_bytes
from codeground.app.index.embedder_probe import check_document_probe, probe_document_embedder
from codeground.app.index.index_dir import IndexDir, index_command
from codeground.app.index.index_stages import IndexStages, failure_line
from codeground.app.index.manifest import (
    FILES,
    MANIFEST,
    READABLE_FORMATS,
    EmbedderIdentity,
    FileEntry,
    Manifest,
    embedder_identity,
)
from codeground.app.index.store_counts import (
    SERVER_DOWN_FIX,
    StoreUnreadable,
    disagreeing,
    expected_counts,
    record_counts,
    server_of,
    store_key,
)
from codeground.app.output_paths import check_output_folder
from codeground.app.pipeline.loader import (
    build_pipeline,
    check_server_variables,
    read_pipeline_dict,
    resolve,
    settings_fingerprint,
)
from codeground.app.pipeline.roles import IndexRoles, RoleError

BATCH_FILES = 64
# With fewer files than this, chunking stays in this process: a worker costs a Python start-up.
CHUNK_WORKER_MIN_FILES = 3 * BATCH_FILES


@dataclass
class IndexResult:
    """What an index run did, for the CLI summary and the benchmarks."""

    index_dir: Path
    generation: Path
    full: bool
    reason: str
    walk: dict[str, Any]
    processed_files: int = 0
    deleted_files: int = 0
    removed_records: int = 0
    written_records: int = 0
    unchanged_records: int = 0  # records of changed files kept as they were
    chunk_count: int = 0
    records_by_type: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    up_to_date: bool = False


def _rebuild_reason(
    prev: Manifest | None,
    *,
    full: bool,
    settings: str,
    embedder: EmbedderIdentity | None,
    root: str,
    current: Path | None = None,
) -> str:
    if full:
        return "--full"
    if prev is None and current is not None:
        return f"previous index unreadable (its {MANIFEST} or {FILES})"
    if prev is None:
        return "no previous index"
    if prev.format not in READABLE_FORMATS:
        return "index format changed"
    if prev.embedder_identity != embedder:
        return f"embedder changed ({prev.embedder_identity} -> {embedder})"
    if prev.settings != settings:
        return "indexing settings changed"
    if prev.root != root:
        return f"repository root changed ({prev.root} -> {root})"
    return ""


def _records(stores: list[Any], ids: list[str]) -> list[Any]:
    """The records with these ids, from the first store that holds records and can look ids up (a
    vectors-only Chroma store holds no meta; the BM25 store takes a list of ids)."""
    wanted = {"field": "id", "operator": "in", "value": ids}
    for store in stores:
        if getattr(store, "vectors_only", False):
            continue
        try:
            return store.filter_documents(wanted)
        except Exception:  # noqa: BLE001 - this store cannot: ask the next
            continue
    raise CodegroundError("no index store can look records up by id; run `codeground index --full`")


class _Stores:
    """The stores an index run writes: ``writers``' hold every record, ``partial_writers``' only the
    records routed to them, so for those the run keeps count of what they hold (``held``)."""

    def __init__(self, pipeline: Any, roles: IndexRoles, held: dict[str, int]) -> None:
        self.full = [pipeline.get_component(n).document_store for n in roles.writers]
        self.partial = {n: pipeline.get_component(n).document_store for n in roles.partial_writers}
        self.held = {n: held.get(n, 0) for n in self.partial}

    @property
    def all(self) -> list[Any]:
        return [*self.full, *self.partial.values()]

    def delete(self, ids: list[str]) -> None:
        for store in self.full:
            store.delete_documents(ids)
        for name, store in self.partial.items():
            store.delete_documents(ids)
            self.held[name] = store.count_documents()  # some of the ids were never routed there

    def wrote(self, out: dict[str, Any]) -> None:
        for name in self.partial:
            self.held[name] += out.get(name, {}).get("documents_written", 0)

    def counts_for_manifest(self, gen: Path) -> dict[str, int]:
        return {store_key(store, gen) or name: self.held[name] for name, store in self.partial.items()}


def _check_servers(pipeline: Any, roles: IndexRoles) -> None:
    """Every store kept on a server answers (is counted) before a file is chunked: one that is down (a
    Qdrant cluster at ``$QDRANT_URL``) had failed only at its first write, after the whole embedding.
    Stores in the index folder are read as before (an unreadable generation is rebuilt from the
    repository); an incremental run's ``_reuse`` has counted them all already."""
    on_servers = [n for n in roles.all_writers if server_of(pipeline.get_component(n).document_store)]
    try:
        record_counts(pipeline, on_servers)
    except StoreUnreadable as exc:
        raise CodegroundError(_server_down(exc)) from exc


def _reuse(
    data: dict[str, Any], gen: Path, prev: Manifest, previous: Path
) -> tuple[Any, str, dict[str, int]]:
    """The write stage over ``gen`` (a copy of the previous generation), why that copy cannot be
    updated in place ("" when it can) and what its stores hold: every store must load and hold the
    records the manifest says. A deleted or corrupted Chroma directory or a damaged BM25 file means
    "rebuild from the repository"."""
    try:
        stages = IndexStages(resolve(data, index_dir=gen, previous=previous))
        pipeline = stages.write_pipeline()
        names = stages.roles.all_writers
        counts = record_counts(pipeline, names)
        expected = expected_counts(pipeline, names, gen, prev.chunk_count, prev.store_counts)
    except Exception as exc:  # noqa: BLE001 - any store failure: rebuild rather than update
        if isinstance(exc, StoreUnreadable) and exc.server:  # a rebuild could not write there either
            raise CodegroundError(_server_down(exc)) from exc
        why = " ".join(str(exc).split())[:160] or type(exc).__name__
        return None, f"previous index unreadable ({why})", {}
    if disagreeing(counts, expected):
        listed, held = list(expected.values()), list(counts.values())
        return None, f"previous index stale (manifest {listed} records, stores {held})", {}
    return pipeline, "", counts


def run_index(
    repo: str | Path,
    index_dir: str | Path,
    pipeline_path: str | Path,
    *,
    full: bool = False,
    on_walk: Callable[[dict[str, Any], int], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> IndexResult:
    """Index ``repo`` into ``index_dir`` with the pipeline at ``pipeline_path``.

    ``on_walk(report, n_to_process)`` is called once after the walk; ``on_ready()`` once the models
    are loaded (a first run on a machine may have built them), before the first batch;
    ``on_progress(files_done, records_written)`` after each batch.
    """
    from codeground.components.walker import RepositoryWalker

    t0 = time.perf_counter()
    repo = Path(repo).resolve()
    if not repo.is_dir():
        raise CodegroundError(f"not a directory: {repo}")
    check_output_folder(Path(index_dir), empty=False)
    data = read_pipeline_dict(pipeline_path)
    settings = settings_fingerprint(data)
    embedder = embedder_identity(data)
    location = IndexDir(index_dir)
    # a YAML that cannot be built fails now, before a long walk (nothing is read or written yet)
    check_server_variables(data)
    build_pipeline(resolve(data, index_dir=location.path / "gen-not-created"))
    try:
        IndexRoles.of(data)
    except RoleError as exc:
        raise CodegroundError(f"{Path(pipeline_path).name}: {exc}") from exc

    with location.lock():
        location.remove_stale()
        current = location.current()
        prev = Manifest.load(current, with_files=True) if current else None
        walker = RepositoryWalker(**(data.get("metadata") or {}).get("walker", {}))
        walked = walker.run(root=str(repo), clean=_clean_digests(prev, settings))
        report, files = walked["report"], walked["files"]
        del walked  # the files' contents are held by the batches below, and freed with them
        reason = _rebuild_reason(
            prev, full=full, settings=settings, embedder=embedder, root=str(repo), current=current
        )
        rebuild = bool(reason)

        old_files = {} if rebuild else prev.files
        new_hashes = {f.meta["file_path"]: f.meta["sha256"] for f in files}
        todo = [
            f
            for f in files
            if rebuild or old_files.get(f.meta["file_path"], FileEntry("", [])).sha256 != f.meta["sha256"]
        ]
        deleted = [p for p in old_files if p not in new_hashes]
        gen, pipeline, held = None, None, {}
        if not rebuild and (todo or deleted):
            gen = location.new_generation(copy_from=current)
            try:
                pipeline, reason, held = _reuse(data, gen, prev, current)
            except CodegroundError:
                location.discard(gen)
                raise
            if reason:  # the previous generation cannot be updated: rebuild it from the repository
                location.discard(gen)
                gen, rebuild, old_files, todo, deleted = None, True, {}, list(files), []
        result = IndexResult(
            index_dir=location.path,
            generation=current or location.path,
            full=rebuild,
            reason=reason or "incremental",
            walk=report,
        )
        if on_walk:
            on_walk(report, len(todo))
        if not rebuild and not todo and not deleted:
            result.up_to_date = True
            result.chunk_count = prev.chunk_count
            result.records_by_type = prev.records_by_type
            result.seconds = time.perf_counter() - t0
            return result

        if gen is None:
            gen = location.new_generation(copy_from=None)
        done, total_files = 0, len(todo)
        try:
            result.generation = gen
            stages = IndexStages(resolve(data, index_dir=gen))
            if pipeline is None:  # a full build (an incremental run's _reuse counted its stores)
                pipeline = stages.write_pipeline()
                _check_servers(pipeline, stages.roles)  # before the models load: said at once
            stores = _Stores(pipeline, stages.roles, held)
            try:
                pipeline.warm_up()
                probe = probe_document_embedder(_embedder(pipeline, stages.roles))
            except Exception as exc:  # noqa: BLE001 - a model that cannot load is a user-facing problem
                raise CodegroundError(_failure("cannot load the index pipeline", exc)) from exc
            if not rebuild and prev.embedder_probe:  # new vectors must be comparable with the kept ones
                check_document_probe(
                    prev.embedder_probe, probe, rebuild=index_command(location.path, repo, "--full")
                )
            export = getattr(_embedder(pipeline, stages.roles), "export", None)
            was = (prev.embedder_export or {}).get("precision") if prev and not rebuild else None
            if was and export and export["precision"] != was:  # e.g. after `codeground embedder choose`
                raise CodegroundError(
                    f"the index was embedded with the {was} export and this machine now embeds with "
                    f"{export['precision']}: rebuild it with `{index_command(location.path, repo, '--full')}`"
                )
            # the vectors' size from the embedder or its probe; only an embedder that tells neither has
            # its output kept to be measured (a copy of every vector: 2.9 s per 15,000 records here)
            dim = _embedding_dim(pipeline, stages.roles) or (len(probe[0]) if probe else None)
            if on_ready:
                on_ready()

            entries: dict[str, FileEntry] = {p: e for p, e in old_files.items() if p in new_hashes}
            changed = [i for f in todo for i in _old_ids(old_files, f.meta["file_path"])]
            gone = [i for p in deleted for i in old_files[p].ids]
            # records per type: the previous counts, less the old records', plus the new ones'
            by_type: Counter[str] = Counter() if rebuild else Counter(prev.records_by_type)
            old_records = {d.id: d for d in _records(stores.all, changed + gone)} if changed or gone else {}
            by_type.subtract(d.meta.get("source_type") or "?" for d in old_records.values())
            if gone:
                stores.delete(gone)
            result.removed_records = len(gone)
            result.deleted_files = len(deleted)

            done = 0
            unparsed: dict[str, str] = {}  # files read but yielding no records because they are broken
            processed, n_todo = {f.meta["file_path"] for f in todo}, len(todo)
            batches = deque(todo[i : i + BATCH_FILES] for i in range(0, n_todo, BATCH_FILES))
            del files, todo  # from here on a batch's file contents are held only while it is in flight
            in_worker = bool(batches) and n_todo >= CHUNK_WORKER_MIN_FILES
            chunked = stages.chunked(_handed_on(batches), in_worker=in_worker)
            with contextlib.closing(chunked):  # a failure stops the chunking worker too
                while True:
                    try:
                        step = next(chunked, None)
                        if step is None:
                            break
                        batch, chunk = step
                        records = chunk["records"]
                        kept = {d.id for d in records if _unchanged(d, old_records.get(d.id))}
                        before = [i for f in batch for i in _old_ids(old_files, f.meta["file_path"])]
                        outdated = [i for i in before if i not in kept]
                        if outdated:
                            stores.delete(outdated)
                        fresh = [d for d in records if d.id not in kept]
                        vectors_from = stages.roles.embedder if dim is None else None
                        watched = {vectors_from, *stores.partial} if vectors_from else set(stores.partial)
                        out = (
                            pipeline.run(stages.write_inputs(fresh), include_outputs_from=watched)
                            if fresh
                            else {}
                        )
                    except Exception as exc:  # noqa: BLE001 - e.g. the embedding server is down
                        raise CodegroundError(_failure("indexing failed", exc)) from exc
                    stores.wrote(out)
                    result.removed_records += len(outdated)
                    result.unchanged_records += len(kept)
                    embedded = out.get(vectors_from, {}).get("documents") or [] if vectors_from else []
                    if dim is None and embedded and embedded[0].embedding is not None:
                        dim = len(embedded[0].embedding)
                    for path, why in chunk["failed"]:
                        unparsed[path] = why
                    ids: dict[str, list[str]] = {f.meta["file_path"]: [] for f in batch}
                    for doc in records:
                        ids[doc.meta["file_path"]].append(doc.id)
                        by_type[doc.meta.get("source_type") or "?"] += 1
                    for f in batch:
                        entries[f.meta["file_path"]] = FileEntry(f.meta["sha256"], ids[f.meta["file_path"]])
                    done += len(batch)
                    result.written_records += len(fresh)
                    if on_progress:
                        on_progress(done, result.written_records)
            result.processed_files = n_todo
            walk_report = _with_unparsed(report, prev, unparsed, new_hashes, processed, rebuild)
            result.walk = walk_report

            for store in stores.all:  # stores that keep writes pending (the BM25 store) commit them now
                if callable(getattr(store, "save", None)):
                    store.save()
            by_type = +by_type  # types no record has any more drop out
            expected = sum(len(e.ids) for e in entries.values())
            counts = record_counts(pipeline, stages.roles.all_writers)
            if disagreeing(counts, {**dict.fromkeys(stages.roles.writers, expected), **stores.held}):
                held_now = ", ".join(f"{name} {n}" for name, n in counts.items())
                raise CodegroundError(
                    f"index stores disagree (manifest {expected}, {held_now}); run `codeground index --full`"
                )
            manifest = Manifest(
                embedder=embedder.model if embedder else None,
                embedder_kind=embedder.kind if embedder else None,
                settings=settings,
                root=str(repo),
                chunk_count=expected,
                embedding_dim=dim
                or (None if rebuild else prev.embedding_dim),
                records_by_type=dict(sorted(by_type.items())),
                walk=walk_report,
                files=dict(sorted(entries.items())),
                created=datetime.now(UTC).isoformat(timespec="seconds"),
                embedder_probe=probe,
                store_counts=stores.counts_for_manifest(gen),
                embedder_export=export,
            )
            manifest.save(gen)
        except BaseException as exc:
            # leave CURRENT untouched; the half-built generation is removed now or by the next run
            hint = (
                disk_full_hint(
                    exc,
                    location.path,
                    written_bytes=folder_bytes(gen),
                    done_files=done,
                    total_files=total_files,
                    previous_bytes=folder_bytes(current),
                )
                if isinstance(exc, Exception)
                else ""
            )
            location.discard(gen)
            if hint:
                raise CodegroundError(f"{exc}{hint}") from exc
            raise
        location.commit(gen)
        result.chunk_count = expected
        result.records_by_type = manifest.records_by_type
        result.seconds = time.perf_counter() - t0
        return result


def _clean_digests(prev: Manifest | None, settings: str) -> list[str]:
    """The contents the previous index found no key in, when it was built under these settings (which
    name the key-scan rules: ``RECORDS_VERSION``): the walk does not scan them again."""
    if prev is None or prev.settings != settings or "redacted" not in prev.walk:
        return []
    redacted = prev.walk["redacted"]
    return [entry.sha256 for path, entry in prev.files.items() if path not in redacted]


def _handed_on(batches: deque[list[Any]]) -> Iterator[list[Any]]:
    """Each batch once, dropped from ``batches`` as it is handed on: a run holds the contents of the
    files being chunked and written (a few batches), not of the whole repository (261 MB for a
    repository of 37k files)."""
    while batches:
        yield batches.popleft()


def _old_ids(old_files: dict[str, FileEntry], path: str) -> list[str]:
    """The record ids the previous index holds for ``path`` (none for a new file)."""
    entry = old_files.get(path)
    return entry.ids if entry is not None else []


def _unchanged(record: Any, old: Any) -> bool:
    """Whether a new record is exactly the stored one (same id, content and meta): its vector and
    BM25 tokens, made from the same text by the same embedder, would be the same."""
    return old is not None and record.content == old.content and record.meta == old.meta


def _with_unparsed(
    report: dict,
    prev: Manifest | None,
    unparsed: dict[str, str],
    live: dict[str, str],
    processed: set[str],
    rebuild: bool,
) -> dict:
    """The walk report plus the files that were read but could not be parsed (still in the repo).

    Unchanged files keep the verdict of the run that parsed them, so counts match a full rebuild.
    """
    carried = {} if rebuild or prev is None else dict(prev.walk.get("unparsed", {}))
    merged = {p: why for p, why in carried.items() if p in live and p not in processed}
    merged.update(unparsed)
    counts: dict[str, int] = {}
    for why in merged.values():
        counts[why] = counts.get(why, 0) + 1
    return {**report, "unparsed": dict(sorted(merged.items())), "unparsed_counts": counts}


def _server_down(exc: StoreUnreadable) -> str:
    return f"{exc}; {SERVER_DOWN_FIX} (nothing in the index was changed)"


def _failure(what: str, exc: BaseException) -> str:
    """One line naming the failing component and its error, saying the previous index is unchanged."""
    return f"{what}{failure_line(exc)}; nothing in the index was changed"


def _embedder(pipeline, roles: IndexRoles) -> Any:
    """The document embedder (role ``embedder``), or None for an index YAML without dense vectors."""
    return pipeline.get_component(roles.embedder) if roles.embedder else None


def _embedding_dim(pipeline, roles: IndexRoles) -> int | None:
    try:
        embedder = _embedder(pipeline, roles)
        if getattr(embedder, "dimension", None):  # our embedders say it after warm_up
            return int(embedder.dimension)
        return int(embedder.embedding_backend.model.get_embedding_dimension())
    except Exception:  # noqa: BLE001 - a custom embedder may not expose it
        return None
