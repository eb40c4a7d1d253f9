"""The chat imports gradio without gradio rewriting its type stubs, and without pandas until it is used
(codeground.app.serve.gradio_start)."""

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
    ours = _gradio_files_read(
        "from codeground.app.serve.gradio_start import import_gradio\nimport_gradio()\n"
    )
    assert plain > 50  # gradio parses each component's source to rewrite its .pyi stub
    assert ours == 0


def test_gradio_imported_that_way_builds_the_chat_components():
    script = (
        "from codeground.app.serve.gradio_start import import_gradio\n"
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
        "from codeground.app.serve.gradio_start import import_gradio\n"
        "gr = import_gradio()\n"
        "print('pandas' in sys.modules)\n"
        "import gradio.caching\n"
        "import pandas as pd\n"
        "frame = pd.DataFrame({'a': [1, 2]})\n"
        "print(gradio.caching.cache_hash(frame) == gradio.caching.cache_hash(frame.copy()))\n"
        "print(gradio.caching.pd is pd or gradio.caching.pd.DataFrame is pd.DataFrame)\n"
    )
    assert _printed(script) == ["False", "True", "True"]


def test_the_chat_imports_gradio_without_the_mcp_sdk_and_an_app_with_mcp_server_still_serves_tools():
    # The decorator gradio.server took from the stand-in at import imports gradio.mcp when called;
    # the app launched with mcp_server=True builds gradio's real MCP server, which a real MCP
    # client lists and calls over streamable HTTP on loopback.
    script = (
        "import asyncio, socket, sys\n"
        "import httpx\n"
        "from codeground.app.serve.gradio_start import import_gradio\n"
        "gr = import_gradio()\n"
        "print('mcp' in sys.modules, 'gradio.mcp' in sys.modules)\n"
        "import gradio.server\n"
        "@gradio.server._MCPNamespace.tool(name='shout')\n"
        "def shout(text: str) -> str:\n"
        "    '''Upper-cases the text.\n\n    Args:\n        text: what to upper-case\n    '''\n"
        "    return text.upper()\n"
        "print('gradio.mcp' in sys.modules, shout._mcp_type)\n"
        "demo = gr.Interface(shout, 'textbox', 'textbox')\n"
        "with socket.socket() as s:\n"
        "    s.bind(('127.0.0.1', 0))\n"
        "    port = s.getsockname()[1]\n"
        "demo.launch(server_name='127.0.0.1', server_port=port, prevent_thread_lock=True,\n"
        "            quiet=True, mcp_server=True, ssr_mode=False)\n"
        "from mcp import ClientSession\n"
        "from mcp.client.streamable_http import streamable_http_client\n"
        "async def main():\n"
        "    url = f'http://127.0.0.1:{port}/gradio_api/mcp/'\n"
        "    async with httpx.AsyncClient(trust_env=False, timeout=60) as http, \\\n"
        "            streamable_http_client(url, http_client=http) as (read, write, _), \\\n"
        "            ClientSession(read, write) as session:\n"
        "        await session.initialize()\n"
        "        tools = (await session.list_tools()).tools\n"
        "        out = await session.call_tool(tools[0].name, {'text': 'hi'})\n"
        "        texts = [part.text for part in out.content]\n"
        "        print('listed', [tool.name for tool in tools], 'called', texts)\n"
        "asyncio.run(main())\n"
        "demo.close()\n"
    )
    printed = _printed(script)
    assert printed[:4] == ["False", "False", "True", "tool"]
    listed = printed.index("listed")  # gradio prints its own lines around
    assert printed[listed : listed + 4] == ["listed", "['shout']", "called", "['HI']"]


def test_a_served_chat_with_its_pipeline_warm_has_imported_neither_pandas_nor_the_mcp_sdk_nor_torch(
    indexed_sample,
):
    _, index_dir = indexed_sample
    script = (
        "import socket, sys, urllib.request\n"
        "from codeground.app.pipeline.loader import PIPELINES_DIR\n"
        "from codeground.app.serve.ui import serve\n"
        "with socket.socket() as s:\n"
        "    s.bind(('127.0.0.1', 0))\n"
        "    port = s.getsockname()[1]\n"
        f"demo = serve({str(index_dir)!r}, PIPELINES_DIR / 'query.yaml', port=port, block=False)\n"
        "opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
        "print('page', opener.open(f'http://127.0.0.1:{port}/', timeout=30).status)\n"
        "print('imported', *[m in sys.modules for m in ('pandas', 'mcp', 'gradio.mcp', 'torch')])\n"
        "demo.close()\n"
    )
    printed = _printed(script)
    page = printed.index("page")
    assert printed[page : page + 2] == ["page", "200"]
    imported = printed.index("imported")
    assert printed[imported + 1 : imported + 5] == ["False"] * 4
