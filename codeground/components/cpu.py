"""What CPU this is, as far as embedding speed goes: its model name and its vector-instruction flags.

Rule: which embedder backend is fastest depends on the CPU's vector extensions (int8 pays only with
VNNI), so measurements and per-machine choices are labelled with these, read from ``/proc/cpuinfo``.

Usage:
```python
from codeground.components.cpu import cpu_model, vector_flags

assert isinstance(cpu_model(), str) and set(vector_flags()) <= {
    "avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"}
```
"""

from __future__ import annotations

import platform
from pathlib import Path

VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")


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
    present = set((_cpuinfo_field("flags") or "").split())
    return [f for f in VECTOR_FLAGS if f in present]


def machine() -> dict[str, object]:
    """What a measurement names of the machine it ran on: cores, CPU model, vector flags, Python."""
    import os
    import platform

    return {
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "flags": vector_flags(),
        "python": platform.python_version(),
    }
