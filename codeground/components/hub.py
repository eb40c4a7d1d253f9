"""Whether a model hub id can load now, decided at once: local cache, else one quick probe of the hub.

Rule: offline is normal. Loading a model that is not in the local cache while the hub cannot be
reached makes ``huggingface_hub`` retry for about a minute per command. So, before any model library
is imported:

- a local folder loads if it exists, and never loads if it does not;
- a hub id whose files are in the local cache loads (no network needed);
- otherwise ``HF_HUB_OFFLINE`` set means it cannot load; unset, one TCP connection to the hub
  (``HF_ENDPOINT``, default ``https://huggingface.co``) is tried with a short timeout, once per
  process: no answer means it cannot load, and the caller says so in one line.

A component that reads a hub model's files itself (rather than through a library that downloads
them) gets them with ``hub_folder``: the cached snapshot, found without asking the network, or,
when the files are not cached and the hub can be reached, downloaded once by ``huggingface_hub``.
A cached model is therefore read with no network round trip at every start.

Usage:
```python
from codeground.components.hub import is_hub_id, unavailable

why = unavailable("cross-encoder/ms-marco-MiniLM-L-6-v2")  # None, or an OSError saying why not
assert is_hub_id("cross-encoder/ms-marco-MiniLM-L-6-v2") and not is_hub_id("/models/mine")
```
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

PROBE_TIMEOUT_S = 1.5
TRUE = {"1", "true", "yes", "on"}


def offline_by_setting() -> bool:
    """``HF_HUB_OFFLINE`` (as huggingface_hub reads it) says no network."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in TRUE


@functools.cache
def hub_reachable(endpoint: str | None = None, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """One TCP connection to the hub's host (no retry), name lookup included, within ``timeout_s``
    (a lookup that hangs is not waited for); the answer is kept for the process."""
    url = urlsplit(endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = url.port or (80 if url.scheme == "http" else 443)
    answer: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((url.hostname or "", port), timeout=timeout_s):
                answer.append(True)
        except Exception:  # noqa: BLE001 - DNS failure, refusal, timeout, a sandbox's block: all "no"
            answer.append(False)

    worker = threading.Thread(target=probe, name="codeground-hub-probe", daemon=True)
    worker.start()
    worker.join(timeout_s)
    return bool(answer and answer[0])


def _cached(model: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except Exception:  # noqa: BLE001 - an odd name: let the model library report it
        return True


def unavailable(model: str) -> OSError | None:
    """Why ``model`` (a local folder or a hub id) cannot load right now; None when it may load."""
    if not model or Path(model).expanduser().exists():
        return None
    if _path_like(model):
        return OSError(f"no model folder at {model}")
    if "/" not in model or _cached(model):
        return None
    return _offline(model)


def _offline(model: str) -> OSError | None:
    """Why ``model``, not in the local cache, cannot be downloaded now; None when the hub answers."""
    if offline_by_setting():
        return OSError(f"{model} is not in the local model cache and HF_HUB_OFFLINE is set (offline)")
    if not hub_reachable():
        return OSError(f"{model} is not in the local model cache and the hub cannot be reached (offline)")
    return None


def _path_like(model: str) -> bool:
    """A name only a folder can have: absolute, relative to here or home, or more than ``org/name``."""
    return model.startswith(("/", ".", "~")) or model.count("/") > 1


def is_hub_id(model: str) -> bool:
    """``org/name`` that is not a folder here: what ``unavailable`` asks the hub's cache about."""
    return "/" in model and not _path_like(model) and not Path(model).expanduser().exists()


def hub_folder(model: str, patterns: list[str], *, required: tuple[str, ...] = ()) -> Path:
    """The local snapshot folder of hub model ``model`` holding its files that match ``patterns``
    (each of ``required`` among them): the cached one when it has them, without a network request;
    else downloaded by ``huggingface_hub`` if the hub can be reached. Raises OSError (one line) when
    the files are neither cached nor reachable."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = Path(snapshot_download(model, allow_patterns=patterns, local_files_only=True))
        if all((folder / name).is_file() for name in required):
            return folder
    except LocalEntryNotFoundError:
        pass
    why = _offline(model)
    if why:
        raise why
    folder = Path(snapshot_download(model, allow_patterns=patterns))
    missing = [name for name in required if not (folder / name).is_file()]
    if missing:
        raise OSError(f"{model}: the hub's copy has no {', '.join(missing)}")
    return folder
