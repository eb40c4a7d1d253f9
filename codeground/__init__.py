"""codeground: ask a code repository a question; answers grounded in and cited from the repository.

``codeground.components`` holds the Haystack components the pipeline YAMLs name;
``codeground.app`` the index on disk, pipeline loading, the CLI and the chat.
"""

import os

# Telemetry off before haystack, chromadb or openvino are imported anywhere in the app.
from codeground import telemetry_off as _telemetry_off  # noqa: E402

_telemetry_off.install()
# Servers on this machine (the chat's page, Ollama, Chroma) are reached directly, not through a proxy.
from codeground import loopback_direct as _loopback_direct  # noqa: E402

_loopback_direct.install()
# No download progress bars from the model libraries; codeground draws its own.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# `import haystack` would import torch (1.5-2.2 s) and posthog even where nothing uses them; see
# deferred_imports.
from codeground import deferred_imports as _deferred_imports  # noqa: E402

_deferred_imports.install()
# chromadb's import re-checks every one of its own overrides' signatures (0.12 s); see chromadb_start.
from codeground import chromadb_start as _chromadb_start  # noqa: E402

_chromadb_start.install()
