"""Tests for extract_identifiers: which names in an answer are claims about the repository."""

from __future__ import annotations

import pytest

from codeground.components.grounding.extract import ALLOWLIST, extract_identifiers

PYTHON_FENCE = """Load the model like this:

```python
from vllm import LLM, SamplingParams
import os
from pathlib import Path

llm = LLM(model="facebook/opt-125m", trust_remote_code=True)  # see pkg/llm.py:10
params = SamplingParams(temperature=0.8, top_p=0.95)
outputs = llm.generate(prompts, params)
for out in outputs:
    print(out.outputs[0].text, len(out.prompt), os.environ["HOME"])
results = []
results.append(Path("a"))
```
"""

CASES = [
    # (rule, answer, expected identifiers in order)
    ("prose without code-looking words counts nothing", "The model is trained for three epochs.", []),
    (
        "prose counts CamelCase with an inner capital and snake_case",
        "LLMEngine schedules requests; SamplingParams holds max_tokens. Use it.",
        ["LLMEngine", "SamplingParams", "max_tokens"],
    ),
    (
        "prose counts dotted names and calls, not English with (s)",
        "Call Trainer.fit after vllm.LLM is built, then evaluate(). The function(s) return.",
        ["Trainer.fit", "vllm.LLM", "evaluate"],
    ),
    (
        "an inline call yields its name and its keyword arguments, not positional ones",
        "Use `Trainer(model, trust_remote_code=False)` here.",
        ["Trainer", "trust_remote_code"],
    ),
    (
        "a single name in backticks counts whatever its case",
        "The `fit` method of `Trainer.fit()` takes a `model`.",
        ["fit", "Trainer.fit", "model"],
    ),
    (
        "a fenced block yields imports, calls, kwargs and attributes; its own names and stdlib do not count",
        PYTHON_FENCE,
        [
            "vllm",
            "LLM",
            "SamplingParams",
            "model",
            "trust_remote_code",
            "temperature",
            "top_p",
            "generate",
            "outputs",
            "text",
            "prompt",
        ],
    ),
    (
        "builtins, keywords and standard-library names are ignored",
        "Call `print(len(x))`, `os.path.join`, `json.dumps(obj, indent=2)` and `isinstance(` with `True`.",
        [],
    ),
    (
        "citations, paths and file names are not identifiers",
        "See pkg/trainer.py:33-35 and trainer.py:12, or `vllm/engine/llm_engine.py` and `setup.py`.",
        [],
    ),
    (
        "URLs and e-mail addresses are not identifiers",
        "Docs: https://docs.vllm.ai/en/latest/api_reference.html?x=LLMEngine or mail dev_team@example.com.",
        [],
    ),
    (
        "acronyms, product names, abbreviations and numbers do not count",
        "On GPUs, PyTorch runs LLMs fast, e.g. version 1.2.3 with 3e5 steps; see example.com.",
        [],
    ),
    (
        "prose name=value counts as a keyword argument",
        "Pass dtype=float16 and seed=0 (a == b does not count).",
        ["dtype", "seed"],
    ),
    (
        "a shell block counts only dotted and snake_case names, never flags",
        "```bash\npip install vllm\npython -m vllm.entrypoints.api_server --trust-remote-code\n"
        "export HF_TOKEN=abc\n```",
        ["vllm.entrypoints.api_server", "HF_TOKEN"],
    ),
    (
        "an import alias resolves to the imported name",
        "```python\nimport numpy as np\nfrom vllm import LLM as Engine\n"
        "x = np.zeros(3)\nEngine(model_id=1)\n```",
        ["numpy", "vllm", "LLM", "numpy.zeros", "model_id"],
    ),
    (
        "kwargs of an ignored callee or of the answer's own function do not count",
        "```python\ndef helper(a, b_value=2):\n    return dict(key_name=a)\nhelper(1, b_value=3)\n```",
        [],
    ),
    (
        "self is dropped and a dotted name is reported once, in order of first appearance",
        "`self.trainer.fit_fast(batch)` then Trainer.fit_fast again and `self.trainer.fit_fast`.",
        ["trainer.fit_fast", "Trainer.fit_fast"],
    ),
    (
        "markdown emphasis and dunders are not snake_case",
        "This is _really_ important: __init__ runs __first__.",
        [],
    ),
]


@pytest.mark.parametrize(("rule", "answer", "expected"), CASES, ids=[c[0] for c in CASES])
def test_extraction_rules(rule, answer, expected):
    assert extract_identifiers(answer) == expected


def test_empty_answer_has_no_identifiers():
    assert extract_identifiers("") == []
    assert extract_identifiers("   \n") == []


def test_extra_allowlist_ignores_names_and_dotted_names_rooted_at_them():
    answer = "Use `torch.nn.Module` and `Trainer` with torch_dtype=1."
    assert extract_identifiers(answer) == ["torch.nn.Module", "Trainer", "torch_dtype"]
    assert extract_identifiers(answer, allowlist=["torch", "Trainer"]) == ["torch_dtype"]


def test_allowlist_holds_keywords_builtins_and_common_stdlib():
    assert {
        "None",
        "True",
        "print",
        "len",
        "dict",
        "self",
        "os",
        "sys",
        "json",
        "re",
        "typing",
        "Path",
    } <= ALLOWLIST
    assert "Trainer" not in ALLOWLIST


def test_unterminated_fence_is_still_read_as_code():
    assert extract_identifiers("```python\nfrom vllm import LLM\nLLM(gpu_memory_utilization=0.9)") == [
        "vllm",
        "LLM",
        "gpu_memory_utilization",
    ]


def test_interactive_prompts_are_stripped():
    answer = "```pycon\n>>> from vllm import LLM\n>>> llm = LLM('m')\n>>> llm.generate_fast('hi')\n```"
    assert extract_identifiers(answer) == ["vllm", "LLM", "generate_fast"]
