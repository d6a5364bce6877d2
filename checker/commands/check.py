"""Placeholder until the sub-command is implemented (see the issue that owns it)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Nothing registered yet."""
