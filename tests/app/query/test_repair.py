"""Repair, then mark (codeground/app/query/repair.py), on the sample repository's real index with the
fake Ollama server: an invented name gets one more model call, with the names listed as absent."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codeground.app.pipeline.loader import PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from codeground.app.query.repair import withheld_text
from codeground.components.notices import REPAIR_SKIPPED, REPAIRED, UNKNOWN_IDENTIFIERS, WITHHELD, kind_of

QUERY = PIPELINES_DIR / "query.yaml"
INVENTED = "Call `Trainer.fit_fast(data)` to train."
GROUNDED = "Call `Trainer.fit(data)` to train."
TOLD = "Your previous answer to this question named"


def _last_user(body: dict) -> str:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


@pytest.fixture(scope="module")
def index_dir(indexed_sample) -> Path:
    return indexed_sample[1]


def _chat_calls(fake) -> list:
    return [r for r in fake.requests_to("/api/chat") if "Repository material" in _last_user(r.body)]


def test_an_invented_method_is_repaired_on_the_second_call_and_the_notice_says_so(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply=lambda body: GROUNDED if TOLD in _last_user(body) else INVENTED)
    tokens, told = [], []
    result = QueryEngine(index_dir, QUERY).answer(
        "How do I fit a Trainer?", on_token=tokens.append, on_repair=told.append
    )
    assert result.answer == GROUNDED and result.first_answer == INVENTED
    assert result.repaired == ["Trainer.fit_fast"] and told == [["Trainer.fit_fast"]]
    assert result.grounding["unknown"] == []
    assert [kind_of(n) for n in result.notices].count(REPAIRED) == 1
    assert UNKNOWN_IDENTIFIERS not in [kind_of(n) for n in result.notices]
    calls = _chat_calls(fake_ollama)
    assert len(calls) == 2 and "Trainer.fit_fast" in _last_user(calls[1].body).split(TOLD, 1)[1]
    assert "".join(tokens) == INVENTED + GROUNDED  # both streamed; the client was told in between


def test_a_model_that_invents_again_is_withheld_and_the_user_gets_the_refusal(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    again = "Use `Trainer.train_all()`."
    fake_ollama.configure(reply=lambda body: again if TOLD in _last_user(body) else INVENTED)
    tokens: list[str] = []
    result = QueryEngine(index_dir, QUERY).answer("How do I fit a Trainer?", on_token=tokens.append)
    assert result.answer == withheld_text(["Trainer.train_all"]) and result.withheld == again
    assert result.grounding["unknown"] == ["Trainer.train_all"] and result.documents  # closest sources
    kinds = [kind_of(n) for n in result.notices]
    assert REPAIRED in kinds and UNKNOWN_IDENTIFIERS in kinds and WITHHELD in kinds
    assert "".join(tokens) == INVENTED + result.answer  # the second answer never streamed as the answer
    assert len(_chat_calls(fake_ollama)) == 2  # at most one retry


def test_no_repair_makes_one_call_and_a_grounded_answer_is_never_asked_again(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply=INVENTED)
    result = QueryEngine(index_dir, QUERY).answer("How do I fit a Trainer?", repair=False)
    assert result.answer == INVENTED and result.grounding["unknown"] == ["Trainer.fit_fast"]
    fake_ollama.reset()
    fake_ollama.configure(reply=GROUNDED)
    assert QueryEngine(index_dir, QUERY).answer("How do I fit a Trainer?").repaired == []
    assert len(_chat_calls(fake_ollama)) == 1


def test_a_repair_past_its_budget_keeps_the_first_answer_marked(
    index_dir, fake_ollama, monkeypatch, tmp_path
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    variant = tmp_path / "query_quick_repair.yaml"
    variant.write_text(f"extends: {QUERY}\nmetadata:\n  repair:\n    budget_s: 1.5\n")

    def slow_second(body: dict) -> str:
        if TOLD in _last_user(body):
            time.sleep(4)
            return GROUNDED
        return INVENTED

    fake_ollama.configure(reply=slow_second)
    tokens: list[str] = []
    engine = QueryEngine(index_dir, variant)
    engine.warm_up(with_answer=True)  # the budget is for answering, not for loading models
    result = engine.answer("How do I fit a Trainer?", on_token=tokens.append)
    # the client did not wait for the late answer (no timing bound: a slow CPU may even use up the
    # budget on the first answer, which must end the same way)
    assert result.answer == INVENTED and result.grounding["unknown"] == ["Trainer.fit_fast"]
    assert REPAIR_SKIPPED in [kind_of(n) for n in result.notices]
    time.sleep(4.5)
    assert "".join(tokens) == INVENTED  # the late second answer never reaches the client


def test_a_yaml_can_turn_repair_off(index_dir, fake_ollama, monkeypatch, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    variant = tmp_path / "query_no_repair.yaml"
    variant.write_text(f"extends: {QUERY}\nmetadata:\n  repair:\n    enabled: false\n")
    fake_ollama.configure(reply=INVENTED)
    assert QueryEngine(index_dir, variant).answer("How do I fit a Trainer?").answer == INVENTED
    assert len(_chat_calls(fake_ollama)) == 1


NOT_MENTIONED = "How do I fit a Trainer on data stored in PostgreSQL?"


def test_an_answer_built_on_a_proper_noun_the_repository_never_mentions_is_asked_again(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    assumed = "Load the rows from PostgreSQL, then call `Trainer.fit(data)`."
    fake_ollama.configure(reply=lambda body: GROUNDED if TOLD in _last_user(body) else assumed)
    result = QueryEngine(index_dir, QUERY).answer(NOT_MENTIONED)
    assert result.premise["proper_absent"] == ["PostgreSQL"]  # told to the model, not refused
    assert result.answer == GROUNDED and result.first_answer == assumed
    assert result.repaired == ["PostgreSQL"] and REPAIRED in [kind_of(n) for n in result.notices]
    assert result.first_unknown == []  # not an invented identifier: the check found none
    calls = _chat_calls(fake_ollama)
    assert len(calls) == 2 and "PostgreSQL" in _last_user(calls[1].body).split(TOLD, 1)[1]


def test_an_answer_saying_the_material_does_not_cover_the_absent_name_is_not_asked_again(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    refusal = "This repository material does not answer it: nothing in it mentions PostgreSQL."
    fake_ollama.configure(reply=refusal)
    result = QueryEngine(index_dir, QUERY).answer(NOT_MENTIONED)
    assert result.answer == refusal and result.first_answer is None and result.repaired == []
    assert len(_chat_calls(fake_ollama)) == 1


def test_an_answer_with_a_flag_the_repository_never_writes_is_asked_again(
    index_dir, fake_ollama, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    flagged = "Run `python train.py --fit-fast` and call `Trainer.fit(data)`."
    fake_ollama.configure(reply=lambda body: GROUNDED if TOLD in _last_user(body) else flagged)
    result = QueryEngine(index_dir, QUERY).answer("How do I fit a Trainer?")
    assert result.answer == GROUNDED and result.first_answer == flagged
    assert result.repaired == ["--fit-fast"] and result.flags["unknown"] == []
    calls = _chat_calls(fake_ollama)
    assert len(calls) == 2 and "--fit-fast" in _last_user(calls[1].body).split(TOLD, 1)[1]


def test_a_repair_given_up_on_stops_writing_so_the_model_is_free_for_the_next_question(
    index_dir, fake_ollama, monkeypatch, tmp_path
):
    import threading

    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    variant = tmp_path / "query_quick_repair.yaml"
    variant.write_text(f"extends: {QUERY}\nmetadata:\n  repair:\n    budget_s: 1.0\n")
    long_second = GROUNDED + " More." * 400  # 800 tokens at 0.02 s: 16 s if nothing stopped it

    fake_ollama.configure(
        reply=lambda body: long_second if TOLD in _last_user(body) else INVENTED, token_delay=0.02
    )
    engine = QueryEngine(index_dir, variant)
    engine.warm_up(with_answer=True)
    result = engine.answer("How do I fit a Trainer?", on_token=lambda t: None)
    assert REPAIR_SKIPPED in [kind_of(n) for n in result.notices]
    for _ in range(50):  # its next token stops it (an in-process model would write on for no one)
        if not any(t.name == "codeground-repair" and t.is_alive() for t in threading.enumerate()):
            break
        time.sleep(0.1)
    assert not any(t.name == "codeground-repair" and t.is_alive() for t in threading.enumerate())
