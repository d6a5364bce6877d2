"""``python -m checker`` is the ``flcheck`` command; :func:`run` is the console script's entry point.

:func:`run` imports the command line (:mod:`checker.cli.main`) when it runs, so that a Ctrl-C while
Python is still loading flcheck ends with one line and exit 130, never a traceback. Once the command is
done and its output flushed, the process ends at once (:func:`os._exit`): freeing a large explored
structure object by object would cost seconds of CPU after the answer (and after a limit's stop).
"""

from __future__ import annotations

import os
import sys


def run() -> int:
    """Run ``flcheck`` with the process's arguments; returns the exit code (or ends the process)."""
    kept: list[object] = []  # the command's large results: never freed one object at a time
    try:
        from checker.cli.main import main  # lazy: see the module's docstring

        code = main(keep=kept)
    except KeyboardInterrupt:
        print("flcheck: interrupted", file=sys.stderr)
        code = 130  # checker.verdict.EXIT_INTERRUPTED (not imported: Ctrl-C may come first)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # the reader went away: nothing more to tell it
        return code
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(run())
