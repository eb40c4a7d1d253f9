"""The check that cannot be faked: on trees it never trained on, does the reranker beat BM25's order?

Rule: for each held-out group, the candidates are our BM25's top list for its question over its
own tree (the answer among them when BM25 found it, at ``bm25_rank``). MRR@10 of BM25's order is
the mean of 1/rank of the answer; the reranker's MRR@10 scores the *same* candidates and ranks the
answer among them (a tie keeps BM25's order, so constant scores win nothing). A question whose
answer BM25 did not retrieve counts 0 for both, so the reranker can only win by ordering, never by
seeing more. The build fails unless the reranker's MRR@10 is higher than BM25's.

Usage:
```python
from codeground.reranker.heldout import mrr_at_10
from codeground.reranker.mining import Group

group = Group("q", "answer", ("a", "b"), "t", "code", bm25_rank=2, candidates=("a", "answer", "b"))
scores = lambda query, texts: [1.0 if t == "answer" else 0.0 for t in texts]
assert mrr_at_10([group], scores) == {"questions": 1, "bm25": 0.5, "reranker": 1.0, "answer_retrieved": 1}
```
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeground.reranker.mining import Group

Scorer = Callable[[str, list[str]], list[float]]


def mrr_at_10(groups: list[Group], score: Scorer) -> dict[str, Any]:
    """BM25's and the reranker's MRR@10 over the same candidates of ``groups``."""
    bm25 = reranked = 0.0
    retrieved = 0
    for g in groups:
        candidates = list(g.candidates[:10])
        if g.bm25_rank is None or g.bm25_rank > 10 or g.positive not in candidates:
            continue
        retrieved += 1
        bm25 += 1.0 / g.bm25_rank
        scores = score(g.query, candidates)
        at = candidates.index(g.positive)
        # a tie keeps BM25's order: a reranker without an opinion scores exactly BM25's MRR
        rank = 1 + sum(s > scores[at] or (s == scores[at] and i < at) for i, s in enumerate(scores))
        reranked += 1.0 / rank
    n = max(1, len(groups))
    return {
        "questions": len(groups),
        "bm25": round(bm25 / n, 4),
        "reranker": round(reranked / n, 4),
        "answer_retrieved": retrieved,
    }


def torch_scorer(folder: str | Path, *, max_length: int, batch_size: int = 32) -> Scorer:
    """Scores of a saved cross-encoder (logits; higher is better), computed with torch."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = BertForSequenceClassification.from_pretrained(str(folder)).eval()

    def score(query: str, texts: list[str]) -> list[float]:
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                chunk = texts[start : start + batch_size]
                features = tokenizer(
                    [query] * len(chunk),
                    chunk,
                    truncation="only_second",
                    max_length=max_length,
                    padding=True,
                    return_tensors="pt",
                )
                out += model(**features).logits.view(-1).tolist()
        return out

    return score
