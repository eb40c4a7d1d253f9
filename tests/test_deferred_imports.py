"""Torch and posthog are imported when first used, never because Haystack was imported
(codeground.deferred_imports)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import PROJECT_ROOT


def _run(script: str, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_importing_haystack_after_codeground_imports_neither_torch_nor_posthog():
    script = "import codeground, haystack, sys; print([m in sys.modules for m in ('torch', 'posthog')])"
    assert _run(script) == "[False, False]"


def test_haystack_device_code_gets_the_real_torch_on_first_use():
    script = (
        "import codeground, sys\n"
        "from haystack.utils import ComponentDevice\n"
        "import haystack.utils.device as device\n"
        "assert 'torch' not in sys.modules\n"
        "d = ComponentDevice.resolve_device(None).to_torch()\n"
        "import torch\n"
        "assert type(sys.modules['torch']) is type(sys)  # the real module, not the stand-in\n"
        "assert isinstance(d, torch.device) and device.torch.Tensor is torch.Tensor\n"
        "assert torch.nn.functional.relu(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]\n"
        "print(d)\n"
    )
    assert _run(script) == "cpu"


def test_haystack_telemetry_turned_on_sets_and_uses_the_real_posthog(tmp_path):
    """The stand-in forwards writes too: Haystack's telemetry, when the user turns it on, sets
    ``posthog.api_key`` on the module as it is imported (nothing is sent: no event is recorded)."""
    script = (
        "import sys\n"
        "import codeground, haystack.telemetry._telemetry as t\n"
        "assert t.telemetry is not None\n"
        "import posthog\n"
        "assert type(sys.modules['posthog']) is type(sys)  # the real module, not the stand-in\n"
        "assert t.posthog.capture is posthog.capture\n"
        "print(posthog.host, bool(posthog.api_key))\n"
    )
    env = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "True", "HOME": str(tmp_path)}
    assert _run(script, env=env) == "https://eu.posthog.com True"


def test_torch_imported_first_is_the_one_haystack_uses():
    script = "import torch, codeground, haystack.utils.device as d; print(d.torch is torch)"
    assert _run(script) == "True"


def test_a_search_process_never_imports_torch_posthog_or_the_llm_client(indexed_sample):
    """The cold `codeground search` path over static vectors: torch's import was ~2 s of it, the
    rewriter's Ollama client (used only for a follow-up, which a search never is) 0.2 s, posthog
    (Haystack's telemetry, off) 0.08 s."""
    _, index_dir = indexed_sample
    script = (
        "import os, sys\n"
        "from codeground.app.cli import main\n"
        "question = 'How does Trainer.fit run epochs?'\n"
        "sys.argv = ['codeground', 'search', question, '--index-dir', sys.argv[1]]\n"
        "real_exit = os._exit\n"
        "def report(code):\n"
        "    print('ollama loaded:', 'ollama' in sys.modules, flush=True)\n"
        "    print('torch loaded:', 'torch' in sys.modules, flush=True)\n"
        "    print('posthog loaded:', 'posthog' in sys.modules, flush=True)\n"
        "    real_exit(code)\n"
        "os._exit = report\n"
        "main()\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(index_dir)],
        capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pkg/trainer.py" in proc.stdout
    assert proc.stdout.strip().splitlines()[-3:] == [
        "ollama loaded: False", "torch loaded: False", "posthog loaded: False"
    ]
