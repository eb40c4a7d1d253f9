"""Where the reranker built on this machine lives, and the name a pipeline YAML gives it.

Rule: ``codeground reranker build`` installs its model (a Hugging Face folder: ``config.json``,
``model.safetensors``, ``tokenizer.json``, plus ``build.json`` with what it was trained on and how it
scored) atomically at ``$CODEGROUND_CACHE/models/codeground-reranker``. A YAML names it
``codeground-reranker``; any other model value is a folder path.

Usage:
```python
from codeground.reranker.location import BUILT_RERANKER, resolve_reranker

assert resolve_reranker(BUILT_RERANKER).name == "codeground-reranker"
assert str(resolve_reranker("/models/my-cross-encoder")) == "/models/my-cross-encoder"
```
"""

from __future__ import annotations

from pathlib import Path

from codeground.components.embedders.model_cache import cache_root

BUILT_RERANKER = "codeground-reranker"


def built_reranker_dir() -> Path:
    """The folder ``codeground reranker build`` installs into (it may not exist yet)."""
    return cache_root() / BUILT_RERANKER


def resolve_reranker(model: str | Path) -> Path:
    """The folder ``model`` names: the built reranker for ``codeground-reranker``, else the path itself."""
    return built_reranker_dir() if str(model) == BUILT_RERANKER else Path(model).expanduser()
