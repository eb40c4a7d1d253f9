"""An LLM call that failed, as one line saying what failed and what to do: one wording for the answer
generator, the LLM reranker, the follow-up rewriter and the pipeline errors of `index` and `query`.

Usage:
```python
from codeground.components.llm_errors import explain_llm_failure, ollama_fix

line = explain_llm_failure(ConnectionError("refused"), url="http://localhost:11434", model="qwen2.5-coder:7b")
assert line.startswith("cannot reach the LLM server at http://localhost:11434: start it with `ollama serve`")
assert ollama_fix("Failed to connect to Ollama").endswith("`codeground ollama serve`")
```
"""

from __future__ import annotations

from codeground.components.inner import one_line

OLLAMA_FIX = "; start Ollama and pull the model with `codeground ollama serve`"


def explain_llm_failure(
    exc: BaseException,
    *,
    url: str | None,
    model: str | None,
    openai_compatible: bool = False,
    timeout_s: float | None = None,
) -> str:
    """One line telling the user what failed and what to do about it."""
    name = exc.__class__.__name__
    text = str(exc)
    where = url or "the configured server"
    status = getattr(exc, "status_code", None)
    if status == 404 or "not found" in text.lower():
        return (
            f"model {model!r} was not found on {where}: run `ollama pull {model}` (or pick another model)"
        )
    if "Timeout" in name or isinstance(exc, TimeoutError):
        waited = f"; no answer within {timeout_s:g} s" if timeout_s else ""
        return (
            f"the LLM server at {where} did not answer in time: is {model!r} too big for this machine? "
            f"Try a smaller model or raise the timeout{waited}"
        )
    if "RemoteProtocol" in name or "incomplete" in text.lower():
        return f"the LLM server at {where} closed the answer stream mid-answer; ask again"
    if openai_compatible and (
        isinstance(exc, ConnectionError) or "Connect" in name or "connection" in text.lower()
    ):
        return f"cannot reach the OpenAI-compatible endpoint at {where}: check CODEGROUND_OPENAI_BASE_URL"
    if isinstance(exc, ConnectionError) or "Connect" in name or "connection" in text.lower():
        return (
            f"cannot reach the LLM server at {where}: start it with `ollama serve` "
            "(or `just ollama`), or point OLLAMA_HOST at a running server"
        )
    if status is not None:  # the server's own message when it sent one (Ollama's ResponseError.error)
        said = " ".join(str(getattr(exc, "error", "") or "").split())[:200] or one_line(exc)
        return f"the LLM server at {where} answered HTTP {status}: {said}"
    return f"the LLM call failed: {one_line(exc)}"


def ollama_fix(failure: str) -> str:
    """The fix to append to a pipeline failure that involves Ollama (its component or its message)."""
    return OLLAMA_FIX if "ollama" in failure.lower() else ""
