"""Identifier-aware tokenization, shared by the BM25 store and symbol lookup.

Rule: a word that is an identifier yields itself, lowercased, plus its parts when it
has more than one: ``trust_remote_code`` → ``trust_remote_code``, ``trust``, ``remote``, ``code``;
``Gemma2DecoderLayer`` → ``gemma2decoderlayer``, ``gemma2``, ``decoder``, ``layer``. Parts are
split *before* lowercasing (camel case needs the capitals). Dotted paths are split at the dots
first, so ``nn.Module.forward`` yields ``nn``, ``module``, ``forward``; ``Vec::new`` and ``List#add``
yield their parts the same way.

Two words prose writes otherwise than code also yield code's spelling: a Python special method
yields its bare name (``__init__`` → ``__init__``, ``init``; ``__call__`` → ``call``), and the
words prose uses for it, ``constructor`` and ``initialization`` (``initialize``, ``initializer``,
``initialise``, …), yield ``init`` — "the default of X in NemotronVL's initialization" meets
``NemotronVLProcessor.__init__``. ``TOKENS_VERSION`` names these rules: an index made under other
rules is rebuilt in full (``app.pipeline.loader.settings_fingerprint``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from codeground.components.abbreviations import short_form

# A word: letters, digits and underscores (Unicode-aware), as identifiers are.
_WORD = re.compile(r"\w+")
# camelCase / PascalCase / acronym boundaries: HTTPServer → HTTP Server; Gemma2Decoder → Gemma2 Decoder
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+|[^\W\d_A-Za-z]+")
_SNAKE = re.compile(r"[^\W_]_+[^\W_]")
_ACRONYM_PLURAL = re.compile(r"[A-Z]+s")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
# Identifier characters including dotted paths, for symbol lookup in questions.
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*")
# Other languages' member separators, read as the dot of ``Type.member``: Rust/C++ ``Vec::new``,
# Javadoc ``List#add``.
_MEMBER_SEPARATOR = re.compile(r"(?<=\w)(?:::|#)(?=[A-Za-z_])")


def dotted(text: str) -> str:
    """``text`` with ``Type::member`` and ``Type#member`` written ``Type.member``, as symbols are."""
    return _MEMBER_SEPARATOR.sub(".", text)


# bump when a rule below changes which tokens a text yields: indexes made under the old rules rebuild
TOKENS_VERSION = 2  # 1: parts of identifiers, GPT-2 -> gpt2; 2: __init__ -> init, constructor -> init
# Python's constructor as prose names it
_INIT_WORD = re.compile(r"constructors?|initiali[sz](?:e[sdr]?|ers?|ing|ations?)", re.IGNORECASE)
# a special method: two underscores, one plain word, two underscores (``__init__``, ``__getitem__``)
_DUNDER = re.compile(r"__([^\W_]+)__")


@lru_cache(maxsize=200_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    whole = word.lower()
    if _INIT_WORD.fullmatch(word):
        return (whole, "init")
    dunder = _DUNDER.fullmatch(word)
    if dunder:
        return (whole, dunder.group(1).lower())
    parts = [p.lower() for chunk in word.split("_") if chunk for p in _CAMEL.findall(chunk)]
    if len(parts) > 1:
        return (whole, *parts)
    return (whole,)


_HYPHENATED_NUMBER = re.compile(r"(?<![\w-])([^\W\d_]+)-(\d+)(?![\w-])")
# most texts have no "-" before a digit: finding that first skips the slow scan above (4× faster
# over vLLM's records, the same tokens)
_DASH_DIGIT = re.compile(r"-\d")


def tokenize(text: str) -> list[str]:
    """BM25 tokens of ``text``: every word, lowercased, plus the parts of compound identifiers, plus
    a name that prose hyphenates before its number written as code writes it (``GPT-2`` → ``gpt2``,
    as in ``GPT2LMHeadModel``), plus ``init`` for ``__init__``, "constructor" and "initialization"."""
    text = unicodedata.normalize("NFC", text)
    tokens: list[str] = []
    for word in _WORD.findall(text):
        tokens.extend(_word_tokens(word))
    if _DASH_DIGIT.search(text):
        tokens.extend((a + b).lower() for a, b in _HYPHENATED_NUMBER.findall(text))
    return tokens


def query_tokens(text: str) -> list[str]:
    """The BM25 terms of a question: ``tokenize``'s, each followed by its programmers' short form
    where it has one ("boolean" → ``boolean``, ``bool``; "configuration" → ``config``;
    ``components.abbreviations``), so the words a question spells out meet the names code writes.
    Only the question gets them: the index keeps ``tokenize``'s tokens, which no rebuild changes."""
    tokens: list[str] = []
    for token in tokenize(text):
        tokens.append(token)
        short = short_form(token)
        if short is not None:
            tokens.append(short)
    return tokens


def identifier_candidates(text: str) -> list[str]:
    """Identifier-like tokens of a question, dotted paths kept whole and also cut at each dot.

    ``"How does LLMEngine.add_request work?"`` → ``LLMEngine.add_request``, ``LLMEngine``,
    ``add_request`` (plus the plain words, which a symbol vocabulary will simply not contain).
    ``Vec::with_capacity`` and ``List#add`` count as ``Vec.with_capacity`` and ``List.add``.
    Case is kept: symbol lookup is exact.
    """
    seen: dict[str, None] = {}
    for match in _DOTTED.findall(dotted(text)):
        seen.setdefault(match, None)
        if "." in match:
            pieces = match.split(".")
            for i in range(len(pieces)):
                for j in range(i + 1, len(pieces) + 1):
                    seen.setdefault(".".join(pieces[i:j]), None)
    return list(seen)


_BACKTICKED = re.compile(r"`([^`]+)`")


def code_names(text: str) -> list[str]:
    """The names ``text`` writes as code: each of ``identifier_candidates`` that ``looks_like_code``
    or stands inside backticks (`` `fit` ``, `` `z.encode()` ``), in the order written. Symbol lookup,
    the evidence check and the default-value rule all read a question's names through this."""
    quoted = backticked_names(text)
    return [t for t in identifier_candidates(text) if looks_like_code(t) or t in quoted]


def backticked_names(text: str) -> set[str]:
    """The ``identifier_candidates`` written inside backticks (`` `z.encode()` `` → ``z.encode``, ``z``,
    ``encode``)."""
    return {t for m in _BACKTICKED.findall(text) for t in identifier_candidates(m)}


def is_snake(word: str) -> bool:
    """snake_case: an underscore between two letters or digits (``trust_remote_code``; not ``_x``)."""
    return _SNAKE.search(word) is not None


def is_camel(word: str) -> bool:
    """CamelCase: a capital after the first letter and a lowercase letter (``LLMEngine``,
    ``SamplingParams``), but not an acronym or its plural (``GPU``, ``LLMs``)."""
    return (
        any(c.isupper() for c in word[1:])
        and any(c.islower() for c in word)
        and _ACRONYM_PLURAL.fullmatch(word) is None
    )


def looks_like_code(word: str) -> bool:
    """A word prose does not use: a dotted path (``vllm.LLM``, ``Trainer.fit``), snake_case or
    CamelCase as above. ``fit``, ``The``, ``GPU``, ``LLMs`` and ``Gemma2`` are words (a reader writes
    them in backticks, or as ``fit(`` / ``fit=``, to mean code)."""
    parts = word.split(".")
    if len(parts) > 1 and all(_IDENTIFIER.fullmatch(p) for p in parts):
        return True
    return is_snake(word) or is_camel(word)
