"""codeground's application layer: pipeline loading, the index on disk, the CLI and the chat."""
