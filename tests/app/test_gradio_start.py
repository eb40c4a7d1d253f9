"""The chat imports gradio without gradio rewriting its type stubs, and without pandas until it is used
(codeground.app.gradio_start)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import PROJECT_ROOT

_RECORD_READS = (
    "import pathlib, sys\n"
    "read = []\n"
    "real = pathlib.Path.read_text\n"
    "def record(self, *a, **k):\n"
    "    read.append(str(self))\n"
    "    return real(self, *a, **k)\n"
    "pathlib.Path.read_text = record\n"
)


def _printed(script: str) -> list[str]:
    """What ``script`` printed, word by word, run in a new process."""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def _gradio_files_read(importer: str) -> int:
    return int(_printed(_RECORD_READS + importer + "print(sum('/gradio/' in p for p in read))\n")[-1])


def test_the_chat_imports_gradio_without_reading_its_component_sources():
    plain = _gradio_files_read("import gradio\n")
    ours = _gradio_files_read("from codeground.app.gradio_start import import_gradio\nimport_gradio()\n")
    assert plain > 50  # gradio parses each component's source to rewrite its .pyi stub
    assert ours == 0


def test_gradio_imported_that_way_builds_the_chat_components():
    script = (
        "from codeground.app.gradio_start import import_gradio\n"
        "gr = import_gradio()\n"
        "with gr.Blocks() as demo:\n"
        "    chat = gr.Chatbot()\n"
        "    box = gr.Textbox()\n"
        "    box.submit(lambda q, h: h, [box, chat], [chat])\n"
        "print(len(demo.config['components']) >= 2, callable(chat.change))\n"
    )
    assert _printed(script) == ["True", "True"]


def test_the_chat_imports_gradio_without_pandas_and_gradio_gets_it_when_it_hashes_a_dataframe():
    script = (
        "import sys\n"
        "from codeground.app.gradio_start import import_gradio\n"
        "gr = import_gradio()\n"
        "print('pandas' in sys.modules)\n"
        "import gradio.caching\n"
        "import pandas as pd\n"
        "frame = pd.DataFrame({'a': [1, 2]})\n"
        "print(gradio.caching.cache_hash(frame) == gradio.caching.cache_hash(frame.copy()))\n"
        "print(gradio.caching.pd is pd or gradio.caching.pd.DataFrame is pd.DataFrame)\n"
    )
    assert _printed(script) == ["False", "True", "True"]
