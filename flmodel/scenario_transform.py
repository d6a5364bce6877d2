"""The scenario parser's transformer: lark's parse tree of ``spec/grammar/scenario.lark`` to the AST
pieces of :mod:`flmodel.scenario_ast` (the property statements:
:class:`flmodel.scenario_properties.PropertyRules`), each with the position of its first token; number
errors are collected, not raised."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from flcheck_spec import unquote
from flcheck_spec.vocab import Position
from lark import Token, Transformer, v_args

from flmodel.errors import Diagnostic
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
    StepDecl,
)
from flmodel.scenario_family import FamilyPosition, FamilyToken, diagnostic
from flmodel.scenario_properties import PropertyRules, fraction

__all__ = ["Build"]


class Build(PropertyRules, Transformer[Any, Any]):
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
        value = fraction(items[0])
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
        return ("delta", fraction(value) if isinstance(value, Token) else value, self._at(meta))

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


    def start(self, items: list[Any]) -> list[Any]:
        return items
