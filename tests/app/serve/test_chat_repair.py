"""The chat's answer stream keeps the order of events, so the page can replace a repaired answer:
the first answer's tokens, then ``repair`` (the page clears the answer), then the corrected tokens."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from codeground.app.serve.ui import stream_answer


class _Engine:
    def answer(self, question, *, history=None, on_token=None, on_repair=None):
        for token in ("Use ", "`Trainer.fit_fast`."):
            on_token(token)
        on_repair(["Trainer.fit_fast"])
        for token in ("Use ", "`Trainer.fit`."):
            on_token(token)
        return SimpleNamespace(answer="Use `Trainer.fit`.", repaired=["Trainer.fit_fast"])


class _Pool:
    def get(self, pipeline):
        return _Engine()


def test_tokens_repair_and_the_corrected_tokens_arrive_in_order():
    events = list(stream_answer(_Pool(), Path("query.yaml"), "How do I fit?", []))
    kinds = [k for k, _ in events]
    assert kinds[0] == "engine" and kinds[-1] == "result"
    body = [(k, v) for k, v in events[1:-1]]
    cut = body.index(("repair", ["Trainer.fit_fast"]))
    before = "".join(v for k, v in body[:cut] if k == "tokens")
    after = "".join(v for k, v in body[cut + 1 :] if k == "tokens")
    assert (before, after) == ("Use `Trainer.fit_fast`.", "Use `Trainer.fit`.")
