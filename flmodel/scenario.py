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
from fractions import Fraction
from pathlib import Path
from typing import Any

import lark
from flcheck_spec import MAX_NESTING, describe_terminals, lalr_parser, too_deep, unquote
from flcheck_spec.vocab import Position
from lark import Lark, Token, Transformer, v_args

from flmodel.errors import Diagnostic, ModelError
from flmodel.scenario_ast import (
    AttackerDecl,
    BoundDecl,
    Change,
    ContactDecl,
    DataDecl,
    DefenceDecl,
    Link,
    LossDecl,
    MechanismDecl,
    ModelDecl,
    Named,
    NeighbourDecl,
    NoiseDecl,
    PartDecl,
    Placed,
    PolicyDecl,
    ProtocolDecl,
    RouteDecl,
    RunDecl,
    Scenario,
    StepDecl,
)
from flmodel.scenario_build import ScenarioSystem, build_system
from flmodel.scenario_check import (
    ACTIONS,
    LOSS_NAMES,
    PROTOCOLS,
    check_attacker_routes,
    check_observables,
    check_scenario,
    check_step_rules,
)
from flmodel.scenario_family import FamilyPosition, FamilyToken, diagnostic, expand
from flmodel.scenario_properties import (
    AdvantageProperty,
    AttackProperty,
    AttackTreeProperty,
    BudgetProperty,
    CrossvalProperty,
    CtlProperty,
    DpProperty,
    EpsSpec,
    FormulaText,
    Option,
    PrivacyProperty,
    ProbabilityProperty,
    Property,
)

__all__ = ["ACTIONS", "LOSS_NAMES", "PROTOCOLS", "check_scenario", "load_scenario", "parse_scenario"]


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


def _fraction(tok: Token | str) -> Fraction:
    return Fraction(str(tok))


#: A property's body as the transformer reads it: its record class and the fields (``_``-prefixed
#: keys: positions of parts, for messages).
_Body = tuple[type[Property], dict[str, Any]]


class _Build(Transformer[Any, Any]):
    """Parse tree -> AST pieces; positions from the tokens; number errors collected in ``diags``."""

    def __init__(self, source: str):
        super().__init__()
        self.source = source
        self.diags: list[Diagnostic] = []

    def _p(self, tok: Token) -> Position:
        if isinstance(tok, FamilyToken):
            return FamilyPosition(self.source, tok.line, tok.column, tok.family)
        return Position(self.source, tok.line, tok.column)

    def _at(self, meta: Any) -> Position:
        """The position of a rule's first token (``meta`` of ``v_args(meta=True)``; empty: unknown)."""
        return Position(self.source) if meta.empty else Position(self.source, meta.line, meta.column)

    def _named(self, tok: Token) -> Named:
        return Named(str(tok), self._p(tok))

    # numbers
    def number(self, items: list[Token]) -> Fraction:
        value = _fraction(items[0])
        if len(items) == 2:
            den = int(items[1])
            if den == 0:
                self.diags.append(Diagnostic(Position(self.source, items[1].line, items[1].column),
                                             "division by zero in a number; expected a non-zero denominator"))
                return Fraction(0)
            value /= den
        return value

    def value(self, items: list[Fraction]) -> Fraction:
        """An expression, evaluated by :func:`flmodel.scenario_family.expand`."""
        return items[0]

    def vector(self, items: list[Fraction]) -> tuple[Fraction, ...]:
        return tuple(items)

    # statements: each returns (tag, payload)
    def header(self, items: list[Token]) -> tuple[str, Any]:
        return ("header", (unquote(str(items[0])), self._p(items[0])))

    def locations(self, items: list[Token]) -> tuple[str, Any]:
        return ("locations", tuple(self._named(t) for t in items))

    def link(self, items: list[Token]) -> Link:
        a, op, b = items
        return Link(str(a), str(b), str(op) == "->", self._p(a))

    def links(self, items: list[Link]) -> tuple[str, Any]:
        return ("links", tuple(items))

    def placed(self, items: list[Token]) -> Placed:
        return Placed(str(items[0]), str(items[1]), self._p(items[0]))

    @v_args(meta=True)
    def server(self, meta: Any, items: list[Token]) -> tuple[str, Any]:
        return ("server", Placed(str(items[0]), str(items[1]), self._p(items[0])))

    def clients(self, items: list[Placed]) -> tuple[str, Any]:
        return ("clients", tuple(items))

    def actor(self, items: list[Placed]) -> tuple[str, Any]:
        return ("actors", tuple(items))

    def who_list(self, items: list[Token]) -> tuple[Named, ...]:
        return tuple(self._named(t) for t in items)

    def who_any(self, items: list[Any]) -> None:
        return None

    @v_args(meta=True)
    def policy(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        loc, who, *rest = items
        anywhere = bool(rest) and isinstance(rest[-1], Token) and rest[-1].type == "ANYWHERE"
        acts = rest[:-1] if anywhere else rest
        decl = PolicyDecl(str(loc), None if who is None else tuple(n.name for n in who),
                          tuple(str(a) for a in acts), anywhere, self._p(loc))
        return ("policy", (decl, who, tuple(self._named(a) for a in acts)))

    def policies_mode(self, items: list[Token]) -> tuple[str, Any]:
        return ("policies_mode", (str(items[0]), self._p(items[0])))

    def owner(self, items: list[Token]) -> Token:
        return items[0]

    def data(self, items: list[Any]) -> tuple[str, Any]:
        name, feats, target, *rest = items
        secret = any(isinstance(r, Token) and r.type == "SECRET" for r in rest)
        owner = [r for r in rest if isinstance(r, Token) and r.type == "NAME"]
        return ("data", (DataDecl(str(name), feats, target, secret, str(owner[0]) if owner else None,
                                  self._p(name)),))

    @v_args(meta=True)
    def dataset(self, meta: Any, items: list[Token]) -> tuple[str, Any]:
        return ("dataset", (tuple(self._named(t) for t in items), self._at(meta)))

    def part(self, items: list[Token]) -> PartDecl:
        client, *pts = items
        return PartDecl(str(client), tuple(self._named(t) for t in pts), self._p(client))

    @v_args(meta=True)
    def partition(self, meta: Any, items: list[PartDecl]) -> tuple[str, Any]:
        return ("partition", (tuple(items), self._at(meta)))

    @v_args(meta=True)
    def model(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        loss, rate, init = items
        return ("model", (ModelDecl(str(loss), rate, init, self._p(loss)), self._p(loss)))

    # noise
    @v_args(meta=True)
    def mech_none(self, meta: Any, items: list[Any]) -> MechanismDecl:
        return MechanismDecl("none", pos=self._at(meta))

    @v_args(meta=True)
    def mech_rr(self, meta: Any, items: list[Any]) -> MechanismDecl:
        clip = items[-1] == "clip"
        *grid, r = items[:-1] if clip else items
        return MechanismDecl("rr", base=r, grid=tuple(grid), clip_range=clip, pos=self._at(meta))

    def rr_clip(self, items: list[Any]) -> str:
        return "clip"

    @v_args(meta=True)
    def mech_rr_epsilon(self, meta: Any, items: list[Any]) -> MechanismDecl:
        clip = items[-1] == "clip"
        *grid, eps = items[:-1] if clip else items
        return MechanismDecl("rr", grid=tuple(grid), epsilon=eps, clip_range=clip, pos=self._at(meta))

    @v_args(meta=True)
    def mech_laplace(self, meta: Any, items: list[Any]) -> MechanismDecl:
        eps, lo, hi, *rest = items
        return MechanismDecl("laplace", lo=lo, hi=hi, step=rest[0][1] if rest else None, epsilon=eps,
                             pos=self._at(meta))

    @v_args(meta=True)
    def mech_gaussian_sigma(self, meta: Any, items: list[Any]) -> MechanismDecl:
        sigma, *rest = items
        clip = lo = hi = step = None
        for item in rest:
            if item[0] == "step":
                step = item[1]
            elif item[0] == "clip":
                clip = item[1]
            else:
                lo, hi = item[1], item[2]
        return MechanismDecl("gaussian", sigma=sigma, clip=clip, lo=lo, hi=hi, step=step, pos=self._at(meta))

    def clip_value(self, items: list[Fraction]) -> tuple[str, Fraction]:
        return ("clip", items[0])

    def clip_range(self, items: list[Fraction]) -> tuple[str, Fraction, Fraction]:
        return ("range", items[0], items[1])

    # the run configuration
    @v_args(meta=True)
    def run_noise(self, meta: Any, items: list[Fraction]) -> tuple[str, Any, Position]:
        return ("noise_multiplier", items[0], self._at(meta))

    def run_rounds(self, items: list[Token]) -> tuple[str, Any, Position]:
        (value,) = items
        return ("rounds", int(value), self._p(value))

    @v_args(meta=True)
    def run_sampling(self, meta: Any, items: list[Any]) -> tuple[str, Any, Position]:
        kind, *rate = items
        return ("sampling", (str(kind), rate[0] if rate else None), self._p(kind))

    def rate_value(self, items: list[Fraction]) -> tuple[str, Any]:
        return ("rate", items[0])

    def rate_of(self, items: list[Token]) -> tuple[str, Any]:
        return ("of", (int(items[0]), int(items[1])))

    @v_args(meta=True)
    def run_clip(self, meta: Any, items: list[Fraction]) -> tuple[str, Any, Position]:
        return ("clip", items[0], self._at(meta))

    @v_args(meta=True)
    def run_delta(self, meta: Any, items: list[Any]) -> tuple[str, Any, Position]:
        (value,) = items
        return ("delta", _fraction(value) if isinstance(value, Token) else value, self._at(meta))

    @v_args(meta=True)
    def run(self, meta: Any, items: list[tuple[str, Any, Position]]) -> tuple[str, Any]:
        fields: dict[str, Any] = {}
        for key, value, _ in items:
            if key == "sampling":
                kind, rate = value
                fields["sampling"] = kind
                if rate is not None and rate[0] == "rate":
                    fields["rate"] = rate[1]
                elif rate is not None:
                    fields["per_round"], fields["clients"] = rate[1]
            else:
                fields[key] = value
        parts = tuple((key, pos) for key, _, pos in items)
        return ("run", (RunDecl(**fields, pos=self._at(meta), parts_pos=parts), self._at(meta)))

    @v_args(meta=True)
    def mech_additive(self, meta: Any, items: list[tuple[Fraction, Fraction]]) -> MechanismDecl:
        return MechanismDecl("additive", table=tuple(items), pos=self._at(meta))

    def noise_entry(self, items: list[Fraction]) -> tuple[Fraction, Fraction]:
        return (items[0], items[1])

    def step(self, items: list[Fraction]) -> tuple[str, Fraction]:
        return ("step", items[0])

    def _lattice(self, kind: str, meta: Any, items: list[Any]) -> MechanismDecl:
        clip = items[-1] == "clip"
        base, lo, hi, *rest = items[:-1] if clip else items
        step = rest[0][1] if rest else None
        return MechanismDecl(kind, base=base, lo=lo, hi=hi, step=step, clip_range=clip,  # type: ignore[arg-type]
                             pos=self._at(meta))

    @v_args(meta=True)
    def mech_geometric(self, meta: Any, items: list[Any]) -> MechanismDecl:
        return self._lattice("geometric", meta, items)

    @v_args(meta=True)
    def mech_gaussian(self, meta: Any, items: list[Any]) -> MechanismDecl:
        return self._lattice("gaussian", meta, items)

    def noise_for(self, items: list[Token]) -> tuple[str, Any]:
        return ("for", tuple(self._named(t) for t in items))

    def noise_on(self, items: list[Token]) -> tuple[str, Any]:
        return ("on", str(items[0]))

    @v_args(meta=True)
    def noise(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        clients = None
        target = None
        mech = None
        for it in items:
            if isinstance(it, MechanismDecl):
                mech = it
            elif it[0] == "for":
                clients = it[1]
            else:
                target = it[1]
        pos = self._at(meta)
        decl = NoiseDecl(None if clients is None else tuple(n.name for n in clients), mech,  # type: ignore[arg-type]
                         target, pos)
        return ("noise", (decl, clients))

    def aggregate(self, items: list[Token]) -> tuple[str, str, int | None]:
        return ("aggregate", str(items[0]), int(items[1]) if len(items) > 1 else None)

    def protocol(self, items: list[Any]) -> tuple[str, Any]:
        variant, *rest = items
        agg: tuple[str, Any, Any] = ("aggregate", None, None)
        if rest and isinstance(rest[0], tuple):
            agg, rest = rest[0], rest[1:]
        traces = str(rest[0]) if rest else None
        decl = ProtocolDecl(str(variant), traces, agg[1], agg[2], self._p(variant))
        return ("protocol", (decl, self._p(variant)))

    # time-varying topology
    def _window_number(self, meta: Any, value: Fraction) -> int:
        if value.denominator != 1 or value < 1:
            self.diags.append(Diagnostic(self._at(meta),
                                         f"a window is a round or step number >= 1, got {value}"))
            return 1
        return int(value)

    @v_args(meta=True)
    def window_one(self, meta: Any, items: list[Fraction]) -> tuple[int, int]:
        n = self._window_number(meta, items[0])
        return (n, n)

    @v_args(meta=True)
    def window_range(self, meta: Any, items: list[Fraction]) -> tuple[int, int]:
        lo, hi = (self._window_number(meta, v) for v in items)
        if lo > hi:
            self.diags.append(Diagnostic(self._at(meta), f"empty window {lo}..{hi}"))
        return (lo, hi)

    def contact(self, items: list[Any]) -> tuple[str, Any]:
        link, unit, *windows = items
        return ("contacts", (ContactDecl(link, str(unit), tuple(windows), link.pos),))  # type: ignore[arg-type]

    def loss(self, items: list[Any]) -> tuple[str, Any]:
        link, p, *rest = items
        return ("losses", (LossDecl(link, p, int(rest[0]) if rest else 0, link.pos),))

    def failure(self, items: list[Link]) -> tuple[str, Any]:
        return ("failures", tuple(items))

    def bound(self, items: list[Any]) -> BoundDecl:
        kind, value = items
        if value.denominator != 1 or value < 0:
            self.diags.append(diagnostic(self._p(kind), f"bounds {kind} must be a non-negative integer, got "
                                         f"{value}"))
            value = Fraction(0)
        return BoundDecl(str(kind), int(value), self._p(kind))

    @v_args(meta=True)
    def bounds(self, meta: Any, items: list[BoundDecl]) -> tuple[str, Any]:
        return ("bounds", (tuple(items), self._at(meta)))

    # neighbours
    def replace(self, items: list[Token]) -> Change:
        return Change("replace", str(items[0]), str(items[1]), self._p(items[0]))

    def remove(self, items: list[Token]) -> Change:
        return Change("remove", str(items[0]), None, self._p(items[0]))

    def add(self, items: list[Token]) -> Change:
        return Change("add", None, str(items[0]), self._p(items[0]))

    def neighbour(self, items: list[Any]) -> tuple[str, Any]:
        name, *changes = items
        return ("neighbour", NeighbourDecl(str(name), tuple(changes), self._p(name)))

    def attacker_at(self, items: list[Token]) -> tuple[str, Any]:
        return ("at", items[0])

    def attacker_on(self, items: list[Link]) -> tuple[str, Any]:
        return ("on", items[0])

    def attacker(self, items: list[Any]) -> tuple[str, Any]:
        name, *rest = items
        loc = None
        link = None
        if rest and isinstance(rest[0], tuple):
            if rest[0][0] == "at":
                loc = str(rest[0][1])
            else:
                link = rest[0][1]
            rest = rest[1:]
        return ("attacker", AttackerDecl(str(name), loc, tuple(self._named(t) for t in rest), self._p(name),
                                         link))

    def route(self, items: list[Token]) -> tuple[str, Any]:
        client, *rest = items
        for op in rest[1::2]:
            if str(op) != "->":
                self.diags.append(diagnostic(self._p(op), f"a route's hops are written '->', got {op!s}"))
        path = tuple(str(x) for x in rest[::2])
        return ("routes", (RouteDecl(str(client), path, self._p(client)),))

    # attributes of attack steps, defences
    def step_by(self, items: list[Token]) -> tuple[str, Token]:
        return ("by", items[0])

    def removal_at(self, items: list[Token]) -> tuple[str, Token]:
        return ("at", items[0])

    @v_args(meta=True)
    def step_value(self, meta: Any, items: list[Fraction]) -> tuple[Fraction, Position]:
        """A value of an attack step or a defence budget (an expression evaluated by the family
        expansion) and where it was written."""
        return (items[0], self._at(meta))

    def step_attr(self, items: list[Any]) -> tuple[Token, Fraction, Position]:
        name, (value, where) = items
        return (name, value, where)

    def removal_link(self, items: list[Link]) -> tuple[str, Any]:
        return ("links", tuple(items))

    def defence_budget(self, items: list[Any]) -> tuple[str, Any]:
        return ("budget", items[0])

    def attack_step(self, items: list[Any]) -> tuple[str, Any]:
        rule, *rest = items
        actor: Token | None = None
        values: dict[str, Fraction] = {}
        value_pos: dict[str, Position] = {}
        for item in rest:
            if isinstance(item, tuple) and item[0] == "by":
                actor = item[1]
                continue
            name, value, where = item
            key = str(name)
            if key in values:
                self.diags.append(diagnostic(self._p(name), f"{key} given twice in one attack_step "
                                             f"statement; the first is at {value_pos[key]}"))
                continue
            values[key], value_pos[key] = value, where
        decl = StepDecl(str(rule), None if actor is None else str(actor), values.get("cost"),
                        values.get("probability"), values.get("time"), self._p(rule),
                        self._p(actor) if actor is not None else self._p(rule), tuple(value_pos.items()))
        return ("steps", (decl,))

    def defence(self, items: list[Any]) -> tuple[str, Any]:
        name, *rest = items
        parts: dict[str, Token] = {}
        links: tuple[Link, ...] = ()
        budget: Fraction | None = None
        budget_pos: tuple[tuple[str, Position], ...] = ()
        for item in rest:
            if isinstance(item, tuple) and item[0] == "links":
                links = item[1]
            elif isinstance(item, tuple) and item[0] == "budget":
                budget, where = item[1]
                budget_pos = (("budget", where),)
            elif isinstance(item, tuple):
                parts["actor" if item[0] == "by" else "location"] = item[1]
            else:
                parts["rule"] = item
        rule, actor, location = (str(parts[k]) if k in parts else None for k in ("rule", "actor", "location"))
        decl = DefenceDecl(str(name), rule, actor, location, self._p(name),
                           tuple((k, self._p(v)) for k, v in parts.items()) + budget_pos, links, budget)
        return ("defences", (decl,))

    # properties
    def observing(self, items: list[Token]) -> tuple[str, Any]:
        return ("observing", tuple(self._named(t) for t in items))

    def eps_value(self, items: list[Fraction]) -> EpsSpec:
        return EpsSpec(items[0], False)

    def eps_log(self, items: list[Fraction]) -> EpsSpec:
        return EpsSpec(items[0], True)

    def adv_number(self, items: list[Fraction]) -> tuple[str, Any]:
        return ("number", items[0])

    def adv_theorem1(self, items: list[EpsSpec]) -> tuple[str, Any]:
        return ("theorem1", items[0])

    def adv_tight(self, items: list[EpsSpec]) -> tuple[str, Any]:
        return ("tight", items[0])

    def option(self, items: list[Any]) -> Option:
        key, value = items
        pos = self._p(key)
        if isinstance(value, Fraction):
            return Option(str(key), value, pos=pos)
        if value.type == "STRING":
            return Option(str(key), unquote(str(value)), True, pos=pos)
        return Option(str(key), str(value), pos=pos)

    def _formula(self, tok: Token) -> FormulaText:
        return FormulaText(str(tok).rstrip(), self._p(tok))

    def prop_ctl(self, items: list[Token]) -> _Body:
        return CtlProperty, {"formula": self._formula(items[0])}

    def prop_attack_tree(self, items: list[Token]) -> _Body:
        reduced = items[0].type == "REDUCED"
        expect, goal = items[1:] if reduced else items
        return AttackTreeProperty, {"expect": str(expect), "formula": self._formula(goal), "reduced": reduced}

    def _obs(self, rest: list[Any]) -> tuple[Named, ...]:
        for r in rest:
            if isinstance(r, tuple) and r and r[0] == "observing":
                return r[1]
        return ()

    def prop_privacy(self, items: list[Any]) -> _Body:
        eps, nb, *rest = items
        sched = next((r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "scheduler"), None)
        return PrivacyProperty, {"eps": eps, "neighbour": str(nb), "observing": self._obs(rest),
                                 "scheduler": sched, "_nbpos": self._p(nb)}

    def prop_advantage(self, items: list[Any]) -> _Body:
        (bkind, bval), nb, *rest = items
        return AdvantageProperty, {"bound_kind": bkind, "bound": bval, "neighbour": str(nb),
                                   "observing": self._obs(rest), "_nbpos": self._p(nb)}

    def prop_probability(self, items: list[Any]) -> _Body:
        sched = None
        if isinstance(items[0], Token) and items[0].type == "SCHEDULER":
            sched = str(items[0])
            items = items[1:]
        cmp_tok, bound, formula = items
        return ProbabilityProperty, {"scheduler": sched, "compare": str(cmp_tok), "bound": bound,
                                     "formula": self._formula(formula), "_boundpos": self._p(cmp_tok)}

    def prop_dp(self, items: list[Any]) -> _Body:
        formula, nb, *rest = items
        sched = next((r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "scheduler"), "worst")
        return DpProperty, {"formula": self._formula(formula), "neighbour": str(nb), "scheduler": sched,
                            "observing": self._obs(rest), "_nbpos": self._p(nb)}

    def dp_scheduler(self, items: list[Token]) -> tuple[str, str]:
        return ("scheduler", str(items[0]))

    def prop_crossval(self, items: list[Any]) -> _Body:
        nb, *opts = items
        return CrossvalProperty, {"neighbour": str(nb), "options": tuple(opts), "_nbpos": self._p(nb)}

    def prop_attack(self, items: list[Any]) -> _Body:
        name, *opts = items
        return AttackProperty, {"attack": str(name), "options": tuple(opts)}

    def prop_budget(self, items: list[Any]) -> _Body:
        eps, *rest = items
        nb = rest[-1]
        out: dict[str, Any] = {"eps": eps, "neighbour": str(nb), "_nbpos": self._p(nb)}
        for r in rest[:-1]:
            out[r[0]] = r[1]
            if r[0] == "delta":
                out["_deltapos"] = r[2]
        return BudgetProperty, out

    @v_args(meta=True)
    def budget_delta(self, meta: Any, items: list[Any]) -> tuple[str, Fraction, Position]:
        (value,) = items
        return ("delta", _fraction(value) if isinstance(value, Token) else value, self._at(meta))

    def scope_round(self, items: list[Any]) -> tuple[str, str]:
        return ("scope", "round")

    def scope_sequence(self, items: list[Any]) -> tuple[str, str]:
        return ("scope", "sequence")

    def scope_client(self, items: list[Any]) -> tuple[str, str]:
        return ("scope", "client")

    def property(self, items: list[Any]) -> tuple[str, Any]:
        """The typed record of the property's kind (:mod:`flmodel.scenario_properties`), and the
        positions of its parts for the semantic checks' messages."""
        name, (record, body) = items
        extra = {k: v for k, v in body.items() if k.startswith("_")}
        fields = {k: v for k, v in body.items() if not k.startswith("_")}
        return ("property", (record(str(name), pos=self._p(name), **fields), extra))

    def start(self, items: list[Any]) -> list[Any]:
        return items


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
            if tag == "server":
                fields["server"] = payload
            elif tag == "policies_mode":
                fields["policies_mode"] = payload[0]
            elif tag == "dataset":
                fields["dataset"] = payload[0]
            elif tag == "partition":
                fields["partition"] = payload[0]
            elif tag == "model":
                fields["model"] = payload[0]
            elif tag == "protocol":
                fields["protocol"] = payload[0]
            elif tag == "attacker":
                fields["attacker"] = payload
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
    att = fields.pop("attacker", None)
    scenario = Scenario(
        name=name,
        locations=tuple(fields["locations"]),
        links=tuple(fields["links"]),
        server=fields.get("server"),
        clients=tuple(fields["clients"]),
        actors=tuple(fields["actors"]),
        policies=tuple(fields["policies"]),
        policies_mode=fields.get("policies_mode"),
        data=tuple(fields["data"]),
        dataset=fields.get("dataset"),
        partition=fields.get("partition"),
        model=fields.get("model"),
        noise=tuple(fields["noise"]),
        protocol=fields.get("protocol"),
        bounds=tuple(fields["bounds"]),
        neighbours=tuple(fields["neighbours"]),
        attacker=att,
        properties=tuple(fields["properties"]),
        contacts=tuple(fields["contacts"]),
        losses=tuple(fields["losses"]),
        failures=tuple(fields["failures"]),
        steps=tuple(fields["steps"]),
        defences=tuple(fields["defences"]),
        routes=tuple(fields["routes"]),
        run=fields.get("run"),
        source=source,
        constants=tuple(constants.items()),
    )
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
    builder = _Build(source)
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


