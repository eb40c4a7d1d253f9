"""Rewrite a follow-up question into a standalone search query, conservatively."""

from __future__ import annotations

import logging
import re
from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage

from codeground.components.identifiers import identifier_candidates, looks_like_code
from codeground.components.inner import LazyComponent, init_parameters
from codeground.components.llm_errors import explain_llm_failure
from codeground.components.notices import REWRITTEN, SEARCHED_AS_TYPED, Notice

logger = logging.getLogger(__name__)

REWRITE_INSTRUCTIONS = """You turn the user's latest question into a standalone search query for a code \
repository.
Rules:
- By default, change nothing: if the latest question already makes sense on its own, output it exactly \
as written.
- Only resolve references to the conversation ("it", "that class", "the second one", "this parameter") by \
replacing them with the thing they refer to.
- Copy every identifier (class, function, parameter, file name, dotted path) character for character.
- Never carry an earlier topic into a question about a new topic.
- Output only the query: one line, no quotes, no explanation."""


@component
class FollowUpRewriter:
    """Make a follow-up question standalone using the chat history; search the question as typed otherwise.

    Rules:
    - No history: the question is the query, no model call.
    - With history: a small chat model at temperature 0 rewrites it; its prompt's default is to
      change nothing, copy identifiers exactly, resolve references only, and never carry an old
      topic into a new one.
    - Failure (the model errors, answers nothing, answers over ``max_chars`` characters, or drops an
      identifier the user typed): the question is searched as typed and a notice says so.

    Usage:
    ```python
    from haystack.dataclasses import ChatMessage
    from codeground.components.rewriters.follow_up import FollowUpRewriter

    rewriter = FollowUpRewriter(generator={
        "type": "haystack_integrations.components.generators.ollama.chat.chat_generator.OllamaChatGenerator",
        "init_parameters": {"model": "qwen2.5-coder:1.5b", "generation_kwargs": {"temperature": 0}}})
    history = [ChatMessage.from_user("What does Trainer.fit do?"), ChatMessage.from_assistant("It trains.")]
    rewriter.run(question="What arguments does it take?", history=history)["query"]
    ```
    """

    def __init__(
        self,
        *,
        generator: dict[str, Any],
        max_chars: int = 300,
        max_history_messages: int = 6,
        one_at_a_time: bool = False,
    ) -> None:
        """
        :param generator: the stock chat generator, serialized (``type`` + ``init_parameters``).
        :param max_chars: a rewrite longer than this is rejected.
        :param max_history_messages: how many of the latest history messages the model sees.
        :param one_at_a_time: one rewrite at a time (a generator that runs the model in this process).
        """
        self.generator = generator
        self.max_chars = max_chars
        self.max_history_messages = max_history_messages
        self.one_at_a_time = one_at_a_time
        self._inner = LazyComponent(generator, "rewriter", one_at_a_time=one_at_a_time)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FollowUpRewriter:
        """Keep the stock generator serialized until the first follow-up: building it imports its
        client library."""
        return cls(**(data.get("init_parameters") or {}))

    def warm_up(self) -> None:
        """Nothing to load: the stock generator is an HTTP client, built at the first follow-up
        (``run`` with history; a failure is reported there). A search, which has no history, never
        imports its client library (0.2 s of a cold ``codeground search``)."""

    @component.output_types(query=str, rewritten=bool, notices=list[str])
    def run(self, question: str, history: list[ChatMessage] | None = None) -> dict[str, Any]:
        """The standalone query for ``question``."""
        if not history:
            return {"query": question, "rewritten": False, "notices": []}
        transcript = "\n".join(
            f"{m.role.value}: {(m.text or '').strip()[:1500]}" for m in history[-self.max_history_messages :]
        )
        messages = [
            ChatMessage.from_system(REWRITE_INSTRUCTIONS),
            ChatMessage.from_user(
                f"Conversation so far:\n{transcript}\n\nLatest question: {question}\n\nStandalone query:"
            ),
        ]
        try:
            replies = self._inner.run(messages=messages, generation_kwargs={"temperature": 0})["replies"]
            raw = (replies[0].text or "") if replies else ""
        except Exception as exc:  # noqa: BLE001
            params = init_parameters(self.generator)
            url, model = params.get("url") or params.get("api_base_url"), params.get("model")
            why = explain_llm_failure(exc, url=url, model=model, openai_compatible="api_base_url" in params)
            return self._as_typed(question, f"the rewrite model failed ({why})")
        query = self._clean(raw)
        if not query:
            return self._as_typed(question, "the rewrite model returned nothing")
        if len(query) > self.max_chars:
            return self._as_typed(question, f"the rewrite was longer than {self.max_chars} characters")
        lost = [t for t in identifier_candidates(question) if looks_like_code(t) and t not in query]
        if lost:
            return self._as_typed(question, f"the rewrite dropped {lost[0]!r}")
        if query == question.strip():
            return {"query": question, "rewritten": False, "notices": []}
        return {"query": query, "rewritten": True, "notices": [Notice(REWRITTEN, f"searched for: {query}")]}

    @staticmethod
    def _clean(raw: str) -> str:
        lines = [ln.strip() for ln in raw.strip().splitlines() if ln.strip()]
        if not lines:
            return ""
        line = re.sub(r"^(standalone query|query)\s*:\s*", "", lines[0], flags=re.IGNORECASE)
        return line.strip().strip('"').strip("'").strip()

    @staticmethod
    def _as_typed(question: str, why: str) -> dict[str, Any]:
        notice = Notice(SEARCHED_AS_TYPED, f"question searched as typed: {why}")
        return {"query": question, "rewritten": False, "notices": [notice]}
