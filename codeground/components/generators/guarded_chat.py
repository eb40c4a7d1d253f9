"""A stock chat generator whose failures become one actionable line instead of a crashed pipeline."""

from __future__ import annotations

import logging
from typing import Any

from haystack import Document, component
from haystack.dataclasses import ChatMessage, StreamingChunk

from codeground.components.inner import LazyComponent, init_parameters, one_line
from codeground.components.llm_errors import explain_llm_failure
from codeground.components.notices import LLM_FAILED, Notice
from codeground.components.notices import NOTHING_FOUND as NOTHING_FOUND_KIND

logger = logging.getLogger(__name__)

NOTHING_FOUND = (
    "This repository has nothing on that: no file in the index matched the question, so there is "
    "nothing to answer from. Try other words, or the name of a class, function or file."
)


@component
class GuardedChatGenerator:
    """Run a stock chat generator (Ollama, OpenAI-compatible, …); on failure answer nothing and say why.

    Rule: the retrieved sources are worth showing even when the LLM is down, missing a model, slow
    or cut off mid-stream. Any exception from the generator becomes an empty ``replies`` list and a
    notice that says what to do (start Ollama, pull the model, …). Tokens already streamed stay
    streamed. With no sources at all (``documents`` connected and empty), or with a ``refusal``
    connected and set, the model is not called: the answer says the repository has nothing on it.
    The generator is declared in YAML in its own serialized form. With ``one_at_a_time`` a call
    waits until the previous one has finished: a model in this process (llama.cpp) is one native
    object, and two generations on it at once (a second client, or a repair still writing when the
    next question came) corrupt its memory (the process died with SIGSEGV).

    Usage:
    ```python
    from haystack.dataclasses import ChatMessage
    from codeground.components.generators.guarded_chat import GuardedChatGenerator

    llm = GuardedChatGenerator(generator={
        "type": "haystack_integrations.components.generators.ollama.chat.chat_generator.OllamaChatGenerator",
        "init_parameters": {"model": "qwen2.5-coder:7b", "url": "http://localhost:11434"}})
    out = llm.run(messages=[ChatMessage.from_user("hi")], streaming_callback=print)
    out["replies"], out["notices"]
    ```
    """

    def __init__(self, *, generator: dict[str, Any], one_at_a_time: bool = False) -> None:
        """
        :param generator: the stock chat generator, serialized (``type`` + ``init_parameters``).
        :param one_at_a_time: run one call at a time (for a generator that runs the model in this
            process); the others wait their turn.
        """
        self.generator = generator
        self.one_at_a_time = one_at_a_time
        self._inner = LazyComponent(generator, "generator", one_at_a_time=one_at_a_time)

    def warm_up(self) -> None:
        """Build the stock generator (no network yet); a failure is reported by ``run``."""
        self._inner.warm_up()

    def _describe(self) -> tuple[str | None, str | None]:
        params = init_parameters(self.generator)
        return params.get("url") or params.get("api_base_url"), params.get("model")

    @component.output_types(replies=list[ChatMessage], notices=list[str])
    def run(
        self,
        messages: list[ChatMessage],
        streaming_callback: Any = None,
        documents: list[Document] | None = None,
        refusal: str | None = None,
    ) -> dict[str, Any]:
        """The generator's replies, or no reply and a notice explaining the failure.

        When ``documents`` (the sources quoted in the prompt) is given and empty, the model is not
        asked at all: the reply says the repository has nothing on the question. A non-empty
        ``refusal`` (from ``QuestionPremise``: the question asks about a name the repository lacks, or
        ``AnswerEvidence``: the sources do not look like they answer) is the reply,
        again without asking the model.
        """
        if refusal:
            if streaming_callback is not None:
                streaming_callback(StreamingChunk(content=refusal))
            return {"replies": [ChatMessage.from_assistant(refusal)], "notices": []}
        if documents is not None and not documents:
            if streaming_callback is not None:
                streaming_callback(StreamingChunk(content=NOTHING_FOUND))
            return {
                "replies": [ChatMessage.from_assistant(NOTHING_FOUND)],
                "notices": [
                    Notice(NOTHING_FOUND_KIND, "no source matched the question; the model was not asked")
                ],
            }
        url, model = self._describe()
        try:
            kwargs: dict[str, Any] = {"messages": messages}
            if streaming_callback is not None:
                kwargs["streaming_callback"] = streaming_callback
            replies = self._inner.run(**kwargs)["replies"]
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none crashes the answer
            logger.info("LLM call failed: %s", one_line(exc))
            openai = "api_base_url" in init_parameters(self.generator)
            notice = explain_llm_failure(exc, url=url, model=model, openai_compatible=openai)
            return {"replies": [], "notices": [Notice(LLM_FAILED, notice)]}
        return {"replies": replies, "notices": []}
