"""Run a query pipeline over a committed index: retrieval only (`search`) or with an answer (`query`).

Rules:
- The index is opened through its ``CURRENT`` generation (``app.index.live``); a missing index or one
  whose manifest disagrees with its live stores (record counts) is refused with one actionable line,
  and so is a pipeline whose query embedder (kind + model) is not the one that embedded the index.
- The prompt's ``concept_prompt`` comes from ``--system-prompt``, the repository's
  ``.codeground/prompt.md`` or the default (``app.query.concept_prompt``); the grounding contract follows it.
- The pipeline YAML is the full query pipeline; `search` uses it without its prompt and LLM
  components, so swapping the YAML swaps retrieval for both.
- Models and stores load once per engine (``warm_up``); the engine is reused across questions.
- Notices from any component (rewrite, rerank fallback, LLM unreachable) are collected in order.
"""

from __future__ import annotations

import copy
import functools
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.index.embedder_probe import check_text_embedder
from codeground.app.index.index_dir import index_command
from codeground.app.index.live import _open_held
from codeground.app.index.manifest import EmbedderIdentity, Manifest, embedder_identity
from codeground.app.index.store_counts import StoreUnreadable, disagreeing, expected_counts, record_counts
from codeground.app.pipeline.loader import (
    PIPELINES_DIR,
    build_pipeline,
    check_component_types,
    check_server_variables,
    read_pipeline_dict,
    resolve,
)
from codeground.app.pipeline.overlay import drop_components
from codeground.app.pipeline.roles import QueryRoles, RoleError
from codeground.app.query.concept_prompt import ConceptPrompt, resolve_concept_prompt
from codeground.app.query.repair import (
    PROMPT_VARIABLE,
    RepairSettings,
    premise_names_used,
    repaired_text,
    skipped_text,
    withheld_notice,
    withheld_text,
)
from codeground.components.escaping import for_prompt_attribute
from codeground.components.llm_errors import ollama_fix
from codeground.components.notices import (
    REPAIR_SKIPPED,
    REPAIRED,
    UNKNOWN_IDENTIFIERS,
    WITHHELD,
    Notice,
    kind_of,
)

# A longer question would crowd the sources (and the grounding contract) out of the model's context.
MAX_QUESTION_CHARS = 4000


@dataclass
class QueryResult:
    """What one question produced."""

    question: str
    query: str
    documents: list[Any]
    answer: str | None = None
    notices: list[str] = field(default_factory=list)
    seconds: float = 0.0
    grounding: dict[str, Any] | None = None
    premise: dict[str, Any] | None = None  # what the question names that the repository lacks
    flags: dict[str, Any] | None = None  # the answer's command-line flags, and those the repository lacks
    first_answer: str | None = None  # the answer before a repair, when there was one
    repaired: list[str] = field(default_factory=list)  # the names the first answer was asked again about
    first_unknown: list[str] = field(default_factory=list)  # what the check found in the first answer
    withheld: str | None = None  # an answer asked for again that still named what the repository lacks

    @property
    def cited_files(self) -> list[str]:
        """Files behind the sources, in retrieval order, each once."""
        return list(dict.fromkeys(d.meta["file_path"] for d in self.documents))


def _named_absent(result: QueryResult) -> list[str]:
    """What ``result``'s answer names that the repository lacks: identifiers, flags, and the names the
    premise found absent that it uses anyway (``repair``'s rule), each once."""
    return list(
        dict.fromkeys(
            [
                *((result.grounding or {}).get("unknown") or []),
                *((result.flags or {}).get("unknown") or []),
                *premise_names_used(result.answer, result.premise),
            ]
        )
    )


class RepairAbandoned(BaseException):
    """Raised from a repair's token callback once its answer was given up on: the generation stops
    (an in-process model is then free for the next question instead of writing for no one). A
    control signal, not an error (like ``GeneratorExit``): the stock llama.cpp generator logs and
    swallows an ``Exception`` raised by its callback and writes on."""


def check_question(question: str) -> None:
    """A question that can be searched, or a one-line error (checked before any model loads)."""
    if not question or not question.strip():
        raise CodegroundError("the question is empty")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(question[exc.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise CodegroundError(
            f"the question is not UTF-8 text ({what} at character {exc.start + 1}): ask in UTF-8 "
            "(a terminal set to another encoding sends other bytes)"
        ) from None
    if len(question) > MAX_QUESTION_CHARS:
        raise CodegroundError(
            f"the question is {len(question):,} characters long; ask in at most {MAX_QUESTION_CHARS:,} "
            "(quote only the lines that matter)"
        )


def to_build(data: dict[str, Any], roles: QueryRoles | None, *, with_answer: bool) -> dict[str, Any]:
    """What a query run builds of the query YAML ``data``: all of it to answer; to search, a copy
    without the answering components (``roles.generation``: nor their libraries loaded, nor their
    servers' addresses read). The Ollama address the built components would be given is checked
    first (``check_server_variables``), the rewriter's aside: it calls no server for a first question,
    and a follow-up's failed rewrite is a notice, so a malformed one does not stop a search."""
    if not with_answer:
        data = copy.deepcopy(data)
        drop_components(data, list(roles.generation) if roles else [])
    check_server_variables(data, skip=[roles.rewriter] if roles and roles.rewriter else [])
    return data


def check_query(index_dir: str | Path, pipeline_path: str | Path) -> None:
    """What a server checks before it loads a model or opens a port, as a query would: the index
    opens, the YAML parses, names only components it may name that are installed
    (``check_component_types``), its components play the query roles, and it embeds questions as the
    index was embedded. Each failure is one ``CodegroundError`` line."""
    engine = QueryEngine(index_dir, pipeline_path)
    check_component_types(engine.data, pipeline_path)
    engine.roles  # noqa: B018 - the roles property checks them


class QueryEngine:
    """One pipeline YAML over one index, loaded once and reused."""

    def __init__(
        self, index_dir: str | Path, pipeline_path: str | Path, *, system_prompt: str | Path | None = None
    ) -> None:
        self.gen, self.manifest, lease = _open_held(index_dir)
        # the generation stays on disk while this engine lives, even after a re-index replaced it
        self._lease = weakref.finalize(self, lease.close)
        self.pipeline_path = Path(pipeline_path)
        self.data = read_pipeline_dict(self.pipeline_path)
        wanted = embedder_identity(self.data)
        if not self.manifest.embedded_by(wanted):
            raise CodegroundError(
                embedder_mismatch(self.manifest, wanted, self.pipeline_path, self.gen.parent)
            )
        self.system_prompt = system_prompt
        self._search_pipeline = None
        self._answer_pipeline = None
        self._sockets: dict[int, list[tuple[str, str]]] = {}
        self._vectors_checked = False

    # -- building ---------------------------------------------------------------------------------
    @functools.cached_property
    def roles(self) -> QueryRoles:
        """The parts the YAML's components play (checked once the YAML is known to build)."""
        try:
            return QueryRoles.of(self.data)
        except RoleError as exc:
            raise CodegroundError(f"{self.pipeline_path.name}: {exc}") from exc

    def _build(self, *, with_answer: bool):
        try:
            roles: QueryRoles | None = self.roles
        except CodegroundError:  # the build below, then the roles, say what is wrong
            roles = None
        data = resolve(to_build(self.data, roles, with_answer=with_answer), index_dir=self.gen)
        pipeline = build_pipeline(data)
        _ = self.roles  # a broken role is refused before any model loads
        self._check_stores(pipeline)
        question_embedder = _text_embedder(pipeline)
        if callable(getattr(question_embedder, "use_export", None)):  # the export the index names
            question_embedder.use_export(self.manifest.embedder_export)
        try:
            pipeline.warm_up()
        except Exception as exc:  # noqa: BLE001 - a model that cannot load is a user-facing problem
            raise CodegroundError(
                f"cannot load the query pipeline: {' '.join(str(exc).split())[:300]}"
            ) from exc
        if not self._vectors_checked:  # one check per engine, not one per pipeline it builds
            check_text_embedder(
                question_embedder,
                self.manifest.embedder_probe,
                rebuild=self._rebuild_command(),
            )
            self._vectors_checked = True
        return pipeline

    def _rebuild_command(self) -> str:
        return index_command(self.gen.parent, self.manifest.root, "--full")

    def _check_stores(self, pipeline) -> None:
        """Refuse a stale index: every store the pipeline reads must hold the manifest's records."""
        try:
            counts = record_counts(pipeline)
        except StoreUnreadable as exc:
            raise CodegroundError(exc.remedy(self._rebuild_command())) from exc
        m = self.manifest
        expected = expected_counts(pipeline, counts, self.gen, m.chunk_count, m.store_counts)
        for name, count in disagreeing(counts, expected).items():
            raise CodegroundError(
                f"stale index: the manifest lists {expected[name]} records for the store behind '{name}' "
                f"but it holds {count}; rebuild with `{self._rebuild_command()}`"
            )

    @functools.cached_property
    def concept_prompt(self) -> ConceptPrompt:
        """The prompt the model reads first (read when first needed: ``search`` does not use it)."""
        return resolve_concept_prompt(system_prompt=self.system_prompt, repo_root=self.manifest.root)

    @property
    def search_pipeline(self):
        if self._search_pipeline is None:
            self._search_pipeline = self._build(with_answer=False)
        return self._search_pipeline

    @property
    def answer_pipeline(self):
        if self._answer_pipeline is None:
            self._answer_pipeline = self._build(with_answer=True)
        return self._answer_pipeline

    def symbol_store(self) -> Any:
        """The store the search pipeline looks symbols up in: the first one with ``records_by_symbol``
        (the BM25 store for the default YAMLs, the Qdrant collection for ``query_qdrant.yaml``)."""
        for _, component in self.search_pipeline.walk():
            store = getattr(component, "document_store", None)
            if callable(getattr(store, "records_by_symbol", None)):
                return store
        raise CodegroundError(f"{self.pipeline_path.name}: none of its stores looks symbols up")

    def warm_up(self, *, with_answer: bool = False) -> None:
        """Load models and stores now rather than at the first question."""
        _ = self.answer_pipeline if with_answer else self.search_pipeline

    # -- running ----------------------------------------------------------------------------------
    def _inputs(self, pipeline, question: str, history: list | None) -> dict[str, Any]:
        """Feed the question to every component that takes it (the rewriter, or the retrievers)."""
        data: dict[str, Any] = {}
        for name, socket in self._question_sockets(pipeline):
            data[name] = {socket: question}
            if name == self.roles.rewriter:
                data[name]["history"] = history or []
        return data

    def _question_sockets(self, pipeline) -> list[tuple[str, str]]:
        """``(component, socket)`` pairs that take the question, worked out once per pipeline."""
        cached = self._sockets.get(id(pipeline))
        if cached is None:
            cached = []
            for name, sockets in pipeline.inputs().items():
                socket = (
                    "question"
                    if name == self.roles.rewriter
                    else next((s for s in ("query", "text", "question") if s in sockets), None)
                )
                if socket:
                    cached.append((name, socket))
            self._sockets[id(pipeline)] = cached
        return cached

    def _final_documents(self, out: dict[str, Any]) -> list[Any]:
        documents = out.get(self.roles.documents, {}).get("documents")
        if documents is None:
            raise CodegroundError(
                f"{self.pipeline_path.name}: '{self.roles.documents}' (role 'documents') "
                "produced no documents"
            )
        return documents

    def _run(self, pipeline, question: str, history: list | None, extra: dict[str, Any]) -> dict[str, Any]:
        check_question(question)
        data = self._inputs(pipeline, question, history)
        for name, values in extra.items():
            if name in pipeline.graph.nodes:
                data.setdefault(name, {}).update(values)
        include = {n for n in pipeline.graph.nodes}
        try:
            return pipeline.run(data, include_outputs_from=include)
        except CodegroundError:
            raise
        except Exception as exc:  # noqa: BLE001
            message = " ".join(str(exc).split())[:300]
            raise CodegroundError(f"the query pipeline failed: {message}{ollama_fix(message)}") from exc

    def search(self, question: str, *, k: int = 10, history: list | None = None) -> QueryResult:
        """Retrieval only: ranked sources and notices."""
        t0 = time.perf_counter()
        pipeline = self.search_pipeline  # built (and its roles checked) first
        extra = {self.roles.top_k: {"top_k": k}} if self.roles.top_k else {}
        out = self._run(pipeline, question, history, extra)
        docs = self._final_documents(out)[:k]
        return QueryResult(
            question=question,
            query=self._query_of(out, question),
            documents=docs,
            notices=self._notices(out),
            seconds=time.perf_counter() - t0,
        )

    def answer(
        self,
        question: str,
        *,
        history: list | None = None,
        on_token: Callable[[str], None] | None = None,
        repair: bool | None = None,
        on_repair: Callable[[list[str]], None] | None = None,
    ) -> QueryResult:
        """Retrieval plus the streamed, grounded answer, repaired once when it names what the
        repository lacks (``codeground.app.query.repair``; ``repair=False`` turns that off). ``on_repair``
        is told the names just before the corrected answer starts streaming."""
        t0 = time.perf_counter()
        first = self._answer_once(question, history, on_token, {})
        settings = RepairSettings.of(self.data)
        invented = list((first.grounding or {}).get("unknown") or [])
        unknown = _named_absent(first)
        pipeline = self.answer_pipeline
        can_tell = self.roles.prompt and PROMPT_VARIABLE in pipeline.inputs().get(self.roles.prompt, {})
        if (
            not (settings.enabled if repair is None else repair)
            or not unknown
            or not first.answer
            or not can_tell
        ):
            return first
        left = settings.budget_s - (time.perf_counter() - t0)
        if left <= 0:
            first.notices.append(
                Notice(
                    REPAIR_SKIPPED,
                    f"not asked again: the answer took over the repair budget ({settings.budget_s:.0f} s)",
                )
            )
            return first
        if on_repair:
            on_repair(unknown)
        forward = threading.Event()
        forward.set()
        box: dict[str, Any] = {}

        def relay(token: str) -> None:  # kept until checked (repair.py); given up on, it stops writing
            if not forward.is_set():  # so the model is free for what comes next
                raise RepairAbandoned("the repair was given up on")

        def again() -> None:
            try:
                box["result"] = self._answer_once(first.query, None, relay, {PROMPT_VARIABLE: unknown})
            except CodegroundError as exc:
                box["error"] = str(exc)
            except RepairAbandoned:
                pass  # the question was answered without it

        worker = threading.Thread(target=again, name="codeground-repair", daemon=True)
        worker.start()
        worker.join(timeout=left)
        forward.clear()  # a late second answer never reaches the client
        second = box.get("result")
        if second is None or not second.answer:
            why = box.get("error") or (
                f"it took over {left:.0f} s" if worker.is_alive() else "no answer came"
            )
            first.notices.append(
                Notice(
                    REPAIR_SKIPPED,
                    skipped_text(unknown, why),
                )
            )
            return first
        kept = [n for n in first.notices if kind_of(n) != UNKNOWN_IDENTIFIERS]
        notices = list(dict.fromkeys([*kept, Notice(REPAIRED, repaired_text(unknown)), *second.notices]))
        still = _named_absent(second)
        if still:
            second.withheld, second.answer = second.answer, withheld_text(still)
            notices.append(Notice(WITHHELD, withheld_notice(still)))
        if on_token:
            on_token(second.answer)
        second.question, second.notices = question, notices
        second.first_answer, second.repaired, second.first_unknown = first.answer, unknown, invented
        second.seconds = time.perf_counter() - t0
        return second

    def _answer_once(
        self,
        question: str,
        history: list | None,
        on_token: Callable[[str], None] | None,
        prompt: dict[str, Any],
    ) -> QueryResult:
        t0 = time.perf_counter()
        pipeline = self.answer_pipeline  # built (and its roles checked) first
        roles = self.roles
        extra: dict[str, Any] = {}
        if roles.prompt and "concept_prompt" in pipeline.inputs().get(roles.prompt, {}):
            extra[roles.prompt] = {"concept_prompt": self.concept_prompt.text}
        if prompt and roles.prompt:
            extra.setdefault(roles.prompt, {}).update(prompt)
        if on_token is not None and roles.answer:
            extra[roles.answer] = {"streaming_callback": lambda chunk: on_token(chunk.content or "")}
        out = self._run(pipeline, question, history, extra)
        replies = out.get(roles.answer, {}).get("replies") or [] if roles.answer else []
        messages = out.get(roles.prompt, {}).get("prompt") or [] if roles.prompt else []
        docs = _shown_to_model(self._final_documents(out), messages)
        return QueryResult(
            question=question,
            query=self._query_of(out, question),
            documents=list(docs),
            answer=(replies[0].text if replies else None),
            notices=self._notices(out),
            seconds=time.perf_counter() - t0,
            grounding=out.get(roles.grounding, {}).get("grounding") if roles.grounding else None,
            premise=out.get(roles.premise, {}).get("premise") if roles.premise else None,
            flags=out.get(roles.flags, {}).get("flags") if roles.flags else None,
        )

    def _query_of(self, out: dict[str, Any], question: str) -> str:
        if not self.roles.rewriter:
            return question
        return out.get(self.roles.rewriter, {}).get("query", question)

    def _notices(self, out: dict[str, Any]) -> list[str]:
        notices: list[str] = []
        for name in self.roles.notices:
            notices.extend(out.get(name, {}).get("notices", []))
        return notices


def embedder_mismatch(
    manifest: Manifest, wanted: EmbedderIdentity | None, pipeline_path: Path, index_dir: Path
) -> str:
    """Both embedders and the fix: the shipped YAMLs that match the index, or how to re-index."""
    have = manifest.embedder_identity
    matching = sorted(
        p.name
        for p in PIPELINES_DIR.glob("*.yaml")
        if not p.name.startswith("index") and _identity_of(p) == have and have is not None
    )
    rebuild = sorted(p.name for p in PIPELINES_DIR.glob("index*.yaml") if _identity_of(p) == wanted)
    fixes = []
    if matching:
        fixes.append("query with --pipeline " + " or ".join(f"pipelines/{n}" for n in matching[:3]))
    index_yaml = f"pipelines/{rebuild[0]}" if rebuild else "an index YAML with that embedder"
    fixes.append(
        f"re-index with `{index_command(index_dir, manifest.root, '--full', '--pipeline', index_yaml)}`"
    )
    return (
        f"the index was embedded with {have} but {pipeline_path.name} embeds questions with {wanted}; "
        + ", or ".join(fixes)
    )


def _identity_of(path: Path) -> EmbedderIdentity | None:
    try:
        return embedder_identity(read_pipeline_dict(path))
    except CodegroundError:
        return None


def _text_embedder(pipeline) -> Any:
    """The component that embeds the question (the one with a ``text`` input and an ``embedding``
    output), or None for a pipeline without dense retrieval."""
    for name, sockets in pipeline.inputs(include_components_with_connected_inputs=True).items():
        outputs = pipeline.outputs(include_components_with_connected_outputs=True).get(name, {})
        if "text" in sockets and "embedding" in outputs:
            return pipeline.get_component(name)
    return None


def _shown_to_model(docs: list[Any], messages: list[Any]) -> list[Any]:
    """The sources the prompt actually quoted (a template may quote fewer than were retrieved)."""
    rendered = "\n".join(m.text or "" for m in messages)
    if not rendered:
        return docs

    def quoted(d: Any) -> bool:  # the shipped <excerpt file=… lines=…> tag, or a `path:start-end` heading
        path, lines = d.meta["file_path"], f"{d.meta['start_line']}-{d.meta['end_line']}"
        tag = f'file="{for_prompt_attribute(path)}" lines="{for_prompt_attribute(lines)}"'
        return tag in rendered or f"{path}:{lines}" in rendered

    return [d for d in docs if quoted(d)]
