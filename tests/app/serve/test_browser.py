"""The chat in a real browser: Playwright (PyPI) driving Debian's Chromium against the served app.

The app runs on 127.0.0.1 over a real index of the sample repository; answers come from the fake
Ollama server, slowly enough that streaming can be watched. No browser is ever downloaded.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import time
from pathlib import Path

import pytest

from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from tests.conftest import make_sample_repo
from tests.fake_ollama import last_user_text

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
]

FIRST = "How do I fit a Trainer?"
FIRST_ANSWER = (
    "Create a `Trainer` with your model and call `fit` with your data: "
    "`Trainer(model, trust_remote_code=False).fit(data)`. It runs `epochs` passes over `data` "
    "(three by default, `DEFAULT_EPOCHS`) and returns the trainer (pkg/trainer.py:33-38)."
)
FOLLOW_UP = "What arguments does it take?"
REWRITTEN = "What arguments does Trainer.fit take?"
FOLLOW_UP_ANSWER = (
    "`Trainer.fit` takes two arguments besides `self`: `data`, the batch it passes to the model on each "
    "step, and `epochs`, how many passes to run, which defaults to `DEFAULT_EPOCHS` (three). It is wrapped "
    "in `retry(times=2)` and returns the trainer itself, so calls can be chained (pkg/trainer.py:33-38)."
)
OTHER = "Where are the release notes?"
INVENTED = "load_release_notes"  # named by the answer, defined nowhere in the sample repository
OTHER_ANSWER = f"The release notes are in NOTES.txt (NOTES.txt:1-3); `{INVENTED}()` prints them."


def reply(request: dict) -> str:
    """Rewrite follow-ups (the rewriter's system prompt asks for a standalone search query); answer
    by the question at the end of the grounded prompt otherwise."""
    if "standalone search query" in request["messages"][0]["content"]:
        return REWRITTEN
    asked = re.findall(r"Question: (.*)", last_user_text(request))
    asked = asked[-1] if asked else ""
    if "release notes" in asked:
        return OTHER_ANSWER
    return FOLLOW_UP_ANSWER if "arguments" in asked else FIRST_ANSWER


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sync_playwright():
    if not CHROMIUM.exists():
        pytest.skip(f"the browser test needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the browser test needs the `playwright` package (pip install -e '.[dev]')")
    return sync_playwright


@pytest.fixture
def served_chat(tmp_path, fake_ollama, monkeypatch):
    """The chat served on a free loopback port over a fresh index, answering through the fake Ollama."""
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    fake_ollama.configure(reply=reply, token_delay=0.04)
    repo = make_sample_repo(tmp_path / "repo")
    run_index(repo, tmp_path / "idx", DEFAULT_INDEX_PIPELINE)
    from codeground.app.serve.ui import picker_pipelines, serve

    port = free_port()
    demo = serve(tmp_path / "idx", PIPELINES_DIR / "query.yaml", port=port, block=False)
    try:
        yield f"http://127.0.0.1:{port}/", picker_pipelines()
    finally:
        demo.close()


def bot_messages(page):
    return page.locator('#cg-chat [data-testid="bot"]')


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.05):
    """Poll ``predicate`` until it returns something truthy; fail with the last value after ``timeout``."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s; last value: {value!r}")


def ask(page, question: str) -> None:
    box = page.locator("#cg-question textarea")
    box.fill(question)
    box.press("Enter")


def watch_answer(page, index: int) -> list[str]:
    """Watch bot message ``index`` until it is finished (sources shown, no cursor); return the distinct
    texts seen on the way."""
    seen: list[str] = []
    message = bot_messages(page).nth(index)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = message.inner_text() if bot_messages(page).count() > index else ""
        if text and (not seen or seen[-1] != text):
            seen.append(text)
        if "Sources" in text and "▌" not in text:
            return seen
        time.sleep(0.03)
    raise AssertionError(f"answer {index} never finished; seen: {seen[-3:]!r}")


# gradio's queue statistics trip pandas 3 deprecation warnings; not ours to fix
@pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_chat_streams_cites_expands_and_rewrites_follow_ups_in_a_real_browser(
    sync_playwright, served_chat, fake_ollama, tmp_path
):
    url, listed = served_chat
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.goto(url)
            page.locator("#cg-question textarea").wait_for(timeout=30_000)
            wait_for(lambda: "records" in page.locator("#cg-status").inner_text())

            # the picker lists every query pipeline, not the index pipelines
            page.locator("#cg-pipeline input").click()
            options = {o.split()[-1] for o in page.locator("ul[role=listbox] li").all_inner_texts()}
            page.keyboard.press("Escape")
            assert options == {p.name for p in listed}
            assert "query_openai.yaml" in options and "query.yaml" in options
            assert not any(o.startswith("index") for o in options)

            # 1. a question: the answer streams (partial states with a cursor), then the sources
            ask(page, FIRST)
            seen = watch_answer(page, 0)
            partial = [t for t in seen if "▌" in t and "Sources" not in t]
            assert len(partial) >= 2, seen
            assert len(partial[0]) < len(partial[-1])
            assert "returns the trainer" in seen[-1]  # the whole answer arrived
            first = bot_messages(page).nth(0)
            sources = first.locator("details.cg-source")
            assert sources.count() >= 1
            assert "reranking unavailable" in first.inner_text()  # no cross-encoder here: said, not hidden
            assert "▌" not in first.inner_text()

            # 2. expand a source: its path, line range, symbol and highlighted excerpt appear
            trainer = sources.filter(has_text="pkg/trainer.py").first
            code = trainer.locator("pre code").first
            assert not code.is_visible()
            summary = trainer.locator("summary").first
            assert re.search(r"pkg/trainer\.py:\d+-\d+", summary.inner_text())
            summary.click()
            code.wait_for(state="visible", timeout=5_000)
            assert "Trainer" in code.inner_text() or "fit" in code.inner_text()
            assert code.locator("span.token").count() > 0, "the excerpt is not syntax-highlighted"

            # 3. another tab chats at the same time without seeing this conversation
            other = browser.new_page(viewport={"width": 1000, "height": 800})
            other.goto(url)
            other.locator("#cg-question textarea").wait_for(timeout=30_000)
            fake_ollama.configure(token_delay=0.08)
            ask(page, FOLLOW_UP)
            bots = bot_messages(page)
            wait_for(lambda: bots.count() == 2 and "▌" in bots.nth(1).inner_text())  # streaming now
            ask(other, OTHER)
            watch_answer(other, 0)
            # the invented name is marked where the answer names it, with a tooltip saying why
            flagged = bot_messages(other).nth(0).locator("mark.cg-unknown")
            assert flagged.count() == 1 and flagged.inner_text() == f"⚠ {INVENTED}"
            assert flagged.get_attribute("title") == "not found in this repository"
            follow = bot_messages(page).nth(1).inner_text()
            assert "Sources" not in follow, "the other tab waited for this tab's slow answer"
            assert FIRST not in other.locator("#cg-chat").inner_text()

            # 4. the follow-up was rewritten with this tab's history, and the UI says what was searched
            watch_answer(page, 1)
            follow = bot_messages(page).nth(1).inner_text()
            assert f"searched for: {REWRITTEN}" in follow
            rewrites = [
                r.body
                for r in fake_ollama.requests_to("/api/chat")
                if "standalone search query" in r.body["messages"][0]["content"]
            ]
            assert len(rewrites) == 1 and FIRST in rewrites[0]["messages"][-1]["content"]
            assert OTHER not in rewrites[0]["messages"][-1]["content"]

            page.set_viewport_size({"width": 1280, "height": 1900})  # room for both turns
            page.locator('#cg-chat [data-testid="user"]').first.evaluate(
                "m => m.scrollIntoView({block: 'start'})"
            )
            page.wait_for_timeout(300)
            page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)
            if os.environ.get("CODEGROUND_SCREENSHOT"):
                target = Path(os.environ["CODEGROUND_SCREENSHOT"])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(tmp_path / "chat.png", target)
            assert (tmp_path / "chat.png").stat().st_size > 10_000

            # 5. swap the pipeline and ask the last question again: a third turn, from the other pipeline
            fake_ollama.configure(token_delay=0.0)
            page.locator("#cg-pipeline input").click()
            page.locator("ul[role=listbox] li", has_text="bm25.yaml").click()
            wait_for(lambda: "bm25.yaml ready" in page.locator("#cg-status").inner_text())
            page.locator("#cg-again").click()
            wait_for(lambda: bot_messages(page).count() == 3)
            watch_answer(page, 2)
            again = bot_messages(page).nth(2).inner_text()
            assert "pipeline bm25.yaml" in again and f"searched for: {REWRITTEN}" in again
            assert page.locator('#cg-chat [data-testid="user"]').nth(2).inner_text().strip() == FOLLOW_UP
        except BaseException:
            for i, tab in enumerate(t for context in browser.contexts for t in context.pages):
                tab.screenshot(path=str(tmp_path / f"failure-{i}.png"), full_page=True)
                (tmp_path / f"failure-{i}.html").write_text(tab.content())
            raise
        finally:
            browser.close()
