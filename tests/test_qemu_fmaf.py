"""``tools/qemu_fmaf.c``, which ``just test-avx2`` preloads into the emulator, computes what glibc's
``fmaf`` computes, bit for bit: the emulated CPU's arithmetic is unchanged, only faster on Intel hosts."""

from __future__ import annotations

import ctypes
import ctypes.util
import shutil
import subprocess

import numpy as np
import pytest

from codeground.components.cpu import vector_flags
from tests.conftest import PROJECT_ROOT

SOURCE = PROJECT_ROOT / "tools" / "qemu_fmaf.c"


@pytest.fixture(scope="module")
def shim_and_libm(tmp_path_factory):
    compiler = shutil.which("cc")
    if compiler is None or "fma" not in vector_flags():
        pytest.skip("needs a C compiler and an FMA CPU, as the recipe does (without them it runs unshimmed)")
    out = tmp_path_factory.mktemp("shim") / "fmaf.so"
    subprocess.run(
        [compiler, "-O2", "-mfma", "-shared", "-fPIC", "-o", str(out), str(SOURCE)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    functions = []
    for library in (ctypes.CDLL(str(out)), ctypes.CDLL(ctypes.util.find_library("m"))):
        fmaf = library.fmaf
        fmaf.argtypes = [ctypes.c_float] * 3
        fmaf.restype = ctypes.c_float
        functions.append(fmaf)
    return functions


def _same(x: float, y: float) -> bool:
    """The same float32 bits (any NaN equals any NaN: their payloads are not the rule here)."""
    return bool(np.isnan(x) and np.isnan(y)) or np.float32(x).view(np.uint32) == np.float32(y).view(np.uint32)


def test_the_emulators_fmaf_shim_returns_glibcs_fused_multiply_add_bit_for_bit(shim_and_libm):
    shim, libm = shim_and_libm
    rng = np.random.default_rng(0)
    # wide exponents (overflow, underflow to subnormals), both signs, and the special values
    triples = (rng.standard_normal((4000, 3)) * 2.0 ** rng.integers(-140, 120, (4000, 3))).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, 1.0, -1.0], np.float32)
    triples = np.vstack([triples, np.array(np.meshgrid(specials, specials, specials)).reshape(3, -1).T])
    # products whose low bits a separate multiply and add would round away: only a fused op keeps them
    eps = np.float32(2.0**-12)
    fused_only = (np.float32(1) + eps, np.float32(1) + eps, -(np.float32(1) + 2 * eps))  # (1+e)^2 = 1+2e+e^2
    triples = np.vstack([triples, np.array([fused_only], np.float32)])
    mismatched = [(a, b, c) for a, b, c in triples.tolist() if not _same(shim(a, b, c), libm(a, b, c))]
    assert mismatched == []
    a, b, c = fused_only
    assert shim(a, b, c) == 2.0**-24 != float(np.float32(a * b) + c)  # fused: e^2 = 2^-24; apart: 0
