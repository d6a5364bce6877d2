"""The examples in flmodel's docstrings run and give the values shown."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["flmodel.frozen", "flmodel.data", "flmodel.learning", "flmodel.noise", "flmodel.system",
           "flmodel.scenario"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
