"""``python -m checker`` is the ``flcheck`` command; :func:`run` is the console script's entry point.

:func:`run` imports the command line (:mod:`checker.cli.main`) when it runs, so that a Ctrl-C while
Python is still loading flcheck ends with one line and exit 130, never a traceback."""

from __future__ import annotations

import sys


def run() -> int:
    """Run ``flcheck`` with the process's arguments; returns the exit code."""
    try:
        from checker.cli.main import main  # lazy: see the module's docstring

        return main()
    except KeyboardInterrupt:
        print("flcheck: interrupted", file=sys.stderr)
        return 130  # checker.verdict.EXIT_INTERRUPTED (not imported: Ctrl-C may come first)


if __name__ == "__main__":
    raise SystemExit(run())
