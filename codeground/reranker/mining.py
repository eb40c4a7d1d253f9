"""Self-supervised (question, answer, hard negatives) groups mined from source trees, reproducibly.

Rules (a group is what one training step scores for one question):
- **Code**: a documented class, function or method (our ``PythonAstChunker``'s ``api`` record) gives
  the question *its docstring's summary* (first sentence, 4-40 words; boilerplate like "Return
  self" or "Deprecated" dropped) and the answer *its whole definition with that sentence cut out*
  (signature, the rest of the docstring, the body), so the model learns to match words to code,
  not to find a copied sentence — in half of the groups (``VERBATIM_SHARE``, drawn per group); the
  other half shows every candidate as it is indexed, the summary still in the answer's docstring,
  as a question that repeats a docstring's words meets it at query time. Cutting it everywhere
  taught the model that a candidate sharing the question's words is a negative (our BM25 picks
  exactly those): on the vLLM dev questions it then demoted the definitions the question named.
- **Docs**: a section of a package's README (our ``DocsChunker``) gives the question *its heading*
  (2-12 words) and the answer *the section body without the heading*; its symbol names only the
  parent headings.
- Every candidate, answer or negative, is rendered the same way (``render``): path, symbol and
  text, one per line — what the reranker reads at query time — so nothing but those tells the
  answer apart (not the record type: every answer is a documented definition).
- **Questions name things**, as real ones do: a code question is the summary alone, the summary
  scoped to the symbol's owner, or "What does <name> in <owner> do?" (``question_forms``).
- **Hard negatives**: a definition of the same name elsewhere (another class's ``forward``), the
  records our own BM25 (``SQLiteBM25DocumentStore`` over the tree's rendered records) ranks
  highest for the question, and a sibling from the same file; never
  another record of the answer's symbol (its body record) nor one with the same summary (the
  same docstring copied onto another class).
- Reproducible: trees, files and records in sorted order, and one ``random.Random(seed)`` per tree
  draws which questions are kept (``max_per_tree``) and which sibling is taken.

Usage:
```python
from codeground.reranker.mining import mine_tree
from codeground.reranker.sources import source_tree

groups = mine_tree(source_tree("click"), seed=0, max_per_tree=20, negatives=3)
assert groups and all(g.positive not in g.negatives for g in groups)
print(groups[0].query, len(groups[0].negatives))
```
"""

from __future__ import annotations

import logging
import random
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from haystack import Document
from haystack.dataclasses import ByteStream

from codeground.reranker.sources import SourceTree

logger = logging.getLogger(__name__)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_BOILERPLATE = re.compile(
    r"^(return self|implement|initiali[sz]e self|deprecated|alias|see |same as|override|"
    r"todo|fixme|internal|helper|private|no-?op|placeholder|docstring)",
    re.IGNORECASE,
)
VERBATIM_SHARE = 0.5  # code groups shown as indexed (the summary still in the answer's docstring)
_ADORNMENT = re.compile(r"^\s*([=\-~^\"'`#*+:._])\1{2,}\s*$")


@dataclass(frozen=True)
class Group:
    """One question with its answer and hard negatives, each a rendered candidate text."""

    query: str
    positive: str
    negatives: tuple[str, ...]
    tree: str
    kind: str  # "code" | "docs"
    bm25_rank: int | None = None  # where our BM25 put the answer among its top candidates (1-based)
    candidates: tuple[str, ...] = field(default=(), compare=False)  # BM25's top list, answer included


def docstring_summary(docstring: str) -> str | None:
    """The first sentence of a docstring's first paragraph when it reads as a question-like summary."""
    paragraph = docstring.strip().split("\n\n")[0]
    text = " ".join(paragraph.split())
    if not text or text.startswith((">>>", ":", "..", "@", "-", "*", "`")):
        return None
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0].strip()
    words = sentence.split()
    if not 4 <= len(words) <= 40 or _BOILERPLATE.match(sentence):
        return None
    if sum(w.isalpha() for w in words) < len(words) / 2:
        return None
    return sentence


def _without_heading(content: str, title: str) -> str:
    lines = content.splitlines()
    if lines and title.split()[0].lower() in lines[0].lower():
        lines = lines[1:]
        if lines and _ADORNMENT.match(lines[0]):
            lines = lines[1:]
    if lines and _ADORNMENT.match(lines[0]):
        lines = lines[1:]
    return "\n".join(lines).strip()


@dataclass
class _Candidate:
    id: str
    file_path: str
    symbol: str
    text: str  # rendered, its docstring summary cut out (the paraphrase view)
    summary: str | None  # the question it answers, if it is one
    kind: str = "code"
    full: str = ""  # rendered as indexed, summary included (the verbatim view)

    def view(self, verbatim: bool) -> str:
        return self.full if verbatim and self.full else self.text


def render(file_path: str, symbol: str, text: str, max_chars: int) -> str:
    """What the reranker reads of a candidate: its path, its symbol and its text (cut), one per line —
    the ranker's ``meta_fields_to_embed: [file_path, symbol]`` at query time. The record type is left
    out: every mined answer is a documented definition, and a model that could read ``Type: api``
    would learn that instead of the content."""
    return f"{file_path}\n{symbol}\n{text[:max_chars]}"


def question_forms(summary: str, symbol: str, file_path: str, rng: random.Random) -> str:
    """The question a group asks: the summary as it is, or (real questions name what they are about)
    the summary scoped to the symbol's owner (its class, else its module), or a question naming the
    symbol and its owner, e.g. ``What does parse in Parser do?``; one drawn with ``rng``."""
    parts = symbol.split(".")
    name = parts[-1]
    owner = parts[-2] if len(parts) > 1 else Path(file_path).stem
    form = rng.random()
    if form < 0.4 or not name:
        return summary
    if form < 0.7:
        return f"{summary.rstrip('.')} in {owner}"
    return f"What does {name} in {owner} do?"


def _code_candidates(tree: SourceTree, files: list[Path], max_chars: int) -> list[_Candidate]:
    import ast

    from codeground.components.chunkers.python_ast import PythonAstChunker

    chunker = PythonAstChunker(all_definitions=False, module_records=False)
    out: list[_Candidate] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if len(data) > 400_000:
            continue
        rel = f"{tree.name}/{path.relative_to(tree.root).as_posix()}"
        docs = chunker.run(sources=[ByteStream(data, meta={"file_path": rel})])["documents"]
        for doc in docs:
            meta = doc.meta
            summary = None
            text = doc.content or ""
            if meta.get("source_type") == "api":
                impl = str(meta.get("impl") or text)
                try:
                    node = ast.parse(textwrap.dedent(impl)).body[0]
                    docstring = ast.get_docstring(node) or ""
                except (SyntaxError, IndexError, ValueError):
                    docstring = ""
                summary = docstring_summary(docstring) if docstring else None
                full = text = impl
                if summary:  # cut the sentence out wherever its words sit (it may wrap over lines)
                    words = [re.escape(w) for w in summary.split()]
                    text = re.sub(r"\s+".join(words), "", impl, count=1)
            else:
                full = text
            symbol = str(meta.get("symbol", ""))
            out.append(
                _Candidate(
                    doc.id,
                    rel,
                    symbol,
                    render(rel, symbol, text, max_chars),
                    summary,
                    full=render(rel, symbol, full, max_chars),
                )
            )
    return out


def _docs_candidates(tree: SourceTree, max_chars: int) -> list[_Candidate]:
    from codeground.components.chunkers.docs import DocsChunker

    pages = [ByteStream(tree.readme.encode(), meta={"file_path": f"{tree.name}/README{tree.readme_suffix}"})]
    for path in tree.doc_files():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        rel = f"{tree.name}/{path.relative_to(tree.root).as_posix()}"
        pages.append(ByteStream(data, meta={"file_path": rel}))
    pages = [p for p in pages if p.data.strip() and len(p.data) < 400_000]
    docs = DocsChunker().run(sources=pages)["documents"] if pages else []
    out: list[_Candidate] = []
    for doc in docs:
        trail = str(doc.meta.get("symbol", "")).split(" > ")
        title = " ".join(trail[-1].replace("`", " ").split())
        body = _without_heading(doc.content or "", title) if title else (doc.content or "")
        question = title if 2 <= len(title.split()) <= 12 and len(body) >= 80 else None
        rel = str(doc.meta["file_path"])
        out.append(
            _Candidate(
                doc.id,
                rel,
                str(doc.meta.get("symbol", "")),
                render(rel, " > ".join(trail[:-1]) or Path(rel).stem, body, max_chars),
                question,
                "docs",
            )
        )
    return out


def mine_tree(
    tree: SourceTree,
    *,
    seed: int,
    max_per_tree: int,
    negatives: int = 4,
    bm25_top: int = 10,
    max_chars: int = 1200,
    max_files: int = 3000,
) -> list[Group]:
    """Up to ``max_per_tree`` groups from ``tree`` (code and docs questions, drawn with ``seed``)."""
    from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore

    rng = random.Random(f"{seed}:{tree.name}")
    files = tree.python_files()
    if len(files) > max_files:
        files = sorted(rng.sample(files, max_files))
    code = _code_candidates(tree, files, max_chars)
    docs = _docs_candidates(tree, max_chars)
    candidates = code + docs
    if not candidates:
        return []
    by_id = {c.id: c for c in candidates}
    store = SQLiteBM25DocumentStore()  # in memory
    store.write_documents([Document(id=c.id, content=c.view(True)) for c in by_id.values()])
    by_file: dict[str, list[_Candidate]] = {}
    by_name: dict[str, list[_Candidate]] = {}
    for c in by_id.values():
        by_file.setdefault(c.file_path, []).append(c)
        if c.kind == "code":
            by_name.setdefault(c.symbol.rsplit(".", 1)[-1], []).append(c)

    same_summary: dict[str, set[tuple[str, str]]] = {}  # a docstring copied onto several symbols
    for c in by_id.values():
        if c.summary:
            same_summary.setdefault(c.summary.lower(), set()).add((c.file_path, c.symbol))
    questions = [c for c in by_id.values() if c.summary]
    # docs questions are few: keep them all (up to a fifth of the budget), draw the code ones
    docs_q = [c for c in questions if c.kind == "docs"][: max(1, max_per_tree // 5)]
    code_q = [c for c in questions if c.kind == "code"]
    rng.shuffle(code_q)
    chosen = docs_q + code_q[: max(0, max_per_tree - len(docs_q))]

    groups: list[Group] = []
    for answer in chosen:
        summary = str(answer.summary)
        query = summary
        if answer.kind == "code":
            query = question_forms(summary, answer.symbol, answer.file_path, rng)

        copies = same_summary.get(summary.lower(), set()) | {(answer.file_path, answer.symbol)}

        def excluded(c: _Candidate, copies: set[tuple[str, str]] = copies) -> bool:
            return (c.file_path, c.symbol) in copies  # the answer's own records, or a copy's

        hits = [by_id[d.id] for d in store.bm25_retrieval(query, top_k=bm25_top + 4) if d.id in by_id]
        ranked = [h for h in hits if h.id == answer.id or not excluded(h)][:bm25_top]
        bm25_rank = next((i + 1 for i, h in enumerate(ranked) if h.id == answer.id), None)
        verbatim = answer.kind == "code" and rng.random() < VERBATIM_SHARE
        chosen_negatives: list[_Candidate] = [h for h in ranked if h.id != answer.id][: max(0, negatives - 1)]
        siblings = [
            c for c in by_file.get(answer.file_path, []) if not excluded(c) and c not in chosen_negatives
        ]
        if siblings:
            chosen_negatives.append(rng.choice(siblings))
        name = answer.symbol.rsplit(".", 1)[-1]
        namesakes = [c for c in by_name.get(name, []) if answer.kind == "code" and not excluded(c)]
        namesakes = [c for c in namesakes if c not in chosen_negatives]
        if namesakes:  # the same name elsewhere: only the owner, path or content tells them apart
            chosen_negatives.insert(0, rng.choice(namesakes))
        others = [h for h in ranked if h.id != answer.id and h not in chosen_negatives]
        chosen_negatives.extend(others[: max(0, negatives - len(chosen_negatives))])
        if len(chosen_negatives) < negatives:  # a tiny tree: fill from anywhere in it
            pool = [c for c in by_id.values() if not excluded(c) and c not in chosen_negatives]
            chosen_negatives.extend(rng.sample(pool, min(len(pool), negatives - len(chosen_negatives))))
        if not chosen_negatives:
            continue
        groups.append(
            Group(
                query,
                answer.view(verbatim),
                tuple(c.view(verbatim) for c in chosen_negatives[:negatives]),
                tree.name,
                answer.kind,
                bm25_rank,
                tuple(h.view(verbatim) for h in ranked),
            )
        )
    store.close()
    return groups


def mine(
    trees: list[SourceTree],
    *,
    seed: int,
    max_per_tree: int,
    negatives: int = 4,
    max_chars: int = 1200,
    on_tree=lambda tree, groups: None,
) -> list[Group]:
    """The groups of every tree, in tree order; ``on_tree(tree, groups)`` after each tree."""
    out: list[Group] = []
    for tree in trees:
        groups = mine_tree(
            tree, seed=seed, max_per_tree=max_per_tree, negatives=negatives, max_chars=max_chars
        )
        on_tree(tree, groups)
        out.extend(groups)
    return out
