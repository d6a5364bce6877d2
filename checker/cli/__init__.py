"""The ``flcheck`` command line: the parser (:mod:`checker.cli.main`) and one module per command, each
exposing ``register(subparsers)``. The console script's entry point is :func:`checker.__main__.run`."""

from checker.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
