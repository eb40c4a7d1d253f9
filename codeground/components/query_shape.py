"""A query's shape: one identifier, a question written as a question, or a search phrase.

Rules:
- **One identifier** (``HTTPAdapter``, ``serde::de::Deserializer``, ``_helper``, ``fit()``): a symbol
  lookup. Qualified (``a.b``, ``A::b``, ``A#b``, ``A\\b``, ``a->b``) or marked as code by an underscore,
  a capital inside, a capital first or a call's parentheses; ``session`` alone is a word.
- **A question**: a query that ends with a question mark (``What does `get_num_new_matched_tokens`
  return?``) asks for a fact that sits in one place, and its many words are what BM25 matches best.
- **A search phrase**: anything else (``JSON response rendering``, ``how does dependency injection
  work``). It asks where a topic lives, in a few words that the code need not spell, so the meaning
  of the words counts as much as the words.

The chat, ``query`` and the OpenAI endpoint mostly get questions; ``search``, the MCP search tool and
agents mostly get phrases and identifiers. Measured: every question of the vLLM dev sets and of
``benchmarks/languages`` ends with ``?``; 1 of the 779 queries of semble's benchmark does
(docs/measurements/semble.md).

Usage:
```python
from codeground.components.query_shape import is_question, is_search_phrase, is_symbol_query

assert is_question("How do I enable prefix caching?") and is_question("  What is `fit`?  ")
assert is_symbol_query("serde::de::Deserializer") and not is_symbol_query("session")
assert is_search_phrase("JSON response rendering")
assert is_search_phrase("how does dependency injection work")
assert not is_search_phrase("HTTPAdapter") and not is_search_phrase("Why?") and not is_search_phrase("")
```
"""

from __future__ import annotations

import re

# closing quotes or brackets after the question mark still end a question
_CLOSERS = "\"'`)]}\u201d\u2019 \t\r\n"

_SYMBOL_QUERY = re.compile(
    r"^(?:[A-Za-z_]\w*(?:(?:::|\\|->|\.|#)[A-Za-z_]\w*)+"
    r"|_\w*|[A-Za-z][A-Za-z0-9]*[A-Z_]\w*|[A-Z][A-Za-z0-9]*)(?:\(\))?$"
    r"|^[A-Za-z_]\w*\(\)$"
)


def is_question(query: str) -> bool:
    """``query`` ends with a question mark (closing quotes, brackets and spaces after it ignored)."""
    return query.rstrip(_CLOSERS).endswith("?")


def is_symbol_query(query: str) -> bool:
    """``query`` is one (possibly qualified) identifier: a symbol lookup."""
    return _SYMBOL_QUERY.match(query.strip().strip("`")) is not None


def is_search_phrase(query: str) -> bool:
    """Some words that are neither a question nor one identifier (an empty query is none)."""
    return bool(query.strip()) and not is_question(query) and not is_symbol_query(query)
