"""A codeground process sends no usage data and writes nothing to the home folder for a library's
telemetry (codeground.telemetry_off)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import PROJECT_ROOT

SWITCHES = ("HAYSTACK_TELEMETRY_ENABLED", "ANONYMIZED_TELEMETRY")


def _run(script: str, home) -> str:
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env["HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=180, cwd=PROJECT_ROOT, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_openvino_and_nncf_use_their_no_op_telemetry_and_leave_the_home_folder_alone(tmp_path):
    """Without this, ``import openvino`` counts itself in ~/intel/stats and sends a Google Analytics
    event from a forked process on every search; NNCF's quantization does the same."""
    script = (
        "import codeground, multiprocessing, threading\n"
        "import openvino.tools.ovc.telemetry_utils as ovc\n"
        "from nncf.telemetry import wrapper\n"
        "print(ovc.tm.__name__)\n"
        "print(isinstance(wrapper.telemetry, wrapper.NNCFTelemetry))\n"
        "print(threading.active_count(), len(multiprocessing.active_children()))\n"
    )
    assert _run(script, tmp_path).splitlines() == ["openvino.tools.ovc.telemetry_stub", "False", "1 0"]
    assert list(tmp_path.iterdir()) == []


def test_haystack_and_chroma_telemetry_default_to_off_and_a_users_setting_is_kept(tmp_path):
    script = f"import codeground, os; print(*(os.environ[name] for name in {SWITCHES}))"
    assert _run(script, tmp_path) == "False False"
    script = "import os; os.environ['ANONYMIZED_TELEMETRY'] = 'True'\n" + script
    assert _run(script, tmp_path) == "False True"
