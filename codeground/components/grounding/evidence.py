"""Does the retrieved material look like it answers the question? Decided from retrieval alone.

Rule: the evidence is how much of what the question asks about the best ``top_n`` excerpts contain:

- *terms*: the question's content words (identifier-aware tokens, without stop words and question
  words, at least 3 characters), and the share of them found among the tokens of the excerpts
  (header, text and the carried implementation);
- *names*: the identifiers the question names (code-looking words and anything in backticks), and
  the share of them found verbatim (case kept) in those excerpts. An API the question names that no
  excerpt mentions is the commonest sign of a question about something the repository lacks.

``score = term share × name share`` (a share is 1 when the question has none). Below
``caution_below`` the prompt tells the model the material may not answer (``note``) and it may
still answer from what is there; below ``refuse_below`` the answer is the refusal, with the closest
sources, and no model call (``refusal``, for ``GuardedChatGenerator``); a refusal already decided
upstream (the question's premise: a name the repository lacks) is passed on unchanged. Both lines
are set on other repositories' questions than the ones the pipeline is measured on
(docs/measurements/answers.md).

Usage:
```python
from haystack import Document
from codeground.components.grounding.evidence import AnswerEvidence

judge = AnswerEvidence(caution_below=0.5, refuse_below=0.2)
docs = [Document(content="def fit(self, data): ...", meta={"header": "File: t.py | Symbol: Trainer.fit"})]
assert judge.run(query="What does `Trainer.fit` return?", documents=docs)["verdict"] == "answer"
assert judge.run(query="How do I use `Trainer.fly_to_moon`?", documents=docs)["verdict"] == "refuse"
```
"""

from __future__ import annotations

import re
from typing import Any

from haystack import Document, component

from codeground.components.identifiers import code_names, dotted, tokenize
from codeground.components.notices import NO_ANSWER, Notice

STOP_WORDS = frozenset(
    """
    the a an and or but of to in on at by for from with without into onto over under about as is are
    was were be been being do does did done doing have has had having can could should would will
    shall may might must not no yes it its this that these those there here then than so such very
    how what when where which who whom whose why i me my we our you your they them their he she his
    her use using used get gets got make makes made want need let lets way ways any all some each
    every other another more most much many also just only still even like one two does doesn
    """.split()
)
REFUSAL = (
    "This repository's material does not seem to answer that: the closest sources below do not "
    "mention what the question asks about, so the model was not asked. Try other words, or the name "
    "of a class, function or file."
)


def key_terms(question: str) -> set[str]:
    """The question's content words, as BM25 tokens."""
    return {t for t in tokenize(question) if len(t) >= 3 and t not in STOP_WORDS and not t.isdigit()}


def named_identifiers(question: str) -> list[str]:
    """Identifiers the question names: code-looking words and anything in backticks (``Type::m`` as
    ``Type.m``), longest first so a dotted name is not also counted by its parts."""
    names = [t for t in code_names(dotted(question)) if t.lower() not in STOP_WORDS]
    kept: list[str] = []
    for name in sorted(set(names), key=len, reverse=True):
        if not any(name in k.split(".") for k in kept if "." in k):
            kept.append(name)
    return kept


def evidence(question: str, documents: list[Document], top_n: int = 3) -> dict[str, Any]:
    """The term and name shares of ``question`` in the best ``top_n`` documents, and their product."""
    texts = []
    for doc in documents[:top_n]:
        meta = doc.meta or {}
        texts.append("\n".join(str(p) for p in (meta.get("header"), doc.content, meta.get("impl")) if p))
    blob = "\n".join(texts)
    tokens = set(tokenize(blob))
    terms = key_terms(question)
    names = named_identifiers(question)
    found_terms = sorted(t for t in terms if t in tokens)
    found_names = [n for n in names if re.search(rf"(?<!\w){re.escape(n.rsplit('.', 1)[-1])}(?!\w)", blob)]
    term_share = len(found_terms) / len(terms) if terms else 1.0
    name_share = len(found_names) / len(names) if names else 1.0
    return {
        "score": round(term_share * name_share, 4),
        "terms": sorted(terms),
        "terms_found": found_terms,
        "names": names,
        "names_found": found_names,
    }


@component
class AnswerEvidence:
    """Judge, from the retrieved excerpts alone, whether they are likely to answer (module rules)."""

    def __init__(self, *, caution_below: float = 0.5, refuse_below: float = 0.2, top_n: int = 3) -> None:
        """
        :param caution_below: below this score the prompt says the material may not answer.
        :param refuse_below: below this score the answer is the refusal, without a model call.
        :param top_n: how many of the best excerpts are read.
        """
        if not 0 <= refuse_below <= caution_below <= 1:
            raise ValueError("AnswerEvidence needs 0 <= refuse_below <= caution_below <= 1")
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        self.caution_below = caution_below
        self.refuse_below = refuse_below
        self.top_n = top_n

    @component.output_types(
        documents=list[Document], verdict=str, evidence=dict, note=str, refusal=str, notices=list[str]
    )
    def run(self, query: str, documents: list[Document], refusal: str | None = None) -> dict[str, Any]:
        """The documents unchanged, the verdict (``answer``/``caution``/``refuse``) and what follows.
        A ``refusal`` decided upstream (``QuestionPremise``) is passed on as it is, verdict ``refuse``."""
        found = evidence(query, documents, self.top_n)
        if refusal:
            return {
                "documents": list(documents),
                "verdict": "refuse",
                "evidence": found,
                "note": "",
                "refusal": refusal,
                "notices": [],
            }
        score = found["score"]
        missing = [n for n in found["names"] if n not in found["names_found"]]
        if documents and score < self.refuse_below:
            verdict = "refuse"
        elif documents and score < self.caution_below:
            verdict = "caution"
        else:
            verdict = "answer"
        what = f"no excerpt mentions {', '.join(missing)}" if missing else f"evidence {score:.2f}"
        note = (
            f"Note: these excerpts may not answer the question ({what}). If they do not, say so."
            if verdict == "caution"
            else ""
        )
        refused = f"the material does not seem to answer this ({what}); the model was not asked"
        notices = [Notice(NO_ANSWER, refused)] if verdict == "refuse" else []
        return {
            "documents": list(documents),
            "verdict": verdict,
            "evidence": found,
            "note": note,
            "refusal": REFUSAL if verdict == "refuse" else "",
            "notices": notices,
        }
