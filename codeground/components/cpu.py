"""What CPU this is, as far as embedding speed goes: its model name and its vector-instruction flags.

Rule: which embedder backend is fastest depends on the CPU's vector extensions (int8 pays only with
VNNI), so measurements and per-machine choices are labelled with these, read from ``/proc/cpuinfo``.
A measurement also names what else changes its figures: whether the CPU computes bf16 natively
(OpenVINO then computes an fp32 export in bf16) and how many logical CPUs share a core (OpenVINO's
LATENCY hint, which the cross-encoder uses, leaves a core's second thread idle).

Usage:
```python
from codeground.components.cpu import cpu_model, threads_per_core, vector_flags

assert isinstance(cpu_model(), str) and set(vector_flags()) <= {
    "avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"}
assert threads_per_core() in (None, 1, 2, 4, 8)
```
"""

from __future__ import annotations

import platform
from pathlib import Path

VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # OpenVINO computes in bf16 by default where one is present


def _cpuinfo_field(name: str) -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (``AMD EPYC``), or what the platform says."""
    return _cpuinfo_field("model name") or platform.processor() or "unknown"


def vector_flags() -> list[str]:
    """The vector-instruction flags, of those that decide which embedder is fastest, this CPU has."""
    return _flags_present(VECTOR_FLAGS)


def _flags_present(names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` that the CPU's flags list, in their order."""
    present = set((_cpuinfo_field("flags") or "").split())
    return [f for f in names if f in present]


def threads_per_core() -> int | None:
    """How many logical CPUs share CPU 0's core (2 with SMT), from sysfs; None where it is not there."""
    try:
        return cpu_list_size(Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list").read_text())
    except (OSError, ValueError):
        return None


def cpu_list_size(cpu_list: str) -> int | None:
    """How many CPUs a kernel CPU list names (``0-1`` or ``0,64``: 2; ``0``: 1; empty: None)."""
    count = 0
    for part in cpu_list.strip().split(","):
        if part:
            low, _, high = part.partition("-")
            count += int(high) - int(low) + 1 if high else 1
    return count or None


def machine() -> dict[str, object]:
    """What a measurement names of the machine it ran on: logical CPUs and how many share a core,
    CPU model and family/model numbers, vector and bf16 flags, Python."""
    import os
    import platform

    return {
        "cores": os.cpu_count(),
        "threads_per_core": threads_per_core(),
        "cpu": cpu_model(),
        # the "model\t" line, not "model name"
        "cpu_family_model": [_cpuinfo_field("cpu family"), _cpuinfo_field("model\t")],
        "flags": _flags_present(VECTOR_FLAGS + BF16_FLAGS),
        "python": platform.python_version(),
    }
