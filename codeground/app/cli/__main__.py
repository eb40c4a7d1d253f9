"""``python -m codeground.app.cli``: the command line, as the ``codeground`` console script runs it."""

from codeground.app.cli import main

if __name__ == "__main__":
    main()
