"""Load: eight chat sessions at once against the real Gradio app, driven by ``gradio_client`` from
eight threads, answers streamed by the fake Ollama server. Every answer completes, each session gets
the sources of its own question, and no session's history leaks into another's (the follow-up
"What arguments does it take?" is rewritten from that session's conversation only).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE
from tests.conftest import make_sample_repo
from tests.fake_ollama import content_text, last_user_text
from tests.reliability.helpers import QUERY_YAML

# One topic per session: a class no other topic shares a word with.
TOPICS = [
    ("ZebraCounter", "zebra", "stripes"),
    ("QuartzParser", "quartz", "crystal"),
    ("MangoScheduler", "mango", "ripeness"),
    ("ViolinTuner", "violin", "pitch"),
    ("GlacierArchive", "glacier", "thaw"),
    ("PepperGrinder", "pepper", "coarseness"),
    ("CometTracker", "comet", "orbit"),
    ("WalrusQueue", "walrus", "tusks"),
]
SESSIONS = len(TOPICS)
FOLLOW_UP = "What arguments does it take?"
STREAM_TOKENS = 40
TOKEN_DELAY = 0.03
SOURCE_RE = re.compile(r"<summary>\d+\. <code>([^<:]+):\d+-\d+</code>")


def first_question(name: str, word: str) -> str:
    return f"What does {name} do with a {word}?"


def rewritten(name: str) -> str:
    return f"What arguments does {name}.configure take?"


def reply(request: dict) -> str:
    """Rewrite follow-ups from the history the request carries; answer by the question asked."""
    messages = request["messages"]
    if "standalone search query" in content_text(messages[0].get("content")):
        seen = [
            name for name, _, _ in TOPICS if any(name in content_text(m.get("content")) for m in messages)
        ]
        return rewritten(seen[0]) if len(seen) == 1 else f"CROSS-TALK {seen}"
    asked = re.findall(r"Question: (.*)", last_user_text(request))
    filler = " ".join(["word"] * STREAM_TOKENS)
    return f"Answer to [{asked[-1] if asked else '?'}]: {filler}."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def topic_index(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("load")
    repo = make_sample_repo(base / "repo")
    (repo / "topics").mkdir()
    for name, word, detail in TOPICS:
        (repo / "topics" / f"{word}.py").write_text(
            f"class {name}:\n"
            f'    """Handles every {word} by its {detail}."""\n\n'
            f"    def configure(self, {detail}_level, {word}_count=1):\n"
            f'        """Set the {detail} level for each {word}."""\n'
            f"        self.level = {detail}_level\n"
        )
    run_index(repo, base / "idx", DEFAULT_INDEX_PIPELINE)
    return base / "idx"


@pytest.fixture
def chat_url(topic_index, fake_ollama, monkeypatch) -> Iterator[str]:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    fake_ollama.configure(reply=reply, token_delay=TOKEN_DELAY)
    from codeground.app.serve.ui import serve

    port = free_port()
    demo = serve(topic_index, QUERY_YAML, port=port, block=False, pipelines=[QUERY_YAML])
    try:
        assert demo.server_name == "127.0.0.1"
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def text_of(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def session(url: str, topic: tuple[str, str, str], start: threading.Barrier, out: dict, errors: list) -> None:
    from gradio_client import Client

    name, word, _ = topic
    try:
        client = Client(url, verbose=False, download_files=False)
        start.wait(timeout=120)
        first = client.submit(first_question(name, word), [], QUERY_YAML.name, api_name="/respond")
        _, chat, _ = first.result(timeout=180)
        second = client.submit(FOLLOW_UP, chat, QUERY_YAML.name, api_name="/respond")
        _, chat, _ = second.result(timeout=180)
        out[name] = chat
    except BaseException as exc:  # noqa: BLE001 - reported by the test thread
        errors.append(f"{name}: {exc!r}")


# gradio's queue statistics trip pandas 3 deprecation warnings; not ours to fix
@pytest.mark.filterwarnings("ignore:.*no_silent_downcasting")
@pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")
def test_eight_concurrent_chat_sessions_each_get_their_own_answers_sources_and_history(chat_url, fake_ollama):
    chats: dict[str, list] = {}
    errors: list[str] = []
    start = threading.Barrier(SESSIONS)
    threads = [
        threading.Thread(target=session, args=(chat_url, topic, start, chats, errors), name=f"session-{i}")
        for i, topic in enumerate(TOPICS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=400)
    assert not errors, errors
    assert sorted(chats) == sorted(name for name, _, _ in TOPICS)

    for name, word, _ in TOPICS:
        own_file = f"topics/{word}.py"
        chat = chats[name]
        assert [m["role"] for m in chat] == ["user", "assistant", "user", "assistant"], name
        assert [text_of(m) for m in chat if m["role"] == "user"] == [first_question(name, word), FOLLOW_UP]
        first, second = text_of(chat[1]), text_of(chat[3])
        # all answers complete: the whole streamed text, no cursor, the sources under it
        assert f"Answer to [{first_question(name, word)}]" in first and "▌" not in first, first[:300]
        assert f"Answer to [{rewritten(name)}]" in second and "▌" not in second, second[:300]
        assert f"searched for: {rewritten(name)}" in second
        for answer in (first, second):
            assert f"{' '.join(['word'] * STREAM_TOKENS)}." in answer
            sources = SOURCE_RE.findall(answer)
            assert sources and sources[0] == own_file, (name, sources)
        # no cross-talk: nothing of another session's conversation appears in this one
        whole = " ".join(text_of(m) for m in chat)
        for other, other_word, _ in TOPICS:
            if other != name:
                assert first_question(other, other_word) not in whole and rewritten(other) not in whole

    chat_requests = fake_ollama.requests_to("/api/chat")
    rewrites = [r for r in chat_requests if "standalone search query" in r.body["messages"][0]["content"]]
    answers = [r for r in chat_requests if r not in rewrites]
    assert len(rewrites) == SESSIONS and len(answers) == 2 * SESSIONS
    for r in rewrites:  # each rewrite saw exactly one session's history
        text = " ".join(content_text(m.get("content")) for m in r.body["messages"])
        assert sum(name in text for name, _, _ in TOPICS) == 1, text[:500]
    assert not fake_ollama.errors

    # the sessions really overlapped: at one moment several answers were streaming at once
    stream_s = STREAM_TOKENS * TOKEN_DELAY
    arrivals = sorted(r.time for r in answers)
    overlap = max(sum(1 for a in arrivals if t - stream_s < a <= t) for t in arrivals)
    assert overlap >= 4, f"at most {overlap} answers streamed at once"
