"""The correctness rule: a reference answer's key facts, found verbatim in an answer."""

import pytest

from codeground.app.answering.key_facts import facts_found, has_facts, key_facts


@pytest.mark.parametrize(
    "reference, facts",
    [
        (
            "It returns `mk.Format.Batched` from `activation_formats`.",
            ["mk.Format.Batched", "activation_formats"],
        ),
        ("FP8_MIN defaults to float8_info.min.", ["FP8_MIN", "float8_info.min"]),
        ("Pass --max-model-len 4096 and 'auto'.", ["--max-model-len", "auto", "4096"]),
        ("The NIXLConnector returns two values.", ["NIXLConnector"]),
        ("It serves Mixture of Experts models at scale.", []),  # prose only: nothing to check
    ],
)
def test_code_names_flags_quoted_values_and_numbers_are_the_key_facts(reference, facts):
    assert key_facts(reference) == facts


def test_a_long_code_span_gives_its_flags_and_names_not_the_whole_command():
    facts = key_facts(
        "Run `lm_eval --model vllm --tasks gsm8k --num_fewshot 5 --limit 250 --batch_size 8 x`."
    )
    assert facts[:5] == ["--model", "--tasks", "--num_fewshot", "--limit", "--batch_size"]
    assert "lm_eval" in facts and not any(" " in f for f in facts)


def test_what_the_question_writes_is_no_key_fact():
    assert key_facts("Use `LLM.embed` in vLLM.", "How do I embed prompts in vLLM?") == ["LLM.embed"]


def test_a_number_inside_a_name_is_not_a_number_of_its_own():
    assert key_facts("Load meta-llama/Llama-3.2-1B on port 8000.") == ["8000"]


def test_an_answer_has_a_fact_verbatim_whitespace_aside_and_case_sensitive():
    facts = ["FP8_MIN", "--kv-cache-dtype fp8"]
    assert has_facts("FP8_MIN; use `--kv-cache-dtype   fp8`", facts)
    assert facts_found("fp8_min; --kv-cache-dtype fp8", facts) == ["--kv-cache-dtype fp8"]
    assert not has_facts("anything", [])  # no facts: not counted correct
