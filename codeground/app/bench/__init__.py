"""Measurements: ``codeground bench`` (``runner``) on vLLM, other languages (``language_bench``,
``corpora``), the Qdrant pair (``qdrant_bench``), semble's benchmark (``semble_bench``,
``semble_score``, ``semble_diagnostics``) and answers (``answer_bench``); recall and latency
(``evaluation``, ``eval_runner``)."""
