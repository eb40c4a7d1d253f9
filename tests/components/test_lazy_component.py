"""A stock component built on first use; with ``one_at_a_time`` its calls never overlap."""

import threading
import time

from codeground.components.generators.guarded_chat import GuardedChatGenerator
from codeground.components.inner import LazyComponent


class _OneNativeModel:
    """Counts how many calls run at once, as a model in this process would suffer them."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self._count = threading.Lock()

    def run(self, **kwargs):
        with self._count:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)  # a generation: long enough for the other threads to arrive
        with self._count:
            self.running -= 1
        return {"replies": []}


def _hammer(call, n=6):
    threads = [threading.Thread(target=call) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_one_at_a_time_calls_wait_their_turn():
    model = _OneNativeModel()
    lazy = LazyComponent(model, "llm", one_at_a_time=True)
    _hammer(lambda: lazy.run(messages=[]))
    assert model.most == 1 and model.running == 0


def test_a_guarded_in_process_generator_runs_one_generation_at_a_time():
    from haystack.dataclasses import ChatMessage

    model = _OneNativeModel()
    llm = GuardedChatGenerator(generator=model, one_at_a_time=True)
    _hammer(lambda: llm.run(messages=[ChatMessage.from_user("hi")]))
    assert model.most == 1
