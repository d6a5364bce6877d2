"""Mutations of the bundled scenario files: lines deleted, duplicated, swapped; the file truncated;
random bytes, a UTF-8 BOM, CRLF line ends or a non-UTF-8 byte; and near-miss identifiers (typos of
rule, client, location, data, keyword and observable names) in declarations and in formulas.

A typo is only generated where it cannot be a harmless rename: never in comments, the scenario's
title, an unreferenced declared name (a property's name, the attacker's), and never a word the
scenario knows (a keyword, a declared name, an observable or label of the explored model).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import flcheck_spec
from hypothesis import strategies as st

#: The bundled scenarios small enough to fuzz (moniteo_swarm8 is not).
SCENARIOS = ("moniteo", "seed_model", "moniteo_link_loss")

#: Expectations: REJECT exit 2 positioned in the file; SAME the verdicts of the unchanged file, or
#: exit 2 positioned; ANY a verdict or exit 2 positioned (a structural edit may leave a valid file).
REJECT, SAME, ANY = "reject", "same", "any"

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Statements that declare a name right after their keyword.
DECLARING = ("server", "attacker", "property", "actor", "neighbour", "data", "clients", "locations",
             "defence", "const")
#: Names of the FL rules (the `enabled(RULE)` and `last == RULE` vocabulary).
RULES = ("put_part", "get_grad", "eval_server", "eval_round")


def scenario_path(name: str) -> Path:
    return flcheck_spec.bundled_scenarios()[name]


def _grammar_words(grammar: str) -> set[str]:
    text = (Path(flcheck_spec.__file__).parent / "grammar" / grammar).read_text(encoding="utf-8")
    return set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', text))


@functools.cache
def keywords() -> frozenset[str]:
    return frozenset(_grammar_words("scenario.lark") | _grammar_words("ctl.lark"))


@functools.cache
def model_vocabulary(name: str) -> frozenset[str]:
    """The labels, observables, rules and value names of the scenario's model (the vocabulary its
    properties are checked against, :func:`checker.app.scenario_vocabulary.scenario_vocabulary`; a few
    extra words only make the typo filter more careful)."""
    from checker.app.scenario_vocabulary import scenario_vocabulary
    from flmodel.scenario import load_scenario
    from flmodel.scenario_build import build_system

    vocabulary = scenario_vocabulary(build_system(load_scenario(scenario_path(name))))
    words = set(vocabulary.labels) | set(vocabulary.observables) | set(vocabulary.rules or ())
    for values in vocabulary.names.values():
        words |= set(values)
    assert "ready_sat1" in words or "ready_c1" in words, words
    return frozenset(words | {w.removeprefix("enabled_") for w in words})


@dataclass(frozen=True)
class Token:
    line: int  # 0-based
    start: int
    end: int
    text: str
    context: str  # "formula" or "statement"
    category: str  # "keyword", "rule", "client", "location", "data", "observable", "name"


def code_part(line: str) -> str:
    """The line without its comment (``#`` or ``//`` outside a string)."""
    in_string = False
    for i, ch in enumerate(line):
        if ch == '"':
            in_string = not in_string
        elif not in_string and (ch == "#" or line.startswith("//", i)):
            return line[:i]
    return line


def _formula_span(code: str) -> tuple[int, int] | None:
    m = re.match(r"\s*property\s+\w+\s*:\s*(?:ctl|attack_tree\s+(?:exists|absent)|probability.*?reach)\s+",
                 code)
    if not m:
        return None
    end = code.find(";", m.end())
    return m.end(), end if end >= 0 else len(code)


def declared(lines: list[str]) -> dict[str, str]:
    """Declared names -> their category, read from the statements."""
    names: dict[str, str] = {}
    for line in lines:
        code = code_part(line).strip()
        words = IDENTIFIER.findall(code)
        if not words:
            continue
        head = words[0]
        if head == "locations":
            names.update({w: "location" for w in words[1:]})
        elif head in ("clients", "actor"):
            names.update({w: "client" for w in re.findall(r"(\w+)\s+at\b", code)})
        elif head == "server" and len(words) > 1:
            names[words[1]] = "client"
        elif head == "data" and len(words) > 1:
            names[words[1]] = "data"
    names.update({rule: "rule" for rule in RULES})
    return names


def _is_property(code: str) -> bool:
    return code.lstrip().startswith("property")


@functools.cache
def tokens(name: str, reads_properties: bool = True) -> list[Token]:
    """The identifiers of scenario ``name`` where a typo must be rejected. A declared name used
    nowhere else may be renamed at its declaration harmlessly (a consistent rename, not a typo); for a
    command that does not read the properties (``reads_properties=False``: explore), uses inside
    property statements do not count either."""
    lines = scenario_path(name).read_text(encoding="utf-8").splitlines()
    names = declared(lines)
    counted = [line for line in lines if reads_properties or not _is_property(code_part(line))]
    code_words = [w for line in counted for w in IDENTIFIER.findall(code_part(line))]
    out = []
    for no, line in enumerate(lines):
        code = code_part(line)
        if code.lstrip().startswith("scenario"):
            continue  # the title is free text
        span = _formula_span(code)
        matches = list(IDENTIFIER.finditer(code))
        for k, m in enumerate(matches):
            word = m.group()
            previous = matches[k - 1].group() if k else None
            following = matches[k + 1].group() if k + 1 < len(matches) else None
            head = matches[0].group()
            declaring = (previous in DECLARING and k == 1) or (head == "locations" and k >= 1) or (
                head in ("clients", "actor") and following == "at")
            if declaring:
                # a declared name: a typo is a harmless rename unless the name is used elsewhere
                uses = code_words.count(word) - 1 - sum(
                    1 for other in counted if IDENTIFIER.findall(code_part(other))[:1] == [word])
                if uses <= 0:
                    continue
            in_formula = span is not None and span[0] <= m.start() < span[1]
            if word in names:
                category = names[word]
            elif word in keywords():
                category = "keyword"
            elif in_formula:
                category = "observable"
            else:
                category = "name"
            out.append(Token(no, m.start(), m.end(), word, "formula" if in_formula else "statement",
                             category))
    return out


@st.composite
def typos(draw: st.DrawFn, word: str) -> str:
    """A near miss of ``word``: one letter dropped, doubled, swapped with its neighbour, or an
    unusual letter inserted."""
    ops = ["drop", "double", "swap", "insert"] if len(word) > 1 else ["double", "insert"]
    op = draw(st.sampled_from(ops))
    i = draw(st.integers(0, len(word) - 1))
    if op == "drop":
        return word[:i] + word[i + 1:]
    if op == "double":
        return word[:i] + word[i] + word[i:]
    if op == "swap" and i + 1 < len(word) and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word[:i] + draw(st.sampled_from("qxz")) + word[i:]


def known_word(name: str, typo: str, original: str) -> bool:
    """Whether ``typo`` could be a real word of the scenario (then it is not a typo to reject)."""
    lines = scenario_path(name).read_text(encoding="utf-8").splitlines()
    known = keywords() | model_vocabulary(name) | set(declared(lines)) | {
        w for line in lines for w in IDENTIFIER.findall(code_part(line))}
    if typo in known or not IDENTIFIER.fullmatch(typo):
        return True
    # a derived name with another known suffix (holds_loc_c -> holds_loc_a)
    for i, ch in enumerate(typo):
        if ch == "_" and typo[:i] == original[:i] and typo[i + 1:] in known:
            return True
    return False


@dataclass(frozen=True)
class MutatedScenario:
    base: str
    mutation: str  # the class name
    expect: str
    data: bytes


def _lines(name: str) -> list[bytes]:
    return scenario_path(name).read_bytes().splitlines(keepends=True)


Mutator = Callable[[st.DrawFn, str], tuple[bytes, str]]


def _is_locations(line: bytes) -> bool:
    return line.lstrip().startswith(b"locations")


def _delete(draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    """Delete a line other than the ``locations`` declaration (its own class: every use of every
    location becomes an error)."""
    lines = _lines(name)
    del lines[draw(st.sampled_from([i for i, line in enumerate(lines) if not _is_locations(line)]))]
    return b"".join(lines), ANY


def _delete_locations(_draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    return b"".join(line for line in _lines(name) if not _is_locations(line)), REJECT


def _duplicate(draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    lines = _lines(name)
    i = draw(st.integers(0, len(lines) - 1))
    lines.insert(i, lines[i])
    return b"".join(lines), ANY


def _swap(draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    lines = _lines(name)
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines), ANY


def _boundaries(data: bytes) -> list[int]:
    """Offsets between characters (never inside a multi-byte UTF-8 sequence: cutting one is the
    non-UTF-8 class)."""
    return [i for i in range(len(data) + 1) if i == len(data) or not 0x80 <= data[i] < 0xC0]


def _truncate(draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    data = scenario_path(name).read_bytes()
    return data[: draw(st.sampled_from(_boundaries(data)[:-1]))], ANY


def _random_bytes(draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    data = scenario_path(name).read_bytes()
    at = draw(st.sampled_from(_boundaries(data)))
    junk = draw(st.binary(min_size=1, max_size=8).map(lambda b: bytes(x & 0x7F for x in b)))
    return data[:at] + junk + data[at:], ANY


def _non_utf8(draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    data = scenario_path(name).read_bytes()
    at = draw(st.integers(0, len(data)))
    return data[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80"])) + data[at:], \
        REJECT


def _bom(_draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    return b"\xef\xbb\xbf" + scenario_path(name).read_bytes(), SAME


def _crlf(_draw: st.DrawFn, name: str) -> tuple[bytes, str]:
    return scenario_path(name).read_bytes().replace(b"\n", b"\r\n"), SAME


STRUCTURAL: dict[str, Mutator] = {
    "line deleted": _delete,
    "locations line deleted": _delete_locations,
    "line duplicated": _duplicate,
    "lines swapped": _swap,
    "truncated": _truncate,
    "random ASCII bytes inserted": _random_bytes,
    "non-UTF-8 byte": _non_utf8,
    "UTF-8 BOM": _bom,
    "CRLF line ends": _crlf,
}


def typo_class(token: Token) -> str:
    return f"typo: {token.category} in a {token.context}"


def typo_classes() -> set[str]:
    return {typo_class(t) for name in SCENARIOS for t in tokens(name)}


@st.composite
def mutated_scenarios(draw: st.DrawFn, excluded: frozenset[str],
                      reads_properties: bool = True) -> MutatedScenario:
    """A mutated bundled scenario whose mutation class is not in ``excluded``, for a command that
    reads the properties (check) or not (explore; see :func:`tokens`)."""
    name = draw(st.sampled_from(SCENARIOS))
    candidates = [t for t in tokens(name, reads_properties) if typo_class(t) not in excluded]
    kinds = [k for k in STRUCTURAL if k not in excluded] + (["typo"] if candidates else [])
    kind = draw(st.sampled_from(kinds))
    if kind != "typo":
        data, expect = STRUCTURAL[kind](draw, name)
        return MutatedScenario(name, kind, expect, data)
    token = draw(st.sampled_from(candidates))
    typo = draw(typos(token.text).filter(lambda t: not known_word(name, t, token.text)))
    lines = scenario_path(name).read_text(encoding="utf-8").splitlines(keepends=True)
    line = lines[token.line]
    lines[token.line] = line[: token.start] + typo + line[token.end:]
    return MutatedScenario(name, typo_class(token), REJECT, "".join(lines).encode())
