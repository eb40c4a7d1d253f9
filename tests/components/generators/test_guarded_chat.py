"""Tests for GuardedChatGenerator against the fake Ollama server: stream the answer or explain the failure."""

from __future__ import annotations

import socket
import time

from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.dataclasses import ChatMessage, StreamingChunk

from codeground.components.generators.guarded_chat import GuardedChatGenerator
from tests.conftest import codeground_components_allowed
from tests.fake_ollama import tokenize

OLLAMA_CHAT = "haystack_integrations.components.generators.ollama.chat.chat_generator.OllamaChatGenerator"
MODEL = "qwen2.5-coder:7b"
REPLY = "Call `Trainer.fit(model, loader)` as shown in trainer.py:10-14; it returns the final metrics."


def _llm(url: str, **params) -> GuardedChatGenerator:
    init = {"model": MODEL, "url": url, "timeout": 5, "generation_kwargs": {"temperature": 0.1}}
    init.update(params)
    return GuardedChatGenerator(generator={"type": OLLAMA_CHAT, "init_parameters": init})


def _messages() -> list[ChatMessage]:
    return [ChatMessage.from_system("Answer from the repository."), ChatMessage.from_user("How do I train?")]


class _Collector:
    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.times: list[float] = []

    def __call__(self, chunk: StreamingChunk) -> None:
        if chunk.content:
            self.chunks.append(chunk.content)
            self.times.append(time.monotonic())


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_tokens_arrive_one_by_one_through_the_streaming_callback(fake_ollama):
    fake_ollama.configure(reply=REPLY, token_delay=0.02)
    collect = _Collector()
    out = _llm(fake_ollama.url).run(messages=_messages(), streaming_callback=collect)
    assert out["notices"] == []
    assert out["replies"][0].text == REPLY
    assert len(collect.chunks) > 3
    assert collect.chunks == tokenize(REPLY)
    assert "".join(collect.chunks) == REPLY
    assert collect.times[-1] - collect.times[0] >= 0.02 * (len(collect.chunks) - 2)  # streamed, not buffered
    assert fake_ollama.requests_to("/api/chat")[0].body["stream"] is True


def test_without_callback_the_whole_reply_comes_back(fake_ollama):
    fake_ollama.configure(reply=REPLY)
    out = _llm(fake_ollama.url).run(messages=_messages())
    assert [r.text for r in out["replies"]] == [REPLY]
    assert out["notices"] == []


def test_ollama_down_gives_no_reply_and_says_ollama_serve_quickly():
    started = time.monotonic()
    out = _llm(_closed_port_url()).run(messages=_messages(), streaming_callback=_Collector())
    assert time.monotonic() - started < 2.0
    assert out["replies"] == []
    assert len(out["notices"]) == 1 and "ollama serve" in out["notices"][0]


def test_unknown_model_404_says_ollama_pull_model(fake_ollama):
    fake_ollama.configure(models=["llama3:8b"])
    out = _llm(fake_ollama.url).run(messages=_messages())
    assert out["replies"] == []
    assert f"ollama pull {MODEL}" in out["notices"][0]


def test_server_that_hangs_past_the_timeout_says_it_did_not_answer_in_time(fake_ollama):
    fake_ollama.configure(hang_seconds=5)
    started = time.monotonic()
    out = _llm(fake_ollama.url, timeout=1).run(messages=_messages(), streaming_callback=_Collector())
    assert time.monotonic() - started < 3.0
    assert out["replies"] == []
    assert "did not answer in time" in out["notices"][0]


def test_stream_cut_mid_answer_gives_notice_and_streamed_tokens_stay_delivered(fake_ollama):
    fake_ollama.configure(reply=REPLY, cut_after_tokens=4)
    collect = _Collector()
    out = _llm(fake_ollama.url).run(messages=_messages(), streaming_callback=collect)
    assert out["replies"] == []
    assert len(out["notices"]) == 1 and "mid-answer" in out["notices"][0]
    assert collect.chunks == tokenize(REPLY)[:4]


def test_http_500_gives_notice_with_the_status(fake_ollama):
    fake_ollama.configure(status_code=500, error_message="runner crashed")
    out = _llm(fake_ollama.url).run(messages=_messages())
    assert out["replies"] == []
    assert "500" in out["notices"][0] and "runner crashed" in out["notices"][0]


def test_round_trips_through_serialization(fake_ollama):
    llm = _llm(fake_ollama.url)
    data = component_to_dict(llm, "llm")
    assert data["init_parameters"] == {"generator": llm.generator, "one_at_a_time": False}
    with codeground_components_allowed():
        again = component_from_dict(GuardedChatGenerator, data, "llm")
        again_data = component_to_dict(again, "llm")
        third = component_from_dict(GuardedChatGenerator, again_data, "llm")
        assert component_to_dict(third, "llm") == again_data
    nested = again_data["init_parameters"]["generator"]
    assert nested["type"] == OLLAMA_CHAT
    for key, value in llm.generator["init_parameters"].items():
        assert nested["init_parameters"][key] == value
    # the rebuilt generator still knows where it talks to, for its notices
    fake_ollama.configure(models=["llama3:8b"])
    notice = again.run(messages=_messages())["notices"][0]
    assert fake_ollama.url in notice and f"ollama pull {MODEL}" in notice


def test_one_wording_for_an_llm_failure_in_the_answer_the_reranker_and_the_rewriter():
    """The generator, the LLM reranker and the follow-up rewriter explain a failure with the same line."""
    import httpx

    from codeground.components.llm_errors import explain_llm_failure

    down = httpx.ConnectError("connection refused")
    line = explain_llm_failure(down, url="http://127.0.0.1:9", model="m")
    assert line.startswith("cannot reach the LLM server at http://127.0.0.1:9: start it with `ollama serve`")
    slow = explain_llm_failure(httpx.ReadTimeout("timed out"), url="u", model="m", timeout_s=0.5)
    assert "did not answer in time" in slow and slow.endswith("no answer within 0.5 s")
