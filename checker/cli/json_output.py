"""The one envelope of every command's ``--json`` output, success and error alike.

Every JSON object a command prints (or writes, for ``attack-tree --json -o FILE``) begins with
``{"flcheck": VERSION, "schema": SCHEMA_VERSION, "command": NAME, ...}``; ``NAME`` is the sub-command as
typed (``"check"``, ``"dp gaussian"``, ``"attack sratta"``). The command's own keys follow unchanged. The
layout of each command is documented by ``spec/schema/<command>.schema.json`` (shipped as
``flcheck_spec.schema``); ``spec/JSON.md`` states the version policy: adding keys keeps
``SCHEMA_VERSION``, renaming or removing one bumps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checker import __version__
from checker.render import dumps

__all__ = ["ENVELOPE_KEYS", "SCHEMA_VERSION", "emit_json", "envelope", "json_text"]

#: Version of the JSON layout of every command (see ``spec/JSON.md``).
SCHEMA_VERSION = 1

#: The keys :func:`envelope` puts first in every JSON object.
ENVELOPE_KEYS = ("flcheck", "schema", "command")


def envelope(command: str | None, payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` behind the envelope keys; a payload that already has one of them is a bug.

    >>> envelope("list", {"scenarios": []})["schema"]
    1
    """
    clash = [key for key in ENVELOPE_KEYS if key in payload]
    if clash:
        raise ValueError(f"the JSON of {command!r} already has the envelope key(s) {', '.join(clash)}")
    return {"flcheck": __version__, "schema": SCHEMA_VERSION, "command": command, **payload}


def json_text(command: str | None, payload: Mapping[str, Any], *, indent: int | None = 2) -> str:
    """The strict JSON text (:func:`checker.render.dumps`) of ``payload`` in its envelope."""
    return dumps(envelope(command, payload), indent=indent)


def emit_json(command: str | None, payload: Mapping[str, Any], *, indent: int | None = 2) -> None:
    """Print ``payload`` in its envelope as strict JSON on stdout."""
    print(json_text(command, payload, indent=indent))
