"""Does the repository have what the question names? Decided before the model is asked.

A question about an API the repository lacks (``vllm.blockchain``, ``--gpu-overclock``,
``SpreadsheetLoader``) has no answer in it, however the excerpts read; told so in advance the
model need not guess, and where the question *asks about* such a name it is not asked at all.

Rules:

- **Names asked about**: the identifiers the grounding check would read in an answer
  (``extract_identifiers``: code-looking words, inline code, calls and keywords; Python's and the
  repository's languages' standard names ignored) in the question's prose and inline code, and its
  command-line flags (``--name``) and HTTP paths (``/v1/chat/completions``), and a capitalised word
  the prose writes as a definition's name (``vLLM's Trainer class``; ``decorator``, ``exception``,
  ``enum``, ``dataclass``, ``struct``, ``trait`` alike; not a sentence's first word, not a
  language's name), whose repository spellings must start with a capital like a type's (a
  ``trainer`` variable is no ``Trainer`` class). **The user's own
  names**: the same, inside the question's fenced code blocks (pasted code: its imports and calls
  may come from other libraries), and a name every mention of which follows "my" or "our"
  (``my `process_batch` function``).
  **Proper nouns**: a word in prose that starts with a capital but does not start a sentence (after
  a stop, a line start, a Markdown heading, list or quote marker, emphasis or an opening quote), or
  is written in capitals (``PostgreSQL``, ``JVM``, ``Excel``), at least 2 letters, not a standard
  name nor the name of one of the repository's languages. **Flag values**: ``--device=ane``, or
  `` `--device ane` `` in inline code (in prose the word after a flag is English).
- Each is looked up in the repository's vocabulary (``components.grounding.vocabulary``, shared
  with the grounding check): **known** as the check defines it; **near** when the repository
  spells it otherwise (case, ``_``/``-``, or the head of a longer identifier: ``NemotronVL`` →
  ``nemotron_vl``); else **absent**. A flag is known when it is written anywhere or an identifier
  has its letters (``--tensor-parallel-size`` / ``tensor_parallel_size``); a proper noun when any
  word of the repository has its letters, whatever the case.
- **refuse** when a name asked about (identifier, flag or HTTP path) is absent and
  ``refuse_absent`` is on, and also for an absent proper noun with ``refuse_unmentioned`` (off by
  default: in a small repository ordinary capitalised words, ``API`` or ``Windows``, are absent too):
  ``refusal`` holds the reply (``GuardedChatGenerator`` sends it without calling the model) and a
  ``no_answer`` notice names what is missing. The reply itself names nothing, so the grounding
  check has nothing to mark in it.
- Otherwise ``note`` tells the model, for the prompt, what the repository lacks (the user's own
  names that it lacks, proper nouns and flag values it never mentions, and with ``refuse_absent``
  off everything absent: "if the question depends on them, say that this material does not answer
  it") and how it spells the near names. No names: no note, no notice.
- Linear in the question's length (a 100 KB question is read in well under a second).
- Nothing here has a threshold to tune: a name is in the repository or it is not. Without a store,
  or with an empty one, nothing is decided (``answer``). Inputs are never mutated.

Usage:
```python
from haystack import Document
from codeground.components.grounding.premise import QuestionPremise
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

store = SQLiteBM25DocumentStore()
trainer = Document(content="class Trainer:\\n    def fit(self, data): ...", meta={"symbol": "Trainer"})
store.write_documents([trainer])
premise = QuestionPremise(document_store=store)
premise.warm_up()
assert premise.run(query="What does `Trainer.fit` return?")["verdict"] == "answer"
out = premise.run(query="How do I call `Trainer.fly_to_moon()`?")
assert out["verdict"] == "refuse" and out["premise"]["absent"] == ["Trainer.fly_to_moon"] and out["refusal"]
assert premise.run(query="Does Trainer log to PostgreSQL?")["premise"]["proper_absent"] == ["PostgreSQL"]
```
"""

from __future__ import annotations

import re
from typing import Any

from haystack import component, default_from_dict, default_to_dict

from codeground.components.grounding.evidence import STOP_WORDS
from codeground.components.grounding.extract import ALLOWLIST, extract_identifiers
from codeground.components.grounding.vocabulary import (
    RepositoryVocabulary,
    normalized,
    vocabulary_of,
    written_in,
)
from codeground.components.identifiers import dotted
from codeground.components.markdown import blocks
from codeground.components.notices import NO_ANSWER, Notice

_FLAG = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*[A-Za-z0-9])(?:=([a-z][a-z0-9]+)\b(?![./:-]))?")
_FLAG_WITH_VALUE = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*[A-Za-z0-9])[= ]([a-z][a-z0-9]+)\b(?![./:-])")
# an HTTP endpoint: /v1/…, /v2/…, /api/… (a file path such as /home/me/out.txt is not one)
_URL_PATH = re.compile(r"(?<![\w./:~-])/(?:v\d+|api)(?:/[A-Za-z0-9_{}.-]+)+")
_WORD = re.compile(r"(?<![\w.'’-])([A-Za-z][A-Za-z0-9]*)(?![\w'’-])")
# what may come right before a sentence's first word: a stop, a line start, a Markdown heading, list
# or quote marker, emphasis, an opening quote or bracket
_SENTENCE_START = re.compile(r"(?:(?:\A|\n)\s*(?:#+\s+|[-*+>]\s+|\d+[.)]\s+)?|[.?!:;]\s+|[\"“(*_]+\s*)\Z")
_LOOK_BACK = 24
_INLINE = re.compile(r"`[^`\n]*`")
# a capitalised word followed by the kind of definition it names: "vLLM's Trainer class"
_TYPED = re.compile(
    r"(?<![\w.'’-])([A-Z][A-Za-z0-9_]*)\s+(?:class|dataclass|decorator|exception|enum|struct|trait)\b"
)
_OWN = re.compile(r"\b(?:my|our)\s+`?$", re.IGNORECASE)
REFUSAL = (
    "This repository does not have what the question asks about (the note with the sources names it), so "
    "the model was not asked. The closest sources are below; check the spelling, or ask with other words."
)


def _starts_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` of ``text`` is a sentence's first word (``_SENTENCE_START``)."""
    return _SENTENCE_START.search(text[max(0, start - _LOOK_BACK) : start]) is not None


def _proper_nouns(prose: str) -> list[str]:
    """Capitalised words of ``prose`` that do not start a sentence, and words in capitals."""
    text = _INLINE.sub(" ", prose)
    found: dict[str, None] = {}
    for m in _WORD.finditer(text):
        word = m.group(1)
        if len(word) < 2 or not word[0].isupper():
            continue
        if word.isupper() or not _starts_sentence(text, m.start()):
            found.setdefault(word, None)
    return list(found)


def _named_as_types(prose: str) -> list[str]:
    """Capitalised words that ``prose`` writes as a type's name (``the Trainer class``), not at a
    sentence's start (``Which class …``)."""
    text = _INLINE.sub(" ", prose)
    found: dict[str, None] = {}
    for m in _TYPED.finditer(text):
        if not _starts_sentence(text, m.start(1)):
            found.setdefault(m.group(1), None)
    return list(found)


def _only_as_own(name: str, prose: str) -> bool:
    """Whether every mention of ``name`` in ``prose`` follows "my" or "our" (the user's own code)."""
    text = dotted(prose)
    mentions = list(re.finditer(rf"(?<![\w.]){re.escape(name)}(?![\w])", text))
    return bool(mentions) and all(_OWN.search(text[max(0, m.start() - 8) : m.start()]) for m in mentions)


def _split(question: str) -> tuple[str, str]:
    """(prose with inline code, fenced code) of a Markdown question."""
    prose: list[str] = []
    code: list[str] = []
    for block in blocks(question.splitlines(keepends=True)):
        (prose if block.fence is None else code).append("".join(block.lines))
    return "".join(prose), "\n".join(code)


@component
class QuestionPremise:
    """Check the names a question uses against the whole repository before answering (module rules)."""

    def __init__(
        self,
        *,
        document_store: Any = None,
        refuse_absent: bool = True,
        refuse_unmentioned: bool = False,
        allowlist: list[str] | None = None,
    ) -> None:
        """
        :param document_store: the store holding every record (the BM25 store), as the grounding check's.
        :param refuse_absent: refuse, without a model call, a question asking about a name the
            repository does not have; off: only tell the model.
        :param refuse_unmentioned: also refuse (with ``refuse_absent``) when a proper noun the question
            uses is nowhere in the repository; off (the default): only tell the model, because in a
            small repository ordinary capitalised words (``API``, ``Windows``) are absent too.
        :param allowlist: names never looked up (on top of the standard names), as the check's.
        """
        self.document_store = document_store
        self.refuse_absent = refuse_absent
        self.refuse_unmentioned = refuse_unmentioned
        self.allowlist = allowlist
        self._names: RepositoryVocabulary | None = None
        self._ignored: frozenset[str] = frozenset()  # names never looked up
        self._quiet: frozenset[str] = frozenset()  # lowercased words that are never proper nouns

    def warm_up(self) -> None:
        """Read the repository's vocabulary once (shared with the grounding check)."""
        if self._names is None:
            names = vocabulary_of(self.document_store)
            names.index_spellings()
            languages = names.languages
            self._ignored = frozenset(self.allowlist or ()).union(*(lang.stdlib for lang in languages))
            quiet = {w.lower() for w in ALLOWLIST | self._ignored} | {lang.name.lower() for lang in languages}
            self._quiet = frozenset(quiet | ({"python"} if names.python else set()))
            self._names = names

    @component.output_types(verdict=str, premise=dict, note=str, refusal=str, notices=list[str])
    def run(self, query: str) -> dict[str, Any]:
        """``answer`` / ``note`` / ``refuse``, the report, and the note or refusal that follows."""
        self.warm_up()
        names = self._names
        assert names is not None
        if not (names.identifiers or names.symbols):  # no repository to read: nothing can be decided
            return {"verdict": "answer", "premise": {}, "note": "", "refusal": "", "notices": []}
        prose, code = _split(query or "")
        ignored = self._ignored
        named = extract_identifiers(prose, allowlist=ignored)
        own = [n for n in named if _only_as_own(n, prose)]
        asked = [n for n in named if n not in own]
        typed = [
            w
            for w in _named_as_types(prose)
            if w not in named and w.lower() not in self._quiet and not _only_as_own(w, prose)
        ]
        asked += typed
        pasted = own + [n for n in extract_identifiers(code, allowlist=ignored) if n not in named]
        spans = [m.group(0) for m in _INLINE.finditer(prose)]
        flag_matches = _FLAG.findall(prose) + [f for span in spans for f in _FLAG_WITH_VALUE.findall(span)]
        flags = list(dict.fromkeys(f for f, _ in flag_matches))
        values = list(dict.fromkeys(v for _, v in flag_matches if v))
        paths = list(dict.fromkeys(p.rstrip("/.") for p in _URL_PATH.findall(prose)))
        seen = {normalized(n.rsplit(".", 1)[-1]) for n in asked + pasted}
        proper = [
            w for w in _proper_nouns(prose) if normalized(w) not in seen and w.lower() not in self._quiet
        ]

        # each name once: known (no spellings needed), else the repository's spellings ([] = absent)
        spellings = {
            n: names.near(n) for n in dict.fromkeys(asked + pasted + proper + values) if not names.is_known(n)
        }
        for n in typed:  # a type is spelt like one: `trainer` variables are not a Trainer class
            if n in spellings:
                spellings[n] = [w for w in spellings[n] if w[:1].isupper()]
        absent = [n for n in asked if n in spellings and not spellings[n]]
        absent_flags = [f"--{f}" for f in flags if not self._has_flag(f)]
        absent_paths = [p for p in paths if not written_in(self.document_store, p)]
        absent_values = [v for v in values if v not in STOP_WORDS and v in spellings and not spellings[v]]
        near = {n: spellings[n] for n in asked + pasted if spellings.get(n)}
        pasted_absent = [n for n in pasted if n in spellings and not spellings[n]]
        unmentioned = [w for w in proper if w in spellings and not spellings[w]]
        proper_absent = unmentioned + absent_values
        report = {
            "asked": asked,
            "flags": [f"--{f}" for f in flags],
            "paths": paths,
            "pasted": pasted,
            "proper_nouns": proper,
            "absent": absent + absent_flags + absent_paths,
            "near": near,
            "pasted_absent": pasted_absent,
            "proper_absent": proper_absent,
        }
        missing = absent + absent_flags + absent_paths
        unmentioned = unmentioned if self.refuse_unmentioned else []
        if (missing or unmentioned) and self.refuse_absent:
            parts = [f"this repository has no {', '.join(missing)}"] if missing else []
            parts += [f"nothing in it mentions {', '.join(unmentioned)}"] if unmentioned else []
            said = "; ".join(parts) + "; the model was not asked"
            return {
                "verdict": "refuse",
                "premise": report,
                "note": "",
                "refusal": REFUSAL,
                "notices": [Notice(NO_ANSWER, said)],
            }
        lines = []
        lacking = missing + pasted_absent
        if lacking:
            lines.append(f"This repository has no {', '.join(lacking)}.")
        if proper_absent:
            lines.append(f"Nothing in this repository mentions {', '.join(proper_absent)}.")
        if lacking or proper_absent:
            lines.append(
                "If the question depends on them, say that this repository material does not answer it."
            )
        for name, spellings in near.items():
            lines.append(f"The question writes {name}; this repository writes {', '.join(spellings)}.")
        note = ("Note: " + " ".join(lines)) if lines else ""
        return {
            "verdict": "note" if note else "answer",
            "premise": report,
            "note": note,
            "refusal": "",
            "notices": [],
        }

    def _has_flag(self, flag: str) -> bool:
        names = self._names
        assert names is not None
        return names.is_known(flag) or bool(names.near(flag)) or written_in(self.document_store, flag)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            document_store=self.document_store,
            refuse_absent=self.refuse_absent,
            refuse_unmentioned=self.refuse_unmentioned,
            allowlist=self.allowlist,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QuestionPremise:
        return default_from_dict(cls, data)
