# codeground tasks. Prerequisite: `pip install rust-just` (gives `just`) and Python 3.11.
set shell := ["bash", "-euo", "pipefail", "-c"]

venv := ".venv"
py := venv + "/bin/python"
# The CPU build of torch; a bare `torch` would pull several GB of CUDA libraries.
torch_spec := env_var_or_default("TORCH_SPEC", "torch==2.13.0")

export HAYSTACK_TELEMETRY_ENABLED := "False"
export ANONYMIZED_TELEMETRY := "False"
export TOKENIZERS_PARALLELISM := "false"

# list recipes
default:
    @just --list

# llama.cpp is compiled for this CPU (-march=native) but without its AMX kernels: on an AMX Xeon
# (Sapphire Rapids, 2026-12-08) their first `tileloadd` killed the process with SIGILL as soon as a
# prompt of more than a few tokens was read (docs/setup.md)
llama_cmake := "-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'"

# create .venv and install codeground with its dev tools and the embedded answering runtime
# (llama.cpp, compiled once per virtual environment: ~7 min on 2 cores) (idempotent)
setup:
    test -x {{py}} || python3.11 -m venv {{venv}} || python3 -m venv {{venv}}
    {{py}} -m pip install -q --disable-pip-version-check "{{torch_spec}}"
    # built here, not taken from pip's wheel cache, which keeps a wheel by its source and not its flags
    {{py}} -c "import llama_cpp, sys; sys.exit(b'AMX_INT8 = 1' in llama_cpp.llama_print_system_info())" 2>/dev/null || \
        { if [ "$(uname -m)" = x86_64 ]; then export CMAKE_ARGS="{{llama_cmake}}"; fi; \
        {{py}} -m pip install -q --disable-pip-version-check --no-cache-dir --force-reinstall --no-deps \
        "llama-cpp-python>=0.3.36,<0.4"; }
    {{py}} -m pip install -q --disable-pip-version-check -e ".[dev,llamacpp]"

# index a repository (default: this checkout) into <repo>/.codeground
index path="." *args="": setup
    {{venv}}/bin/codeground index {{path}} {{args}}

# index codeground's own checkout and open the chat on it (the main job on a fresh machine)
demo port="7860": setup
    {{venv}}/bin/codeground index .
    {{venv}}/bin/codeground chat --repo . --port {{port}}

# start the chat on an existing index (default: this checkout's)
chat *args="": setup
    {{venv}}/bin/codeground chat {{args}}

# start Ollama if installed and not running (q8_0 KV cache, flash attention) and pull the pipelines' models
ollama *args="": setup
    {{venv}}/bin/codeground ollama serve {{args}}

# what `query` needs and the fix for each missing piece (index, embedder, reranker, LLM server, models)
doctor *args="": setup
    {{venv}}/bin/codeground doctor {{args}}

# run the test suite (fast; the slow real-corpus checks are in `bench`)
test *args="": setup
    {{py}} -m pytest {{args}}

avx2_tests := "tests/components/embedders tests/components/rankers/test_bi_encoder.py tests/app/index/test_minilm_export.py tests/app/query/test_query.py tests/app/query/test_named_symbol_seat.py tests/app/query/test_interface_prior.py"
# in an emulated process of its own: after the tests above, the emulator itself dies during its int8 test (docs/measurements/avx2-emulated.md)
avx2_alone := "tests/components/rankers/test_openvino_cross_encoder.py"

# the CPU-dependent tests on an emulated AVX2-only CPU (qemu-user's EPYC-v1; slow, see docs/measurements/avx2-emulated.md)
test-avx2 *args="": setup
    command -v qemu-x86_64 >/dev/null || { echo "error: test-avx2 needs qemu-x86_64 (Debian: apt-get install qemu-user)" >&2; exit 1; }
    export CODEGROUND_PRECISION_DIR="$(mktemp -d)" && shim="$(mktemp -d)" && \
    trap 'rm -rf "$CODEGROUND_PRECISION_DIR" "$shim"' EXIT && \
    {{venv}}/bin/codeground embedder choose --precision int8 && \
    if grep -qw fma /proc/cpuinfo && cc -O2 -mfma -shared -fPIC -o "$shim/fmaf.so" tools/qemu_fmaf.c 2>/dev/null; \
    then preload="$shim/fmaf.so"; else preload=""; \
    echo "note: no C compiler or no FMA here: emulating without tools/qemu_fmaf.c (about 9x slower on Intel hosts)" >&2; fi && \
    emulated() { LD_PRELOAD="$preload" QEMU_CPU=EPYC-v1 qemu-x86_64 -U LD_PRELOAD {{py}} -m pytest -p no:cacheprovider "$@" \
        2> >(grep -v "TCG doesn't support" >&2); } && \
    {{ if args == "" { "emulated " + avx2_tests + " && emulated " + avx2_alone } else { "emulated " + args } }}

# benchmark on vLLM 0.10.1 (fetched from PyPI once into ~/.cache/codeground): index, recall, latency
bench *args="": setup
    {{venv}}/bin/codeground bench {{args}}

# train codeground's own cross-encoder on this machine (about 25 min on 2 cores) and install it
reranker *args="": setup
    {{venv}}/bin/codeground reranker build {{args}}

# lint
lint: setup
    {{venv}}/bin/ruff check codeground tests
