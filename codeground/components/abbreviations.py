"""Programmers' abbreviations: the word prose spells out and the short form code writes meet.

Rule: a question's word that is one of the spellings of a group below (the English word, its
plural or inflections, and the short forms code uses for it) also asks BM25 for the group's short
form (``identifiers.query_tokens``). "Which text values are accepted as true when coercing text to
a boolean?" then meets ``str_as_bool``; "the configuration's directory" meets ``config.dir``. The
index is not changed: adding the short forms to every record's tokens as well moved as many
questions down as up (docs/measurements/retrieval.md). The groups
are the abbreviations that the standard libraries of Python, Go, Rust, Java and JavaScript use as
names or name parts (``str``, ``bool``, ``dict``, ``len``, ``Vec``, ``fmt``, ``ctx``, ``err``,
``impl``, ``args``, ``getattr``, ``os.environ``, ``io.Copy(dst, src)``), a fact of how code is
written, not of any repository. Left out: abbreviations with more than one common reading
(``gen``, ``res``, ``dec``, ``inc``, ``win``, ``re``), and those that are a reserved word of one of
the five languages (``def``, ``func``/``fn``, ``impl``, ``mod``, ``ref``, ``var``, ``del``,
``async``, Java's ``int`` and ``char``): a keyword stands in nearly every definition and says
nothing of what it does ("a completion function" asking for ``func`` matched every Go function).

```python
from codeground.components.abbreviations import short_form

assert short_form("boolean") == "bool" and short_form("Configurations") == "config"
assert short_form("cfg") == "config" and short_form("bool") is None  # already the short form
assert short_form("generation") is None  # an ambiguous abbreviation is not in the table
assert short_form("function") is None  # nor one that is a keyword (Go's func, Rust's fn)
```
"""

from __future__ import annotations

import re
from functools import lru_cache

# short form -> every spelling that also yields it (full regex match, case-insensitive)
GROUPS: dict[str, str] = {
    "arg": r"arguments?|args?",
    "param": r"parameters?|params?",
    "attr": r"attributes?|attrs?",
    "bool": r"booleans?|bools?",
    "str": r"strings?|strs?",
    "dict": r"dictionar(?:y|ies)|dicts?",
    "config": r"configurations?|configs?|cfgs?|conf",
    "dir": r"director(?:y|ies)|dirs?",
    "env": r"environments?|envs?",
    "msg": r"messages?|msgs?",
    "ctx": r"contexts?|ctx",
    "obj": r"objects?|objs?",
    "len": r"lengths?|len",
    "num": r"numbers?|nums?",
    "max": r"maximums?|maximal|max",
    "min": r"minimums?|minimal|min",
    "prev": r"previous|prev",
    "src": r"sources?|src",
    "dst": r"destinations?|dst|dest",
    "tmp": r"temporar(?:y|ily)|tmp|temp",
    "buf": r"buffers?|bufs?",
    "spec": r"specifications?|specs?",
    "util": r"utilit(?:y|ies)|utils?",
    "alloc": r"allocat(?:e|es|ed|ing|ions?|ors?)|allocs?",
    "addr": r"address(?:es)?|addrs?",
    "cmd": r"commands?|cmds?",
    "conn": r"connections?|conns?",
    "db": r"databases?|dbs?",
    "elem": r"elements?|elems?",
    "expr": r"expressions?|exprs?",
    "fmt": r"format(?:s|ted|ting)?|fmt",
    "iter": r"iterat(?:e|es|ed|ing|ions?|ors?)|iters?",
    "mem": r"memory|mem",
    "opt": r"options?|optional|opts?",
    "pkg": r"packages?|pkgs?",
    "proc": r"process(?:es)?|procs?",
    "ptr": r"pointers?|ptrs?",
    "pos": r"positions?|pos",
    "repo": r"repositor(?:y|ies)|repos?",
    "req": r"requests?|reqs?",
    "resp": r"responses?|resps?",
    "seq": r"sequences?|seqs?",
    "sep": r"separators?|seps?",
    "val": r"values?|vals?",
    "vec": r"vectors?|vecs?",
    "err": r"errors?|errs?",
    "exec": r"execut(?:e|es|ed|ing|ions?|ors?)|exec",
    "cmp": r"compar(?:e|es|ed|ing|isons?|ators?)|cmp",
    "calc": r"calculat(?:e|es|ed|ing|ions?)|calc",
    "info": r"information|info",
    "lib": r"librar(?:y|ies)|libs?",
    "img": r"images?|imgs?",
    "doc": r"documents?|documentation|docs?",
    "decl": r"declar(?:e|es|ed|ing|ations?)|decls?",
    "sync": r"synchronous(?:ly)?|synchroni[sz](?:e|es|ed|ing|ation)|sync",
    "auth": r"authenticat(?:e|es|ed|ing|ion|ors?)|authori[sz](?:e|es|ed|ing|ation)|auth",
    "stat": r"statistics?|stats?",
    "std": r"standard|std",
    "sys": r"systems?|sys",
    "ver": r"versions?|ver",
    "prop": r"propert(?:y|ies)|props?",
    "lang": r"languages?|langs?",
    "loc": r"locations?|locs?",
    "col": r"columns?|cols?",
    "hdr": r"headers?|hdrs?",
    "ext": r"extensions?|exts?",
    "desc": r"descriptions?|desc",
    "diff": r"differences?|diffs?",
    "eq": r"equal(?:s|ity)?|eq",
    "idx": r"indices|indexes|index|idx",
    "cnt": r"counts?|cnt",
    "avg": r"averages?|avg",
    "concat": r"concatenat(?:e|es|ed|ing|ion)|concat",
}

# one alternation, a named group per short form: a word is matched once, not once per group
_SHORT_OF_GROUP = {f"g{i}": short for i, short in enumerate(GROUPS)}
_ANY = re.compile("|".join(f"(?P<g{i}>{spellings})" for i, spellings in enumerate(GROUPS.values())))


@lru_cache(maxsize=200_000)
def short_form(word: str) -> str | None:
    """The short form ``word`` also yields, or None (no group, or ``word`` is the short form itself)."""
    lowered = word.lower()
    match = _ANY.fullmatch(lowered)
    if match is None:
        return None
    short = _SHORT_OF_GROUP[match.lastgroup]
    return None if lowered == short else short
