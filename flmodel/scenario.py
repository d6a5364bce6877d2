"""The scenario language: parsing (``spec/grammar/scenario.lark``), semantic checks, loading.

``parse_scenario(text, source)`` turns a scenario file into a :class:`~flmodel.scenario_ast.Scenario`
and checks it; ``load_scenario(path)`` reads a file. Both take ``defines`` (constant name -> integer),
which override the defaults of the scenario's ``const`` declarations; constants, indexed names and
families are expanded first (:mod:`flmodel.scenario_family`), so the AST is that of the equivalent
hand-written scenario. A UTF-8 byte order mark and CRLF line ends are accepted. Errors are
:class:`flmodel.errors.ModelError`:

* a syntax error names the file, line, column, the offending text and what was expected there;
* semantic errors (a client without a part, overlapping parts or parts that do not cover the dataset,
  a policy naming an unknown actor, an unknown location, additive noise whose probabilities do not sum
  to 1, a model whose dimension does not fit the data, a statement given twice, …) are collected and
  reported all at once, one :class:`~flmodel.errors.Diagnostic` each, in file order; a problem inside a
  family names the member (``file:12:1: in family i = 5: …``).

The semantics of a scenario is the bounded ``→FL`` system of [IIIf-FL] III-B, built by
:mod:`flmodel.scenario_build` (``build_system(scenario)``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import lark
from flcheck_spec import MAX_NESTING, describe_terminals, lalr_parser, too_deep
from flcheck_spec.vocab import Position
from lark import Lark

from flmodel.errors import Diagnostic, ModelError
from flmodel.scenario_ast import (
    Scenario,
)
from flmodel.scenario_build import ScenarioSystem, build_system
from flmodel.scenario_check import (
    ACTIONS,
    LOSS_NAMES,
    PROTOCOLS,
    check_observables,
    check_scenario,
    check_step_rules,
)
from flmodel.scenario_check_network import check_attacker_routes
from flmodel.scenario_family import diagnostic, expand
from flmodel.scenario_transform import Build

__all__ = ["ACTIONS", "LOSS_NAMES", "PROTOCOLS", "check_scenario", "load_scenario", "load_scenario_system",
           "parse_scenario", "parse_scenario_system"]


_TERMINAL_TEXT = {
    "NAME": "a name",
    "STRING": 'a quoted string ("...")',
    "SIGNED_NUMBER": "a number",
    "SCI_NUMBER": "a number such as 1e-6",
    "INT": "an integer",
    "FORMULA": "a formula (ending with ';' or the line)",
    "DPFORMULA": "a query D{ε, δ}[path formula]",
    "DPSCHEDULER": "uniform, memoryless, adaptive, blind or worst",
    "LINK_OP": "'--' or '->'",
    "ANYWHERE": "'anywhere'",
    "POLICY_MODE": "default, permissive or ignored",
    "SECRET": "'secret'",
    "NOISE_TARGET": "update or gradient",
    "TRACE_MODE": "full or drop",
    "BOUND_KIND": "rounds or events",
    "EXPECT": "exists or absent",
    "SCHEDULER": "min, max or uniform",
    "COMPARE": "a comparison (<= >= < > ==)",
    "WINDOW_UNIT": "rounds or steps",
    "AGGREGATE": "all, quorum or deadline",
    "STEP_ATTR": "cost, probability or time",
    "$END": "end of file",
}


def _parser() -> Lark:
    return lalr_parser("scenario.lark")


def _expected(names: Any) -> str:
    items = describe_terminals(_parser(), names, _TERMINAL_TEXT)
    if not items:
        return ""
    if len(items) > 12:
        items = [*items[:12], "…"]
    return "; expected " + ", ".join(items)


#: The scopes of a budget property (spec/grammar/scenario.lark, budget_scope).
_BUDGET_SCOPES = ("per round", "over rounds", "per client over rounds")
#: A budget statement's scope words: from "per" or "over" to "between", ";" or the end of the line.
_BUDGET_SCOPE = re.compile(r"\bbudget\s+epsilon\b[^;\n]*?\s(?P<scope>(?:per|over)\b[^;\n]*?)"
                           r"(?:\s+between\b|\s*;|\s*$)")


def _budget_scope_error(text: str, source: str, line: int, col: int) -> ModelError | None:
    """The message for a syntax error at ``line:col`` inside a budget property's scope (``per rounds``,
    ``per client``, ``over round``): the scope as written, at its first word, and the accepted scopes.
    ``None`` when the error is elsewhere, or the scope begins with an accepted one (the error follows)."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    for m in _BUDGET_SCOPE.finditer(lines[line - 1]):
        start, end = m.start("scope") + 1, m.end() + 1
        if not start <= col <= end:
            continue
        words = m.group("scope").split()
        if any(words[:len(s.split())] == s.split() for s in _BUDGET_SCOPES):
            return None
        accepted = ", ".join(f"'{s}'" for s in _BUDGET_SCOPES[:-1]) + f" or '{_BUDGET_SCOPES[-1]}'"
        return ModelError([Diagnostic(Position(source, line, start),
                                      f"unknown budget scope '{' '.join(words)}'; expected {accepted} "
                                      f"(omitted: over rounds)")])
    return None


def _syntax_error(exc: lark.exceptions.UnexpectedInput, text: str, source: str) -> ModelError:
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            lines = text.rstrip().split("\n")
            line, col = len(lines), len(lines[-1]) + 1
            what = "unexpected end of file"
        else:
            line, col = exc.line, exc.column
            what = f"unexpected {str(tok)!r}"
            scope = _budget_scope_error(text, source, line, col)
            if scope is not None:
                return scope
        return ModelError([Diagnostic(Position(source, line, col), what + _expected(exc.expected))])
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        at = exc.pos_in_stream
        ch = text[at] if at is not None and at < len(text) else "?"
        scope = _budget_scope_error(text, source, exc.line, exc.column)
        if scope is not None:
            return scope
        return ModelError([Diagnostic(Position(source, exc.line, exc.column),
                                      f"unexpected character {ch!r}" + _expected(exc.allowed))])
    lines = text.rstrip().split("\n")
    return ModelError([Diagnostic(Position(source, len(lines), len(lines[-1]) + 1),
                                  "unexpected end of file" + _expected(getattr(exc, "expected", None)))])


#: The keyword of a statement kind, for messages.
_KEYWORD = {"policies_mode": "policies", "actors": "actor"}


def _assemble(parts: list[Any], source: str, diags: list[Diagnostic],
              constants: dict[str, int]) -> tuple[Scenario, dict[str, Any]]:
    """Statements (in file order) -> Scenario, recording single-use statements given twice (with the
    position of the first)."""
    fields: dict[str, Any] = {"locations": [], "links": [], "clients": [], "actors": [], "policies": [],
                              "data": [], "noise": [], "bounds": [], "neighbours": [], "properties": [],
                              "contacts": [], "losses": [], "failures": [], "steps": [], "defences": [],
                              "routes": []}
    extras: dict[str, Any] = {"policy_names": [], "noise_names": [], "prop_extra": {}, "positions": {}}
    name = "<unnamed>"
    singles = {"server", "policies_mode", "dataset", "partition", "model", "protocol", "attacker"}
    for tag, payload in parts:
        if tag == "header":
            name = payload[0]
            continue
        if tag in singles:
            # server and attacker are declarations with a position; the others are (value, position)
            pos: Position = payload.pos if tag in ("server", "attacker") else payload[1]
            if tag in fields:
                first = extras["positions"][tag]
                diags.append(diagnostic(pos, f"second {_KEYWORD.get(tag, tag)} statement; the first is at "
                                             f"{first}"))
                continue
            fields[tag] = payload if tag in ("server", "attacker") else payload[0]
            extras["positions"][tag] = pos
            continue
        if tag == "policy":
            decl, who, acts = payload
            fields["policies"].append(decl)
            extras["policy_names"].append((decl, who, acts))
        elif tag == "noise":
            decl, clients = payload
            fields["noise"].append(decl)
            extras["noise_names"].append((decl, clients))
        elif tag == "property":
            decl, extra = payload
            fields["properties"].append(decl)
            extras["prop_extra"][id(decl)] = extra
        elif tag == "neighbour":
            fields["neighbours"].append(payload)
        elif tag == "run":
            if "run" in extras["positions"]:
                diags.append(Diagnostic(payload[1], "second run statement; the first is at "
                                                    f"{extras['positions']['run']}"))
            else:
                extras["positions"]["run"] = payload[1]
                fields["run"] = payload[0]
        elif tag == "bounds":
            bounds, pos = payload
            if "bounds" in extras["positions"]:
                diags.append(Diagnostic(pos, "second bounds statement; the first is at "
                                             f"{extras['positions']['bounds']} (write 'bounds rounds N, "
                                             "events M')"))
            else:
                extras["positions"]["bounds"] = pos
            fields["bounds"].extend(bounds)
        else:
            fields[tag].extend(payload)
    # the repeated statements' lists as tuples; a single statement not given stays at its default
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    scenario = Scenario(name=name, source=source, constants=tuple(constants.items()), **values)
    return scenario, extras


def parse_scenario(text: str, source: str = "<scenario>", *, check: bool = True,
                   defines: Mapping[str, int] | None = None) -> Scenario:
    """Parse (and by default semantically check) scenario ``text``; ``source`` names the file in
    diagnostics, ``defines`` override constants (a name that is not a constant of the scenario is an
    error listing them). Raises :class:`ModelError` with every problem found."""
    return _parse(text, source, check, defines)[0]


def parse_scenario_system(text: str, source: str = "<scenario>", *,
                          defines: Mapping[str, int] | None = None) -> tuple[Scenario, ScenarioSystem]:
    """:func:`parse_scenario` with the checks, and the scenario's system that the checks built
    (:func:`flmodel.scenario_build.build_system`): the scenario is parsed and built once."""
    scenario, system = _parse(text, source, True, defines)
    assert system is not None  # built by the checks whenever they find no problem
    return scenario, system


def _parse(text: str, source: str, check: bool, defines: Mapping[str, int] | None
           ) -> tuple[Scenario, ScenarioSystem | None]:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        raise _syntax_error(exc, text, source) from None
    deep = too_deep(tree)  # before anything recurses over the tree (flcheck_spec.MAX_NESTING)
    if deep is not None:
        where = Position(source, None if deep.meta.empty else deep.meta.line,
                         None if deep.meta.empty else deep.meta.column)
        raise ModelError([Diagnostic(where, f"expression nested more than {MAX_NESTING} levels deep here; "
                                            f"expected at most {MAX_NESTING} nested operators")])
    tree, constants = expand(tree, source, defines)
    builder = Build(source)
    try:
        parts = builder.transform(tree)
    except lark.exceptions.VisitError as exc:  # pragma: no cover - transformer bug
        raise ModelError([Diagnostic(Position(source),
                                     f"internal error reading the scenario: {exc}")]) from exc
    diags = list(builder.diags)
    scenario, extras = _assemble(parts, source, diags, constants)
    system = None
    if check:
        diags.extend(check_scenario(scenario, extras))
        if not diags:
            system, built = _check_built(scenario)
            diags.extend(built)
    if diags:
        diags.sort(key=lambda d: (d.line or 0, d.column or 0))
        raise ModelError(diags)
    return scenario, system


def _check_built(scenario: Scenario) -> tuple[ScenarioSystem | None, list[Diagnostic]]:
    """The scenario's system, and the problems only it reveals: observed names (attacker,
    ``observing``) that are not observables of the system, rules of ``attack_step`` and ``defence``
    statements it does not have."""
    try:
        system = build_system(scenario)
    except ModelError as exc:
        return None, list(exc.diagnostics)
    return system, (check_observables(scenario, set(system.observable_names()))
                    or check_attacker_routes(scenario) or check_step_rules(scenario, system.fl.rule_names))


def load_scenario(path: str | Path, defines: Mapping[str, int] | None = None) -> Scenario:
    """Read and check the scenario file ``path``; ``defines`` override its constants
    (:func:`parse_scenario`)."""
    return parse_scenario(_read(Path(path)), str(Path(path)), defines=defines)


def load_scenario_system(path: str | Path, defines: Mapping[str, int] | None = None
                         ) -> tuple[Scenario, ScenarioSystem]:
    """:func:`load_scenario` and the system its checks built (:func:`parse_scenario_system`)."""
    return parse_scenario_system(_read(Path(path)), str(Path(path)), defines=defines)


def _read(p: Path) -> str:
    """The text of the scenario file ``p`` (UTF-8; a missing file or another encoding is an error)."""
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"scenario file not found: {p}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError([undecodable(data, exc, str(p))]) from None
    return text


def undecodable(data: bytes, exc: UnicodeDecodeError, source: str) -> Diagnostic:
    """The diagnostic of the first byte of ``data`` that is not UTF-8: its line, and its column in
    characters of the (valid) text before it on that line.

    >>> d = undecodable(b"ab\\ncd\\xffe", UnicodeDecodeError("utf-8", b"", 5, 6, "x"), "f.fl")
    >>> (d.line, d.column, d.message)
    (2, 3, 'byte 0xff is not UTF-8 text; expected a UTF-8 text file')
    """
    start = exc.start
    line_start = data.rfind(b"\n", 0, start) + 1
    if line_start == 0 and data.startswith(b"\xef\xbb\xbf"):  # a byte order mark is not a column
        line_start = 3
    line = data.count(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
    return Diagnostic(Position(source, line, column),
                      f"byte 0x{data[start]:02x} is not UTF-8 text; expected a UTF-8 text file")


