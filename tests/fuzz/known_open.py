"""Input classes that break the CLI contract today, with what goes wrong. The random fuzz tests draw
no input of these classes (so that they stay green); the failing inputs themselves are regression
cases in ``corpus/`` marked ``xfail(strict=True)``. When a fix lands, delete the entry here (and the
``open`` reason of its corpus cases).

Keys are ``"<input kind>: <class>"`` as the fuzz tests name them (see ``test_fuzz_cli.py``)."""

from __future__ import annotations

_UNPOSITIONED = "exit 2, but the message names the file without the line"
_NON_UTF8 = "UnicodeDecodeError escapes the reader: exit 3 instead of exit 2 at file:line"

KNOWN_OPEN: dict[str, str] = {
    # explicit models (flcheck ctl / explore MODEL.tra MODEL.lab)
    "explicit ctl: state id 1e11": "Storm flavour: MemoryError (exit 3) allocating 1e11 states",
    "explicit explore: state id 1e11": "Storm flavour: MemoryError (exit 3) allocating 1e11 states",
    "explicit ctl: state id of 24 digits": _UNPOSITIONED + " ('malformed transitions file')",
    "explicit explore: state id of 24 digits": _UNPOSITIONED + " ('malformed transitions file')",
    "explicit ctl: label for an absent state": "Storm flavour: the label silently adds states (a verdict)",
    "explicit explore: label for an absent state": "Storm flavour: the label silently adds states (exit 0)",
    "explicit ctl: non-UTF-8 byte in .tra": _NON_UTF8,
    "explicit explore: non-UTF-8 byte in .tra": _NON_UTF8,
    "explicit ctl: non-UTF-8 byte in .lab": _NON_UTF8 + " (in the #DECLARATION block)",
    "explicit explore: non-UTF-8 byte in .lab": _NON_UTF8 + " (in the #DECLARATION block)",
    # option values
    "option: privacy --eps=huge": "a 24-digit ε: OverflowError (exit 3) in the NI-FL-DP engine",
    "option: privacy --eps=1e17": "ε = 1e17: OverflowError (exit 3) in the NI-FL-DP engine",
    # formulas
    "formula explicit: enabled(unknown rule)": "enabled(NAME) of a rule the model does not have is "
                                               "false: a verdict instead of exit 2",
    "formula explicit: very deep": "RecursionError (exit 3) at about 500 nested prefix operators",
    "formula scenario: enabled(unknown rule)": "enabled(NAME) of an unknown rule: a verdict",
    "formula scenario: unknown rule as a value": "last == NAME with an unknown rule: a verdict",
    "formula scenario: unknown client in a set": '"NAME" in ready with an unknown client: a verdict',
    "formula scenario: unknown client as a value": 'server != "NAME" with an unknown actor: a verdict',
    "formula scenario: ill-typed comparison": 'round != "1", ready == 1 and the like: a verdict',
    # scenario files
    "scenario check: non-UTF-8 byte": _UNPOSITIONED + " ('not a UTF-8 text file', byte offset only)",
    "scenario explore: non-UTF-8 byte": _UNPOSITIONED + " ('not a UTF-8 text file', byte offset only)",
    "scenario check: typo: rule in a formula": "a property naming an unknown rule gets a verdict",
    "scenario check: typo: client in a formula": "a property naming an unknown client gets a verdict",
    "scenario check: typo: data in a formula": "a property naming an unknown data point gets a verdict",
}
