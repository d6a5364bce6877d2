"""The ``flcheck`` command line: the parser (:mod:`checker.cli.main`) and one module per command, each
exposing ``register(subparsers)``."""

from checker.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
