"""Torch and posthog are imported when first used, never because Haystack was imported; httpx's
command line, chromadb's OTLP exporter and OpenVINO's model converter when first called
(codeground.deferred_imports)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from codeground.deferred_imports import defer
from tests.conftest import PROJECT_ROOT, search_reporting_modules

OTLP_EXPORTER = "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"


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


def test_importing_httpx_and_chromadb_after_codeground_imports_neither_httpx_cli_nor_otlp_exporter():
    script = (
        "import codeground, httpx, chromadb, sys\n"
        f"print([m in sys.modules for m in ('httpx._main', '{OTLP_EXPORTER}', 'grpc', 'pygments')])\n"
        "print(httpx.main.__doc__)\n"
    )
    assert _run(script).splitlines() == [
        "[False, False, False, False]", "``httpx._main.main``, imported when first called."
    ]


def test_httpx_command_line_is_imported_and_runs_when_called():
    script = (
        "import codeground, httpx, sys\n"
        "try:\n"
        "    httpx.main(['--help'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, type(sys.modules['httpx._main']) is type(sys))\n"
    )
    out = _run(script)
    assert "Usage: httpx" in out and "--method" in out  # httpx's own command line, not its fallback
    assert out.splitlines()[-1] == "exit 0 True"


def test_openvino_converts_a_model_with_its_own_converter_imported_when_first_called():
    script = (
        "import codeground, openvino, sys, torch\n"
        "print('openvino.tools.ovc' in sys.modules)\n"
        "torch.manual_seed(0)\n"
        "layer = torch.nn.Linear(4, 2)\n"
        "ir = openvino.convert_model(layer, example_input=torch.zeros(1, 4))\n"
        "print(type(sys.modules['openvino.tools.ovc']) is type(sys), type(ir) is openvino.Model)\n"
        "x = torch.arange(4.0).reshape(1, 4)\n"
        "compiled = openvino.Core().compile_model(ir, 'CPU', {'INFERENCE_PRECISION_HINT': 'f32'})\n"
        "got = compiled(x.numpy())[0]\n"  # f32 asked for: a bf16-capable CPU would default to bf16
        "print(bool(torch.allclose(torch.from_numpy(got), layer(x).detach(), atol=1e-4)))\n"
    )
    assert _run(script).splitlines() == ["False", "True True", "True"]


def test_chromadb_tracing_to_a_collector_constructs_the_real_otlp_exporter():
    """What chromadb does when the user sets ``chroma_otel_collection_endpoint``: the exporter's module
    is imported then, and the exporter made is the library's own (nothing is sent: no span ends)."""
    script = (
        "import gc, sys\n"
        "import codeground, chromadb.telemetry.opentelemetry as otel\n"
        f"assert '{OTLP_EXPORTER}' not in sys.modules\n"
        "otel.otel_init('codeground-test', 'http://127.0.0.1:4317', {}, otel.OpenTelemetryGranularity.ALL)\n"
        f"from {OTLP_EXPORTER} import OTLPSpanExporter\n"
        "made = [o for o in gc.get_objects() if isinstance(o, OTLPSpanExporter)]\n"
        "print(len(made), type(sys.modules[OTLPSpanExporter.__module__]) is type(sys))\n"
    )
    assert _run(script) == "1 True"


@pytest.fixture
def scratch_modules(tmp_path, monkeypatch):
    """Modules written to ``tmp_path`` and importable; every one of ``NAMES`` removed afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("cg_lib", "cg_user_calls", "cg_user_reads", "cg_tolerant"):
        sys.modules.pop(name, None)


def test_a_deferred_name_is_called_through_and_any_other_name_imports_the_library_at_once(
    scratch_modules
):
    """The stand-in answers only the names its module calls; a name read as a value gets the real
    library's, so nothing but the import's moment changes."""
    tmp_path = scratch_modules
    (tmp_path / "cg_lib.py").write_text(textwrap.dedent("""
        import sys
        sys.modules[__name__].imported = True
        def build(x, *, times=1):
            return ("built", x, times)
        CONSTANT = 42
    """))
    (tmp_path / "cg_user_calls.py").write_text("from cg_lib import build\n")
    (tmp_path / "cg_user_reads.py").write_text("from cg_lib import build, CONSTANT\n")

    defer("cg_user_calls", "cg_lib", ("build",))
    import cg_user_calls

    assert "cg_lib" not in sys.modules
    assert cg_user_calls.build(3, times=2) == ("built", 3, 2)
    assert sys.modules["cg_lib"].imported and cg_user_calls.build.__name__ == "build"

    del sys.modules["cg_lib"]
    defer("cg_user_reads", "cg_lib", ("build",))
    import cg_user_reads

    assert cg_user_reads.CONSTANT == 42 and "cg_lib" in sys.modules  # read at once: imported at once
    assert cg_user_reads.build(1) == ("built", 1, 1)


def test_a_library_whose_parent_package_is_missing_is_not_stood_in_for(scratch_modules):
    """The module meets the missing library itself, as without the stand-in: here it has a fallback."""
    (scratch_modules / "cg_tolerant.py").write_text(textwrap.dedent("""
        try:
            from cg_missing_package.sub import build
        except ImportError:
            build = None
    """))
    defer("cg_tolerant", "cg_missing_package.sub", ("build",))
    import cg_tolerant

    assert cg_tolerant.build is None and "cg_missing_package.sub" not in sys.modules


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
    (Haystack's telemetry, off) 0.08 s, httpx's command line and chromadb's OTLP exporter
    about 0.1 s together, OpenVINO's converter 0.04 s."""
    _, index_dir = indexed_sample
    script = search_reporting_modules({
        "ollama": "ollama", "torch": "torch", "posthog": "posthog", "httpx cli": "httpx._main",
        "otlp exporter": OTLP_EXPORTER, "openvino": "openvino", "openvino converter": "openvino.tools.ovc",
    })
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(index_dir)],
        capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pkg/trainer.py" in proc.stdout
    assert proc.stdout.strip().splitlines()[-7:] == [
        "ollama loaded: False", "torch loaded: False", "posthog loaded: False",
        "httpx cli loaded: False", "otlp exporter loaded: False",
        "openvino loaded: True", "openvino converter loaded: False",  # MiniLM's re-vote loaded
    ]
