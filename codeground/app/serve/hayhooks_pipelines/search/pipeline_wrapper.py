"""Hayhooks wrapper `search`: POST /search/run, ranked sources without an answer.

Rule: the request's schema carries the bounds (``k``: a JSON integer from 1 to ``repo_tools.MAX_K``,
strictly: no float, bool or string), so a body that breaks them is a 422 with one line before the
search runs. The JSON fields are the repository's exact values (a client needs exact paths); JSON
itself keeps them from being read as anything but strings.
"""

from __future__ import annotations

from typing import Annotated

from hayhooks import BasePipelineWrapper
from pydantic import Field

from codeground.app.serve.http_server import api_call, shared_tools
from codeground.app.serve.repo_tools import MAX_K


class PipelineWrapper(BasePipelineWrapper):
    skip_a2a = True

    def setup(self) -> None:
        self.tools = shared_tools()

    def run_api(self, question: str, k: Annotated[int, Field(ge=1, le=MAX_K, strict=True)] = 8) -> dict:
        """Search the repository and return the k best sources (path, lines, symbol, type, score, text).

        :param question: what to look for, in words or by name (Class.method)
        :param k: how many sources to return, a whole number from 1 to 50
        """
        return api_call(self.tools.search_code, question, k)
