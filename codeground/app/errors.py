"""The one exception type the CLI turns into a one-line message and a non-zero exit."""


class CodegroundError(Exception):
    """A user-facing failure: its message is one actionable line."""
