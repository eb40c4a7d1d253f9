"""Hayhooks wrapper `ask`: POST /ask/run and the OpenAI-compatible chat (model `ask`).

The answer streams token by token; it ends with the cited ``path:start-end`` list and, when the
pipeline had anything to say (a rewritten follow-up, a reranker it could not load, names found
nowhere in the repository), a marked block of notices.
"""

from __future__ import annotations

from collections.abc import Generator

from hayhooks import BasePipelineWrapper

from codeground.app.http_server import api_call, chat_answer, shared_tools


class PipelineWrapper(BasePipelineWrapper):
    def setup(self) -> None:
        self.tools = shared_tools()

    def run_api(self, question: str) -> dict:
        """Answer a question from the repository only, citing path:start-end for every source used."""
        return api_call(self.tools.ask, question)

    def run_chat_completion(self, model: str, messages: list[dict], body: dict) -> Generator[str, None, None]:
        return chat_answer(self.tools, messages)
