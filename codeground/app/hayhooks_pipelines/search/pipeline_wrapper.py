"""Hayhooks wrapper `search`: POST /search/run, ranked sources without an answer."""

from __future__ import annotations

from hayhooks import BasePipelineWrapper

from codeground.app.http_server import api_call, shared_tools


class PipelineWrapper(BasePipelineWrapper):
    skip_a2a = True

    def setup(self) -> None:
        self.tools = shared_tools()

    def run_api(self, question: str, k: int = 8) -> dict:
        """Search the repository and return the k best sources (path, lines, symbol, type, score, text)."""
        return api_call(self.tools.search_code, question, k)
