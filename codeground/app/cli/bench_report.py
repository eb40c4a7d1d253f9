"""What ``codeground bench`` prints of its reports: the vLLM run's lines and tables, and the answers'
table (a row per figure, a column per YAML)."""

from __future__ import annotations

from pathlib import Path

from codeground.app.cli.evaluate import _recall_table


def _print_answer_bench(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from codeground.app.bench.answer_bench import TARGETS

    cpu = report["machine"]
    table = Table(title=f"answers on {cpu['cpu']} ({cpu['cores']} CPUs), {report['sets']}")
    fields = (
        ("llm_failures", "LLM failed"),
        ("load_s", "load s"),
        ("first_token_p50_s", "first token p50 s"),
        ("first_token_p95_s", "first token p95 s"),
        ("answer_p50_s", "answer p50 s"),
        ("answer_p95_s", "answer p95 s"),
        ("invented_shown", "invented shown"),
        ("refused_unanswerable", "unanswerable refused"),
        ("false_refusals", "false refusals"),
        ("correct", "correct"),
        ("fact_recall", "fact recall"),
    )
    # a row per figure, a column per YAML: readable in an 80-column terminal
    table.add_column("figure")
    for entry in report["pipelines"]:
        table.add_column(Path(entry["pipeline"]).name, justify="right")
    table.add_column("target", justify="right")
    for key, title in fields:
        cells = []
        for entry in report["pipelines"]:
            value, met = entry["summary"].get(key), entry["meets"].get(key)
            cells.append(("-" if value is None else f"{value:g}") + (" ✗" if met is False else ""))
        target = f"{TARGETS[key][0]} {TARGETS[key][1]:g}" if key in TARGETS else ""
        table.add_row(title, *cells, target)
    Console().print(table)


def _print_bench(report: dict) -> None:
    from rich.console import Console

    console = Console()
    if "model_preparation" in report:
        prep = report["model_preparation"]
        built = ", ".join(prep["built"]) or "nothing: every model was cached"
        console.print(
            f"model preparation: {prep['wall_s']} s, peak RSS {prep['peak_rss_mb']} MB; built {built}"
        )
    if "index" in report:
        idx, inc = report["index"], report["incremental"]
        console.print(
            f"full index: {idx['records']} records in {idx['wall_s']} s wall, {idx['cpu_s']} s CPU, "
            f"peak RSS {idx['peak_rss_mb']} MB; incremental (1 .py + 1 .md): "
            f"{inc['touched']['wall_s']} s, restore: {inc['restored']['wall_s']} s"
        )
    if "revote_fill" in report:
        fill = report["revote_fill"]
        console.print(
            f"re-vote vectors for every record (filled in the background after `codeground index`): "
            f"{fill['wall_s']} s, peak RSS {fill['peak_rss_mb']} MB; {fill['embedded']} of "
            f"{fill['total']} records embedded, {fill['cached']} already kept"
        )
    for name, rows in report["retrieval"].items():
        console.print(_recall_table(name, rows))
    if "rerank" in report:
        lat = report["rerank"]["latency"]
        console.print(
            f"full pipeline with a MiniLM-size cross-encoder ({report['rerank']['model']}): "
            f"p50 {lat['p50']:.0f} ms, p95 {lat['p95']:.0f} ms"
        )
    if "own_reranker" in report:
        check = report["own_reranker"]["build"]["check"]
        console.print(
            f"own reranker: held-out MRR@10 {check['reranker']:.3f} vs BM25's {check['bm25']:.3f} "
            f"({'passes' if report['own_reranker']['build']['passed'] else 'fails'} its check)"
        )
        for name, rows in report["own_reranker"]["retrieval"].items():
            console.print(_recall_table(f"{name}, with the reranker just built", rows))
    cold = report["cold_start"]
    console.print(
        f"cold `codeground search`: median {cold['median_s']} s of {len(cold['runs_s'])} new processes, "
        f"peak RSS {cold['peak_rss_mb']} MB; the first launch before them {cold['first_launch_s']} s "
        f"({cold['first_launch_read_mb']} MB read from disk)"
    )
    if "cold_start_reranked" in report:
        ranked = report["cold_start_reranked"]
        console.print(
            f"cold `codeground search` with the MiniLM-size cross-encoder in place: median "
            f"{ranked['median_s']} s of {len(ranked['runs_s'])}, peak RSS {ranked['peak_rss_mb']} MB "
            f"(reranking unavailable in {ranked['reranker_no_opinion']} of them)"
        )
    for row in ("checkout_index", "chat_start"):
        if "error" in report.get(row, {}):
            console.print(f"{row}: not measured: {report[row]['error']}")
    if "median_s" in report.get("chat_start", {}):
        demo, chat = report["checkout_index"], report["chat_start"]
        console.print(
            f"`codeground index` of {demo['repo']} from nothing ({demo['records']} records): median "
            f"{demo['median_s']} s of {len(demo['runs_s'])}, peak RSS {demo['peak_rss_mb']} MB (first launch "
            f"{demo['first_launch_s']} s); `codeground chat` on it, launch to page served: median "
            f"{chat['median_s']} s of {len(chat['runs_s'])} (first launch {chat['first_launch_s']} s)"
        )
    if "qdrant" in report:
        q = report["qdrant"]
        idx, inc, cold = q["index"], q["incremental"], q["cold_start"]
        console.print(
            f"Qdrant pair (local mode): full index {idx['records']} records in {idx['wall_s']} s wall, "
            f"{idx['bytes_on_disk'] / 1e6:.0f} MB on disk; incremental {inc['touched']['wall_s']} s; "
            f"cold search median {cold['median_s']} s, peak RSS {cold['peak_rss_mb']} MB"
        )
        for name, rows in q["retrieval"].items():
            console.print(_recall_table(f"{name}, Qdrant pair", rows))
        sc = q["scale"]
        console.print(f"bytes per record sent to Qdrant: {sc['bytes_per_record']}")
        for row in sc["rows"]:
            console.print(
                f"  {row['records']} records: dense {row['dense_ms_median']} ms, sparse "
                f"{row['sparse_ms_median']} ms (median of {row['queries']}; local mode, brute force)"
            )
