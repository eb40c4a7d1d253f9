"""Hayhooks wrapper `ask`: POST /ask/run, the grounded answer as JSON (the same fields as MCP's `ask`).

The OpenAI-compatible chat with model ``ask`` is not this wrapper's: ``codeground.app.serve.openai_api``
serves it in front of Hayhooks (status codes, ``[DONE]``, usage, escaped sources).
"""

from __future__ import annotations

from hayhooks import BasePipelineWrapper

from codeground.app.serve.http_server import api_call, shared_tools


class PipelineWrapper(BasePipelineWrapper):
    skip_a2a = True

    def setup(self) -> None:
        self.tools = shared_tools()

    def run_api(self, question: str) -> dict:
        """Answer a question from the repository only, citing path:start-end for every source used.

        :param question: the question, at most 4,000 characters
        """
        return api_call(self.tools.ask, question)
