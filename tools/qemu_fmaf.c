/* fmaf for qemu-user on Intel hosts: clear the upper vector state before the fused multiply-add.
 *
 * Rule: `just test-avx2` preloads this into the emulator process (never into the program it
 * emulates: `qemu-x86_64 -U LD_PRELOAD`). qemu 7.2's TCG writes host AVX2 code for the guest's
 * vector instructions and leaves the upper halves of the ymm registers dirty; its float32_muladd
 * helper (legacy SSE) then calls glibc's fmaf (VEX vfmadd). With dirty upper state, Intel cores
 * since Skylake make each legacy SSE instruction that writes a register wait for that register's
 * whole old value, so every call waits on the one before: on the Intel Xeon with AMX of README
 * "Measured", a perf profile of the emulated MiniLM had 89 % of its samples in float32_muladd and
 * __fmaf_fma3, on the instruction after the vfmadd. vzeroupper (ABI-safe at a call: every vector
 * register is call-clobbered) cleans the state; the result is the same IEEE fused multiply-add.
 * Measured there (fp32 MiniLM export, one 32-token text, emulated EPYC-v1): 42.6 s a call without
 * it, 4.9 s with it, the vector identical bit for bit.
 *
 * Build: cc -O2 -mfma -shared -fPIC -o qemu_fmaf.so tools/qemu_fmaf.c
 */
#include <immintrin.h>

float fmaf(float a, float b, float c)
{
    _mm256_zeroupper();
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}
