"""Tests for FollowUpRewriter against the fake Ollama server: rewrite conservatively or search as typed."""

from __future__ import annotations

import socket

from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.dataclasses import ChatMessage

from codeground.components.rewriters.follow_up import FollowUpRewriter
from tests.conftest import codeground_components_allowed

OLLAMA_CHAT = "haystack_integrations.components.generators.ollama.chat.chat_generator.OllamaChatGenerator"
MODEL = "qwen2.5-coder:1.5b"


def _spec(url: str, **params) -> dict:
    init = {"model": MODEL, "url": url, "timeout": 5,
            "generation_kwargs": {"temperature": 0, "num_predict": 96}}
    init.update(params)
    return {"type": OLLAMA_CHAT, "init_parameters": init}


def _history() -> list[ChatMessage]:
    return [ChatMessage.from_user("What does Trainer.fit do?"),
            ChatMessage.from_assistant("It runs the training loop over the dataloader.")]


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _assert_as_typed(out: dict, question: str) -> str:
    assert out["query"] == question
    assert out["rewritten"] is False
    assert len(out["notices"]) == 1
    assert out["notices"][0].startswith("question searched as typed: ")
    return out["notices"][0]


def test_no_history_sends_no_request_and_searches_the_question(fake_ollama):
    rewriter = FollowUpRewriter(generator=_spec(fake_ollama.url))
    for history in (None, []):
        out = rewriter.run(question="What does Trainer.fit do?", history=history)
        assert out == {"query": "What does Trainer.fit do?", "rewritten": False, "notices": []}
    assert fake_ollama.requests == []


def test_successful_rewrite_is_the_models_line_at_temperature_zero(fake_ollama):
    fake_ollama.configure(reply="What arguments does Trainer.fit take?")
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(
        question="What arguments does it take?", history=_history())
    assert out["query"] == "What arguments does Trainer.fit take?"
    assert out["rewritten"] is True
    assert out["notices"] == ["searched for: What arguments does Trainer.fit take?"]
    (request,) = fake_ollama.requests_to("/api/chat")
    assert request.body["model"] == MODEL
    assert request.body["options"]["temperature"] == 0
    system, user = request.body["messages"]
    assert system["role"] == "system" and "change nothing" in system["content"]
    assert "character for character" in system["content"]
    assert "Trainer.fit" in user["content"] and "What arguments does it take?" in user["content"]


def test_only_the_first_line_of_the_reply_is_kept_without_label_or_quotes(fake_ollama):
    fake_ollama.configure(reply='Standalone query: "What arguments does Trainer.fit take?"\nI resolved "it".')
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(
        question="What arguments does it take?", history=_history())
    assert out["query"] == "What arguments does Trainer.fit take?"


def test_unchanged_reply_is_not_reported_as_a_rewrite(fake_ollama):
    fake_ollama.configure(reply="How do I install vllm?")
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(
        question="How do I install vllm?", history=_history())
    assert out == {"query": "How do I install vllm?", "rewritten": False, "notices": []}


def test_only_the_latest_history_messages_are_sent(fake_ollama):
    history = [ChatMessage.from_user(f"old question {i}") for i in range(10)]
    fake_ollama.configure(reply="anything")
    FollowUpRewriter(generator=_spec(fake_ollama.url), max_history_messages=2).run(
        question="and then?", history=history)
    user = fake_ollama.requests_to("/api/chat")[0].body["messages"][-1]["content"]
    assert "old question 9" in user and "old question 8" in user
    assert "old question 7" not in user


def test_reply_longer_than_300_chars_searches_as_typed_and_says_the_limit(fake_ollama):
    fake_ollama.configure(reply="What arguments does Trainer.fit take " + "and why " * 50)
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(
        question="What arguments does it take?", history=_history())
    notice = _assert_as_typed(out, "What arguments does it take?")
    assert "300" in notice


def test_empty_reply_searches_as_typed(fake_ollama):
    fake_ollama.configure(reply="   \n")
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(question="And it?", history=_history())
    _assert_as_typed(out, "And it?")


def test_server_down_searches_as_typed_with_notice():
    out = FollowUpRewriter(generator=_spec(_closed_port_url())).run(
        question="What arguments does it take?", history=_history())
    _assert_as_typed(out, "What arguments does it take?")


def test_reply_that_drops_a_typed_identifier_searches_as_typed(fake_ollama):
    fake_ollama.configure(reply="Does Trainer.fit accept remote code?")
    question = "Does it accept trust_remote_code?"
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(question=question, history=_history())
    notice = _assert_as_typed(out, question)
    assert "trust_remote_code" in notice


def test_reply_that_changes_an_identifiers_case_searches_as_typed(fake_ollama):
    fake_ollama.configure(reply="What does trainer.fit return?")
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(
        question="What does Trainer.fit return?", history=_history())
    _assert_as_typed(out, "What does Trainer.fit return?")


def test_missing_model_404_searches_as_typed(fake_ollama):
    fake_ollama.configure(models=["llama3:8b"])
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(
        question="What arguments does it take?", history=_history())
    notice = _assert_as_typed(out, "What arguments does it take?")
    assert "not found" in notice


def test_server_error_500_searches_as_typed(fake_ollama):
    fake_ollama.configure(status_code=500)
    out = FollowUpRewriter(generator=_spec(fake_ollama.url)).run(question="And it?", history=_history())
    _assert_as_typed(out, "And it?")


def test_rewrite_runs_at_temperature_zero_even_when_the_spec_omits_it(fake_ollama):
    spec = {"type": OLLAMA_CHAT, "init_parameters": {"model": MODEL, "url": fake_ollama.url}}
    fake_ollama.configure(reply="What arguments does Trainer.fit take?")
    FollowUpRewriter(generator=spec).run(question="What arguments does it take?", history=_history())
    assert (fake_ollama.requests_to("/api/chat")[0].body.get("options") or {}).get("temperature") == 0


def test_round_trips_through_serialization(fake_ollama):
    rewriter = FollowUpRewriter(generator=_spec(fake_ollama.url), max_chars=200, max_history_messages=4)
    data = component_to_dict(rewriter, "rewriter")
    assert data["init_parameters"] == {"generator": _spec(fake_ollama.url), "max_chars": 200,
                                       "max_history_messages": 4, "one_at_a_time": False}
    with codeground_components_allowed():
        again = component_from_dict(FollowUpRewriter, data, "rewriter")
        again_data = component_to_dict(again, "rewriter")
        assert component_to_dict(component_from_dict(FollowUpRewriter, again_data, "r"), "r") == again_data
    assert (again.max_chars, again.max_history_messages) == (200, 4)
    nested = again_data["init_parameters"]["generator"]
    assert nested["type"] == OLLAMA_CHAT
    for key, value in _spec(fake_ollama.url)["init_parameters"].items():
        assert nested["init_parameters"][key] == value
    # the rebuilt rewriter still works
    fake_ollama.configure(reply="What arguments does Trainer.fit take?")
    assert again.run(question="What arguments does it take?", history=_history())["rewritten"] is True


def test_the_generator_is_built_at_the_first_follow_up_not_when_the_pipeline_loads(fake_ollama):
    with codeground_components_allowed():
        rewriter = component_from_dict(
            FollowUpRewriter,
            {"type": "codeground.components.rewriters.follow_up.FollowUpRewriter",
             "init_parameters": {"generator": _spec(fake_ollama.url)}},
            "rewriter",
        )
    rewriter.warm_up()
    assert isinstance(rewriter.generator, dict) and rewriter._inner.instance is None
    assert rewriter.run(question="And its defaults?")["rewritten"] is False  # no history: no model
    assert rewriter._inner.instance is None
    rewriter.run(question="And what does it return?", history=_history())
    assert rewriter._inner.instance is not None
