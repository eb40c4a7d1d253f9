"""The browser chat (Gradio) over the same query pipelines as ``codeground query``.

Rules:
- One ``QueryEngine`` per pipeline YAML, built and warmed once (the default one at start) and shared
  by every tab (``engine_pool.EnginePool``, which MCP and HTTP use too); a lock per pipeline guards
  only the building, so one user's slow answer never holds up another user's retrieval. An index
  re-built while the chat runs is picked up at the next question.
- The engine is blocking: each question runs in a worker thread whose tokens reach the Gradio
  generator through a queue (``engine_pool.stream_answer``), so the answer streams token by token;
  a repaired answer replaces the first one in place.
- A session's conversation lives only in that session (the Chatbot and a ``gr.State`` holding the
  plain question/answer turns the rewriter reads); nothing is shared between tabs.
- Nothing fails silently: rewrite, rerank fallback, an unreachable LLM (with how to start it), a
  missing, stale or empty index are shown in the conversation or the status line.
- Once an answer has streamed, the identifiers the grounding check found nowhere in the repository
  are marked where the answer names them (⚠, a wavy underline and the tooltip "not found in this
  repository"), besides the "not found in this repository: …" notice under it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from codeground.app.errors import CodegroundError
from codeground.app.query.engine_pool import EnginePool, stream_answer
from codeground.app.serve.gradio_start import import_gradio
from codeground.app.serve.listen_address import url_host
from codeground.app.serve.ui_format import escape_text, format_error, format_partial, format_turn

# without analytics and without gradio rewriting its own type stubs at every start
gr = import_gradio()

DEFAULT_CONCURRENCY = 8
WARMING = "loading models and stores…"

CSS = """
#cg-chat details.cg-source { margin: 0.35em 0; border: 1px solid var(--border-color-primary);
  border-radius: 6px; padding: 0.2em 0.6em; }
#cg-chat details.cg-source > summary { cursor: pointer; }
#cg-chat details pre { max-height: 28em; overflow: auto; }
#cg-status p { margin: 0; }
#cg-chat mark.cg-unknown { background: none; color: inherit; cursor: help;
  text-decoration: underline wavy #d92d20; text-decoration-skip-ink: none; }
"""


def _theme() -> gr.themes.Base:
    # System fonts: the default theme would fetch web fonts from the internet on every page load.
    return gr.themes.Soft(
        font=["ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"],
    )


def pipeline_choices(default_pipeline: Path, pipelines: list[Path]) -> dict[str, Path]:
    """Picker label → YAML; the default first, a default outside the list included, no duplicates."""
    choices: dict[str, Path] = {}
    for path in [Path(default_pipeline), *map(Path, pipelines)]:
        label = path.name
        if label in choices and choices[label].resolve() != path.resolve():
            label = str(path)
        choices.setdefault(label, path)
    return choices


def picker_pipelines() -> list[Path]:
    """Every usable query YAML in ``pipelines/`` (not ``index*.yaml``, not ones needing a missing
    optional extra), the compared variants first."""
    from codeground.app.bench.eval_runner import default_variants
    from codeground.app.pipeline.loader import PIPELINES_DIR, installed

    found = [
        p for p in sorted(PIPELINES_DIR.glob("*.yaml")) if not p.name.startswith("index") and installed(p)
    ]
    ordered = [p for p in default_variants() if p in found]
    return ordered + [p for p in found if p not in ordered]


def index_status(engine: Any, pipeline_label: str) -> str:
    """The status line: index location, records, and which pipeline is loaded."""
    manifest = engine.manifest
    line = (
        f"index <code>{escape_text(str(engine.gen.parent))}</code> · {manifest.chunk_count:,} records · "
        f"pipeline <code>{escape_text(pipeline_label)}</code> ready"
    )
    if manifest.chunk_count == 0:
        line += "\n\n> ⚠ the index is empty: index a repository with `codeground index PATH`"
    return line


def build_app(
    index_dir: Path,
    default_pipeline: Path,
    pipelines: list[Path],
    *,
    pool: EnginePool | None = None,
) -> gr.Blocks:
    """The chat app: status line, pipeline picker, chat with streamed answers and expandable sources."""
    pool = pool or EnginePool(index_dir)
    choices = pipeline_choices(default_pipeline, pipelines)
    default_label = next(iter(choices))

    def picked(label: Any) -> str:
        """The picker's value as the client sent it: a known label, else the default (a client
        may send anything: a list, a number, a name no picker offers)."""
        return label if isinstance(label, str) and label in choices else default_label

    def status_for(label: Any) -> str:
        label = picked(label)
        try:
            return index_status(pool.get(choices[label]), label)
        except CodegroundError as exc:
            return format_error(str(exc))

    def run_turn(question: str, chat: list, history: list, label: str):
        """Yield ``(chat, added_turns, status)`` while one question is answered; ``added_turns`` is
        ``None`` until the end, then the plain turns the rewriter will see next time."""
        label = picked(label)
        chat = [*chat, {"role": "user", "content": question}]
        waiting = WARMING if not pool.ready(choices[label]) else "searching the repository…"
        chat.append({"role": "assistant", "content": format_partial("", status=waiting)})
        yield chat, None, gr.skip()
        answer, engine = "", None
        for kind, value in stream_answer(pool, choices[label], question, history):
            if kind == "engine":
                engine = value
                if not answer and waiting == WARMING:
                    chat[-1] = {"role": "assistant", "content": format_partial("", status="searching…")}
                    yield chat, None, gr.skip()
            elif kind == "tokens":
                answer += value
                chat[-1] = {"role": "assistant", "content": format_partial(answer)}
                yield chat, None, gr.skip()
            elif kind == "repair":  # the answer named what the repository lacks: it is asked again
                answer = ""
                status = f"asking again without {', '.join(value)}…"
                chat[-1] = {"role": "assistant", "content": format_partial("", status=status)}
                yield chat, None, gr.skip()
            elif kind == "error":
                chat[-1] = {"role": "assistant", "content": format_error(value)}
                yield chat, [{"role": "user", "content": question}], format_error(value)
            else:
                result = value
                text = result.answer if result.answer is not None else (answer or None)
                chat[-1] = {
                    "role": "assistant",
                    "content": format_turn(
                        text,
                        notices=result.notices,
                        documents=result.documents,
                        pipeline=label,
                        seconds=result.seconds,
                        empty_index=engine is not None and engine.manifest.chunk_count == 0,
                        unknown=(result.grounding or {}).get("unknown", ()),
                        withheld=result.withheld,
                    ),
                }
                added = [{"role": "user", "content": question}]
                if text:
                    added.append({"role": "assistant", "content": text})
                yield chat, added, index_status(engine, label) if engine is not None else gr.skip()

    def respond(message: str, chat: list, turns: list, label: Any):
        question = (message or "").strip()
        chat, turns = list(chat or []), list(turns or [])
        if not question:
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip()
            return
        first = True
        for new_chat, added, status_line in run_turn(question, chat, turns, label):
            yield ("" if first else gr.skip()), new_chat, (turns + added if added else gr.skip()), status_line
            first = False

    def ask_again(chat: list, turns: list, label: Any):
        """Ask the last question again (e.g. with another pipeline), with the history before it."""
        chat, turns = list(chat or []), list(turns or [])
        users = [i for i, t in enumerate(turns) if t["role"] == "user"]
        if not users:
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip()
            return
        before, question = turns[: users[-1]], turns[users[-1]]["content"]
        for new_chat, added, status_line in run_turn(question, chat, before, label):
            yield gr.skip(), new_chat, (turns + added if added else gr.skip()), status_line

    def warm(label: Any):
        if not (isinstance(label, str) and label in choices):
            yield gr.skip()
            return
        if not pool.ready(choices[label]):
            yield f"pipeline <code>{escape_text(label)}</code>: {WARMING}"
        yield status_for(label)

    with gr.Blocks(title="codeground", fill_height=True) as demo:
        gr.Markdown("### codeground — ask this repository", elem_id="cg-title")
        status = gr.Markdown(WARMING, elem_id="cg-status")
        with gr.Row():
            picker = gr.Dropdown(
                choices=list(choices),
                value=default_label,
                label="Pipeline",
                info="Retrieval configuration (pipelines/*.yaml); switch and ask again to compare.",
                interactive=True,
                scale=4,
                elem_id="cg-pipeline",
            )
            again = gr.Button("Ask again", scale=1, min_width=120, elem_id="cg-again")
        chatbot = gr.Chatbot(
            elem_id="cg-chat",
            label="Conversation",
            show_label=False,
            height="64vh",
            scale=1,
            placeholder="Ask a question about the repository. Answers cite the files they come from.",
            feedback_options=None,
            buttons=["copy"],
        )
        turns = gr.State([])
        question = gr.Textbox(
            placeholder="Ask about the repository… (follow-up questions use the conversation)",
            show_label=False,
            lines=1,
            submit_btn="Ask",
            elem_id="cg-question",
            autofocus=True,
        )
        outputs = [question, chatbot, turns, status]
        question.submit(respond, [question, chatbot, turns, picker], outputs, show_progress="hidden")
        again.click(ask_again, [chatbot, turns, picker], outputs, show_progress="hidden")
        picker.change(warm, picker, status, show_progress="hidden")
        chatbot.clear(lambda: [], None, turns)
        demo.load(status_for, picker, status, show_progress="hidden")
    return demo


def serve(
    index_dir: str | Path,
    pipeline: str | Path,
    host: str = "127.0.0.1",
    port: int = 7860,
    open_browser: bool = False,
    *,
    block: bool = True,
    pipelines: list[Path] | None = None,
) -> gr.Blocks:
    """Serve the chat on ``host:port``, then warm the default pipeline while the page is up.

    The page answers as soon as the server runs and says it is loading until the models and stores
    are ready (a first question waits for them). ``block=False`` returns once the default pipeline is
    warm, with the server running in the background (call ``.close()``). A missing or stale index
    does not stop the server: the page says what is wrong and how to fix it.
    """
    index_dir, pipeline = Path(index_dir), Path(pipeline)
    pool = EnginePool(index_dir)
    listed = pipelines if pipelines is not None else picker_pipelines()
    demo = build_app(index_dir, pipeline, listed, pool=pool)
    demo.queue(default_concurrency_limit=DEFAULT_CONCURRENCY)
    demo.launch(
        server_name=url_host(host),  # Gradio takes an IPv6 address as a URL writes it
        server_port=port,
        inbrowser=open_browser,
        prevent_thread_lock=True,  # warm the pipeline below while the page is served
        share=False,
        quiet=True,
        show_error=True,
        ssr_mode=False,
        run_history=False,  # no copies of answers kept in the browser or offered for upload
        footer_links=["api", "gradio", "settings"],
        theme=_theme(),
        css=CSS,
    )
    # Warmed on this thread, after the page is up: importing the pipeline's libraries on another
    # thread while gradio imports its own can hand one of them a half-initialised module.
    print(f"loading {pipeline.name}: {WARMING}", file=sys.stderr, flush=True)
    try:
        pool.get(pipeline)
    except CodegroundError as exc:
        print(f"warning: {exc}", file=sys.stderr, flush=True)
    if block:
        demo.block_thread()
    return demo
