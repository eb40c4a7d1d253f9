"""Tests for OllamaLLMRanker against the fake Ollama server over real HTTP: the model's 0-10 scores
reorder the top 12; anything short of a usable answer keeps the fused order and says so."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import threading
import time

import pytest
from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.rankers.llm_ranker import DEFAULT_TIMEOUT_S, OllamaLLMRanker, parse_scores
from tests.conftest import closed_port
from tests.fake_ollama import last_user_text


def _doc(i: int, content: str | None = None) -> Document:
    symbol = f"f{i}"
    return Document(
        id=f"a.py:{symbol}:{i * 10 + 1}",
        content=content if content is not None else f"def {symbol}(x):\n    return x + {i}\n",
        score=round(1.0 - i / 100, 2),
        meta={"file_path": "a.py", "symbol": symbol, "start_line": i * 10 + 1, "end_line": i * 10 + 2,
              "header": f"File: a.py | Symbol: {symbol} | Type: impl"},
    )


def _fused(n: int = 4) -> list[Document]:
    return [_doc(i) for i in range(n)]


def _snapshot(docs: list[Document]) -> list[tuple]:
    return [(d.id, d.score, d.content) for d in docs]


def _ranker(fake, **params) -> OllamaLLMRanker:
    ranker = OllamaLLMRanker(url=fake.url, **{"timeout_s": 5, **params})
    ranker.warm_up()
    return ranker


def _chat_requests(fake) -> list:
    return fake.requests_to("/api/chat")


def _assert_no_opinion(out: dict, fused: list[Document], why: str) -> None:
    assert out["reranked"] is False
    assert _snapshot(out["documents"]) == _snapshot(fused)  # same order AND same scores: never zeroed
    assert len(out["notices"]) == 1
    notice = out["notices"][0]
    assert notice.startswith("reranking unavailable: ") and notice.endswith("; kept the fused order")
    assert re.search(why, notice), notice


def _candidates_in(request) -> int:
    """How many candidates the prompt of a recorded request lists."""
    return len(re.findall(r"^\[\d+\] ", last_user_text(request), flags=re.MULTILINE))


# -- parsing and scoring ---------------------------------------------------------------------------


def test_wrapped_json_scores_reorder_and_scale_to_0_1(fake_ollama):
    fake_ollama.configure(reply='{"scores": [2, 10, 5, 0]}')
    fused = _fused(4)
    out = _ranker(fake_ollama).run(query="what does f1 add?", documents=fused)
    assert out["reranked"] is True and out["notices"] == []
    assert [d.id for d in out["documents"]] == [fused[i].id for i in (1, 2, 0, 3)]
    assert [d.score for d in out["documents"]] == [1.0, 0.5, 0.2, 0.0]
    assert [d.content for d in out["documents"]] == [fused[i].content for i in (1, 2, 0, 3)]


def test_bare_json_array_is_accepted(fake_ollama):
    fake_ollama.configure(reply="[0, 0, 9, 1]")
    fused = _fused(4)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert out["reranked"] is True
    assert [d.id for d in out["documents"]] == [fused[i].id for i in (2, 3, 0, 1)]


@pytest.mark.parametrize(
    "reply",
    [
        'Sure! Here are the scores: {"scores": [1, 8, 3]} I hope this helps.',
        'Scores:\n```json\n{"scores": [1, 8, 3]}\n```',
        "The scores are [1, 8, 3], one per candidate.",
    ],
    ids=["object-in-prose", "object-in-fence", "array-in-prose"],
)
def test_json_inside_prose_is_found(fake_ollama, reply):
    fake_ollama.configure(reply=reply)
    fused = _fused(3)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert out["reranked"] is True
    assert [d.id for d in out["documents"]] == [fused[i].id for i in (1, 2, 0)]


def test_documented_shape_wins_over_a_bare_array():
    assert parse_scores('Candidates [1, 2, 3] got: {"scores": [9, 0, 4]}') == [9, 0, 4]
    assert parse_scores('{"scores": ["7", 3.0]}') == [7.0, 3.0]  # quoted numbers are numbers


@pytest.mark.parametrize("reply", ["", "I cannot score these.", '{"scores": "high"}', '{"scores": [1, "x"]}',
                                   "[true, false]", '{"scores": [NaN, 1]}'])
def test_unparseable_scores_raise_one_line(reply):
    with pytest.raises(ValueError) as info:
        parse_scores(reply)
    assert "\n" not in str(info.value)


def test_scores_are_clamped_to_0_10(fake_ollama):
    fake_ollama.configure(reply='{"scores": [-3, 14, 7.5]}')
    fused = _fused(3)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert [(d.id, d.score) for d in out["documents"]] == [(fused[1].id, 1.0), (fused[2].id, 0.75),
                                                           (fused[0].id, 0.0)]


def test_ties_keep_the_fused_order(fake_ollama):
    fake_ollama.configure(reply='{"scores": [5, 9, 5, 9]}')
    fused = _fused(4)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert [d.id for d in out["documents"]] == [fused[i].id for i in (1, 3, 0, 2)]


def test_candidates_beyond_twelve_keep_fused_order_below_the_scored(fake_ollama):
    # rising scores 0 … 10 (distinct: 12 whole numbers 0-10 would tie): the scored part comes out reversed
    def rising(body: dict) -> str:
        return json.dumps({"scores": [round(i * 10 / 11, 3) for i in range(_candidates_in(body))]})

    fake_ollama.configure(reply=rising)
    fused = _fused(16)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert _candidates_in(_chat_requests(fake_ollama)[0].body) == 12  # one request scores 12
    ids = [d.id for d in out["documents"]]
    assert ids[:12] == [fused[i].id for i in range(11, -1, -1)]  # scored, best first
    assert _snapshot(out["documents"][12:]) == _snapshot(fused[12:])  # the tail: fused order and scores
    assert len(_chat_requests(fake_ollama)) == 1


def test_top_k_cuts_a_reranked_list_only(fake_ollama):
    fake_ollama.configure(reply='{"scores": [1, 2, 3, 4]}')
    fused = _fused(4)
    ranker = _ranker(fake_ollama)
    assert [d.id for d in ranker.run(query="q", documents=fused, top_k=2)["documents"]] == [fused[3].id,
                                                                                           fused[2].id]
    fake_ollama.configure(reply="no idea")
    assert len(ranker.run(query="q", documents=fused, top_k=2)["documents"]) == 4  # no opinion: nothing cut


def test_inputs_are_not_mutated(fake_ollama):
    fake_ollama.configure(reply='{"scores": [0, 10, 3]}')
    fused = _fused(3)
    before = _snapshot(fused)
    order = list(fused)
    _ranker(fake_ollama).run(query="q", documents=fused)
    assert _snapshot(fused) == before and fused == order


# -- the request -----------------------------------------------------------------------------------


def test_request_carries_temperature_0_small_budget_and_700_char_cut(fake_ollama):
    fake_ollama.configure(reply='{"scores": [1, 2]}')
    long_a = "A" * 700 + "TAIL_A_MUST_NOT_BE_SENT"
    long_b = "B" * 699 + "X" + "TAIL_B_MUST_NOT_BE_SENT"
    fused = [_doc(0, long_a), _doc(1, long_b)]
    _ranker(fake_ollama).run(query="where is the LoRA loader?", documents=fused)
    body = _chat_requests(fake_ollama)[0].body
    assert body["options"]["temperature"] == 0
    assert 0 < body["options"]["num_predict"] <= 128
    assert body["stream"] is False
    assert body["format"]["required"] == ["scores"]  # Ollama's structured output, where supported
    prompt = last_user_text(body)
    assert "A" * 700 in prompt and "B" * 699 + "X" in prompt
    assert "TAIL_" not in prompt
    assert prompt.index("Symbol: f0") < prompt.index("Symbol: f1")  # rank order
    assert "where is the LoRA loader?" in prompt
    assert 'exactly 2 whole numbers from 0 to 10' in prompt
    system = body["messages"][0]["content"]
    assert '{"scores"' in system and "10 =" in system and "5 =" in system and "0 =" in system


def test_max_chars_and_max_candidates_come_from_init(fake_ollama):
    fake_ollama.configure(reply='{"scores": [1, 2]}')
    fused = [_doc(i, "x" * 50 + f"END{i}") for i in range(3)]
    _ranker(fake_ollama, max_chars=50, max_candidates=2).run(query="q", documents=fused)
    prompt = last_user_text(_chat_requests(fake_ollama)[0].body)
    assert _candidates_in(_chat_requests(fake_ollama)[0].body) == 2 and "END" not in prompt


# -- no opinion is not zero ------------------------------------------------------------------------


def test_wrong_number_of_scores_is_no_opinion_not_zero(fake_ollama):
    fake_ollama.configure(reply='{"scores": [10, 0]}')
    fused = _fused(4)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    _assert_no_opinion(out, fused, r"gave 2 scores for 4 candidates \(2 attempts\)")


def test_garbage_output_is_no_opinion(fake_ollama):
    fake_ollama.configure(reply="I think the second one is best.")
    fused = _fused(3)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    _assert_no_opinion(out, fused, "no JSON scores in the model's answer")


def test_empty_answer_is_no_opinion(fake_ollama):
    fake_ollama.configure(reply="")
    fused = _fused(3)
    _assert_no_opinion(_ranker(fake_ollama).run(query="q", documents=fused), fused, "answered nothing")


def test_timeout_is_no_opinion_after_two_attempts(fake_ollama):
    fake_ollama.configure(hang_seconds=5)
    fused = _fused(3)
    t0 = time.monotonic()
    out = _ranker(fake_ollama, timeout_s=0.3).run(query="q", documents=fused)
    elapsed = time.monotonic() - t0
    _assert_no_opinion(out, fused, r"no answer within 0.3 s \(2 attempts\)")
    assert elapsed < 2.0
    assert len(_chat_requests(fake_ollama)) == 2


def test_http_500_is_no_opinion_after_two_attempts(fake_ollama):
    fake_ollama.configure(status_code=500, error_message="llama runner process has terminated")
    fused = _fused(3)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    _assert_no_opinion(out, fused, r"HTTP 500: llama runner process has terminated \(2 attempts\)")
    assert len(_chat_requests(fake_ollama)) == 2


def test_second_attempt_recovers_from_a_passing_http_500(fake_ollama):
    fake_ollama.configure(status_code=500, status_code_times=1, reply='{"scores": [0, 9]}')
    fused = _fused(2)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert out["reranked"] is True and [d.id for d in out["documents"]] == [fused[1].id, fused[0].id]
    assert len(_chat_requests(fake_ollama)) == 2


def test_model_not_pulled_is_not_retried(fake_ollama):
    fake_ollama.configure(models=["qwen2.5-coder:7b"])
    fused = _fused(3)
    out = _ranker(fake_ollama, model="qwen2.5-coder:1.5b").run(query="q", documents=fused)
    _assert_no_opinion(out, fused, r"ollama pull qwen2.5-coder:1.5b.*\(1 attempt\)")
    assert len(_chat_requests(fake_ollama)) == 1


def test_unreachable_server_is_no_opinion():
    fused = _fused(3)
    ranker = OllamaLLMRanker(url=f"http://127.0.0.1:{closed_port()}", timeout_s=2)
    out = ranker.run(query="q", documents=fused)
    _assert_no_opinion(out, fused, "cannot reach the LLM server at http://127.0.0.1:")


def test_empty_query_is_no_opinion_without_a_request(fake_ollama):
    fused = _fused(3)
    ranker = _ranker(fake_ollama)
    for query in ("", "   \n"):
        _assert_no_opinion(ranker.run(query=query, documents=fused), fused, "the query is empty")
    assert _chat_requests(fake_ollama) == []


def test_nothing_to_order_sends_no_request(fake_ollama):
    ranker = _ranker(fake_ollama)
    assert ranker.run(query="q", documents=[]) == {"documents": [], "reranked": False, "notices": []}
    one = _fused(1)
    out = ranker.run(query="q", documents=one)
    assert _snapshot(out["documents"]) == _snapshot(one) and out["notices"] == []
    assert _chat_requests(fake_ollama) == []


def test_at_most_two_attempts_and_the_second_shows_the_unusable_answer(fake_ollama):
    fake_ollama.configure(reply="the first one")
    fused = _fused(3)
    _ranker(fake_ollama).run(query="q", documents=fused)
    first, second = _chat_requests(fake_ollama)  # exactly two
    assert [m["role"] for m in first.body["messages"]] == ["system", "user"]
    assert [m["role"] for m in second.body["messages"]] == ["system", "user", "assistant", "user"]
    assert second.body["messages"][2]["content"] == "the first one"
    assert "exactly 3 whole numbers" in second.body["messages"][3]["content"]


def test_second_attempt_with_a_usable_answer_reranks(fake_ollama):
    replies = iter(["no idea", '{"scores": [1, 9, 5]}'])
    fake_ollama.configure(reply=lambda body: next(replies))
    fused = _fused(3)
    out = _ranker(fake_ollama).run(query="q", documents=fused)
    assert out["reranked"] is True and [d.id for d in out["documents"]] == [fused[i].id for i in (1, 2, 0)]


# -- cancellation ----------------------------------------------------------------------------------


def test_cancel_event_stops_at_once_without_a_second_attempt(fake_ollama):
    fake_ollama.configure(hang_seconds=10)
    fused = _fused(3)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.monotonic()
    out = _ranker(fake_ollama, timeout_s=20).run(query="q", documents=fused, cancel=cancel)
    assert time.monotonic() - t0 < 1.5
    _assert_no_opinion(out, fused, "cancelled by the caller")
    assert len(_chat_requests(fake_ollama)) == 1


def test_cancel_set_before_running_sends_no_request(fake_ollama):
    cancel = threading.Event()
    cancel.set()
    fused = _fused(3)
    out = _ranker(fake_ollama).run(query="q", documents=fused, cancel=cancel)
    _assert_no_opinion(out, fused, "cancelled by the caller")
    assert _chat_requests(fake_ollama) == []


def test_run_async_scores_like_run(fake_ollama):
    fake_ollama.configure(reply='{"scores": [3, 8, 1]}')
    fused = _fused(3)
    out = asyncio.run(_ranker(fake_ollama).run_async(query="q", documents=fused))
    assert out["reranked"] is True and [d.id for d in out["documents"]] == [fused[i].id for i in (1, 0, 2)]
    assert _chat_requests(fake_ollama)[0].body["options"]["temperature"] == 0


def test_run_async_no_opinion_after_two_attempts(fake_ollama):
    fake_ollama.configure(reply='{"scores": [3]}')
    fused = _fused(3)
    out = asyncio.run(_ranker(fake_ollama).run_async(query="q", documents=fused))
    _assert_no_opinion(out, fused, r"gave 1 scores for 3 candidates \(2 attempts\)")
    assert len(_chat_requests(fake_ollama)) == 2


def test_async_task_cancellation_propagates_at_once(fake_ollama):
    fake_ollama.configure(hang_seconds=10)
    ranker = _ranker(fake_ollama, timeout_s=20)

    async def main() -> float:
        task = asyncio.ensure_future(ranker.run_async(query="q", documents=_fused(3)))
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - t0

    assert asyncio.run(main()) < 0.5
    assert len(_chat_requests(fake_ollama)) == 1


# -- configuration ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -5, math.nan, math.inf, -math.inf, None, "soon", True])
def test_bad_timeout_falls_back_to_the_default_and_says_so(fake_ollama, caplog, bad):
    fake_ollama.configure(reply='{"scores": [0, 9]}')
    with caplog.at_level(logging.WARNING, logger="codeground.components.rankers.llm_ranker"):
        ranker = _ranker(fake_ollama, timeout_s=bad)
    assert ranker._timeout == DEFAULT_TIMEOUT_S
    assert ranker._generator.timeout == DEFAULT_TIMEOUT_S
    assert any("not a finite positive number" in r.getMessage() for r in caplog.records)
    assert ranker.run(query="q", documents=_fused(2))["reranked"] is True  # still works


def test_a_good_timeout_is_used_and_not_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="codeground.components.rankers.llm_ranker"):
        ranker = OllamaLLMRanker(timeout_s=2.5)
    assert ranker._timeout == 2.5 and not caplog.records


@pytest.mark.parametrize("param", ["max_candidates", "max_chars"])
@pytest.mark.parametrize("bad", [0, -1, 2.5, "12"])
def test_bad_sizes_are_a_one_line_error(param, bad):
    with pytest.raises(ValueError, match=f"{param} must be a positive whole number"):
        OllamaLLMRanker(**{param: bad})


def test_yaml_round_trip_keeps_every_parameter():
    ranker = OllamaLLMRanker(model="m:1b", url="http://127.0.0.1:1", timeout_s=7, max_candidates=5,
                             max_chars=300, num_predict=40, num_ctx=4096, keep_alive="5m")
    data = component_to_dict(ranker, "ranker")
    assert data["init_parameters"] == {"model": "m:1b", "url": "http://127.0.0.1:1", "timeout_s": 7,
                                       "max_candidates": 5, "max_chars": 300, "num_predict": 40,
                                       "num_ctx": 4096, "keep_alive": "5m"}
    again = component_from_dict(OllamaLLMRanker, data, "ranker")
    assert component_to_dict(again, "ranker") == data


def test_warm_up_makes_no_request(fake_ollama):
    _ranker(fake_ollama)
    assert fake_ollama.requests == []


# -- in the pipeline -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index_dir(indexed_sample):
    return indexed_sample[1]


def _favour(symbol: str):
    """A reply callable: 10 for the candidate whose header names ``symbol``, 1 for the others."""

    def reply(body: dict) -> str:
        heads = re.findall(r"^\[\d+\] (.*)$", last_user_text(body), flags=re.MULTILINE)
        return json.dumps({"scores": [10 if f"Symbol: {symbol} " in h + " " else 1 for h in heads]})

    return reply


def test_query_llmrerank_yaml_reranks_end_to_end_on_the_sample_index(index_dir, fake_ollama, monkeypatch):
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import QueryEngine

    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    question = "How does Trainer.fit run epochs over the data?"
    fused = QueryEngine(index_dir, PIPELINES_DIR / "hybrid_norerank.yaml").search(question, k=10).documents
    assert len(fused) >= 3
    target = fused[2].meta["symbol"]  # the third in fused order, promoted by the model
    fake_ollama.configure(reply=_favour(target))
    result = QueryEngine(index_dir, PIPELINES_DIR / "query_llmrerank.yaml").search(question, k=10)
    assert result.notices == []
    # first after the file ranking too (which re-scores by rank: the model's 1.0 is not kept)
    assert result.documents[0].meta["symbol"] == target
    requests = _chat_requests(fake_ollama)
    assert len(requests) == 1 and requests[0].body["model"] == "qwen2.5-coder:1.5b"
    assert requests[0].body["options"]["temperature"] == 0


def test_query_llmrerank_yaml_without_a_server_keeps_the_fused_order(index_dir, monkeypatch):
    from codeground.app.pipeline.loader import PIPELINES_DIR
    from codeground.app.query.engine import QueryEngine

    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    question = "How do I install the sample package with pip?"
    fused = QueryEngine(index_dir, PIPELINES_DIR / "hybrid_norerank.yaml").search(question, k=10)
    result = QueryEngine(index_dir, PIPELINES_DIR / "query_llmrerank.yaml").search(question, k=10)
    assert [d.id for d in result.documents] == [d.id for d in fused.documents]
    assert len(result.notices) == 1
    assert result.notices[0].startswith(
        "reranking unavailable: LLM reranker 'qwen2.5-coder:1.5b': cannot reach the LLM server"
    )


def test_compare_counts_the_questions_the_llm_reranker_had_no_opinion_on(index_dir, tmp_path, monkeypatch):
    from codeground.app.bench.eval_runner import default_variants, evaluate_pipelines
    from codeground.app.pipeline.loader import PIPELINES_DIR

    assert "query_llmrerank.yaml" in [p.name for p in default_variants()]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"rag_questions": [
        {"question_id": f"q{i}", "question": q,
         "sources": [{"file_path": "pkg/trainer.py", "first_character_index": 0, "last_character_index": 50}]}
        for i, q in enumerate(["How does Trainer.fit run epochs?", "install with pip", "what is a retry?"])
    ]}))
    rows = evaluate_pipelines(gold, [PIPELINES_DIR / "hybrid_norerank.yaml",
                                     PIPELINES_DIR / "query_llmrerank.yaml"], index_dir)
    by_name = {r["pipeline"]: r for r in rows}
    assert by_name["query_llmrerank.yaml"]["reranker_no_opinion"] == 3
    assert by_name["hybrid_norerank.yaml"]["reranker_no_opinion"] == 0
    assert by_name["query_llmrerank.yaml"]["recall"] == by_name["hybrid_norerank.yaml"]["recall"]


def test_compare_table_stars_a_pipeline_whose_reranker_had_no_opinion():
    from rich.console import Console

    from codeground.app.cli.evaluate import _recall_table

    def row(name: str, no_opinion: int) -> dict:
        return {"pipeline": name, "questions": 47, "recall": {1: 0.5, 3: 0.6, 5: 0.7, 10: 0.8},
                "latency": {"p50": 90.0, "p95": 120.0}, "oversize_sources": 0,
                "reranker_no_opinion": no_opinion}

    console = Console(width=200, record=True)
    console.print(_recall_table("docs", [row("hybrid_norerank.yaml", 0), row("query_llmrerank.yaml", 47)]))
    text = console.export_text()
    assert "query_llmrerank.yaml*" in text and "hybrid_norerank.yaml*" not in text
    assert "query_llmrerank.yaml: reranker had no opinion on 47/47 questions" in text
    assert "fused order" in text


def test_llmrerank_yaml_is_query_yaml_with_only_the_ranker_swapped():
    from codeground.app.pipeline.loader import PIPELINES_DIR, read_pipeline_dict

    full = read_pipeline_dict(PIPELINES_DIR / "query.yaml")
    llm = read_pipeline_dict(PIPELINES_DIR / "query_llmrerank.yaml")
    assert llm["components"]["ranker"]["type"] == "codeground.components.rankers.llm_ranker.OllamaLLMRanker"
    assert llm["components"]["ranker"]["init_parameters"]["max_candidates"] == 12
    assert llm["components"]["ranker"]["init_parameters"]["max_chars"] == 700
    for data in (full, llm):
        data["components"].pop("ranker")
    # the LLM ranker takes no symbol hits of its own (FallbackRanker judges those past its first 12)
    full["connections"].remove({"sender": "merge.symbol_documents", "receiver": "ranker.symbol_documents"})
    # a change to query.yaml outside its ranker belongs in query_llmrerank.yaml too
    assert llm == full
