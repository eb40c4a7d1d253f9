"""The ways in besides the command line: the chat (``ui``, ``ui_format``, ``gradio_start``), the HTTP
server on Hayhooks (``http_server``, ``openai_api``, the wrappers in ``hayhooks_pipelines/``), MCP
(``mcp_server``), the tools they share (``repo_tools``), the address they listen on
(``listen_address``) and the local Ollama server (``ollama_launcher``)."""
