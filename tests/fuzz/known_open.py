"""Input classes that break the CLI contract today, with what goes wrong. The random fuzz tests draw
no input of these classes (so that they stay green); the failing inputs themselves are regression
cases in ``corpus/`` marked ``xfail(strict=True)``. When a fix lands, delete the entry here (and the
``open`` reason of its corpus cases).

Keys are ``"<input kind>: <class>"`` as the fuzz tests name them (see ``test_fuzz_cli.py``)."""

from __future__ import annotations

KNOWN_OPEN: dict[str, str] = {
}
