"""The abstract syntax of the scenario language (``spec/grammar/scenario.lark``) and its pretty printer.

Every declaration carries the source position (:class:`flcheck_spec.vocab.Position`) where it was
written; positions never take part in equality (``field(compare=False)``), so ``parse(to_text(s)) == s``
(the round trip) compares meaning, not layout. The AST is syntax only: the transition system of a
scenario is built by :mod:`flmodel.scenario_build` (``build_system(scenario)``,
``neighbour_dataset(scenario, name)``).
The named properties are typed records, one per kind (:mod:`flmodel.scenario_properties`). Formulas
are kept as text (:class:`~flmodel.scenario_properties.FormulaText`) with the position of their first
character: flmodel does not import the checker, the application layer parses them
(``checker.mc.ctl_parse.parse_formula`` with that offset), so a formula error points into the scenario
file.

Numbers are exact ``Fraction``s (``0.25`` is read as ``1/4``) and are printed as ``p/q``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Literal

from flcheck_spec.vocab import Position

from flmodel.scenario_properties import PropertyDecl
from flmodel.scenario_values import NOPOS, EpsSpec, Named, num_text


def vec_text(xs: tuple[Fraction, ...]) -> str:
    return "(" + ", ".join(num_text(x) for x in xs) + ")"


@dataclass(frozen=True)
class Link:
    """An edge of ``gra``: ``a -- b`` (both directions) or ``a -> b``."""

    a: str
    b: str
    directed: bool = False
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"{self.a} {'->' if self.directed else '--'} {self.b}"


def _edges(lk: Link) -> tuple[tuple[str, str], ...]:
    """The directed edges of a link (``a -- b`` gives both directions)."""
    return ((lk.a, lk.b),) if lk.directed else ((lk.a, lk.b), (lk.b, lk.a))


@dataclass(frozen=True)
class ContactDecl:
    """``contact a -- b in rounds 1, 3`` / ``in steps 2..5, 9``: the link, up only in the windows
    (``unit`` rounds or steps, numbered from 1; ``windows`` inclusive ranges ``(lo, hi)``)."""

    link: Link
    unit: Literal["rounds", "steps"]
    windows: tuple[tuple[int, int], ...]
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        items = ", ".join(str(lo) if lo == hi else f"{lo}..{hi}" for lo, hi in self.windows)
        return f"contact {self.link.text()} in {self.unit} {items}"


@dataclass(frozen=True)
class LossDecl:
    """``loss a -- b P retries K``: each attempt to send a message over the link is lost with
    probability ``P``; a lost attempt is retried up to ``K`` times."""

    link: Link
    probability: Fraction
    retries: int = 0
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"loss {self.link.text()} {num_text(self.probability)}" + (
            f" retries {self.retries}" if self.retries else "")


@dataclass(frozen=True)
class Placed:
    """An actor and its location (``aloc``)."""

    actor: str
    location: str
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"{self.actor} at {self.location}"


@dataclass(frozen=True)
class PolicyDecl:
    """``policy at L: who may actions [anywhere]`` — IIIf ``(p, e) ∈ poli G L``; ``actors=None`` is
    ``any``; ``anywhere`` drops the condition ``aloc G a = L``."""

    location: str
    actors: tuple[str, ...] | None
    actions: tuple[str, ...]
    anywhere: bool = False
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        who = "any" if self.actors is None else ", ".join(self.actors)
        return f"policy at {self.location}: {who} may {', '.join(self.actions)}" + (
            " anywhere" if self.anywhere else "")


@dataclass(frozen=True)
class DataDecl:
    """``data NAME = (features) -> target [secret] [observed by CLIENT]``."""

    name: str
    features: tuple[Fraction, ...]
    target: Fraction
    secret: bool = False
    owner: str | None = None
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        out = f"data {self.name} = {vec_text(self.features)} -> {num_text(self.target)}"
        if self.secret:
            out += " secret"
        if self.owner is not None:
            out += f" observed by {self.owner}"
        return out


@dataclass(frozen=True)
class PartDecl:
    """``client: {p1, p2}`` — the client's part of the initial partition."""

    client: str
    points: tuple[Named, ...]
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"{self.client}: {{{', '.join(p.name for p in self.points)}}}"


@dataclass(frozen=True)
class ModelDecl:
    """``model LOSS rate η initial (w…)``."""

    loss: str
    rate: Fraction
    initial: tuple[Fraction, ...]
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"model {self.loss} rate {num_text(self.rate)} initial {vec_text(self.initial)}"


@dataclass(frozen=True)
class MechanismDecl:
    """A noise mechanism: ``none``, ``rr`` (grid, and r or ε), ``geometric`` (r, lo, hi, step),
    ``laplace`` (ε, lo, hi, step), ``gaussian`` (q, lo, hi, step; or σ with ``clip`` C or lo, hi, and
    step), ``additive`` (a table noise value -> probability, added to each coordinate)."""

    kind: Literal["none", "rr", "geometric", "laplace", "gaussian", "additive"]
    base: Fraction | None = None
    grid: tuple[Fraction, ...] = ()
    lo: Fraction | None = None
    hi: Fraction | None = None
    step: Fraction | None = None
    table: tuple[tuple[Fraction, Fraction], ...] = ()
    epsilon: EpsSpec | None = None
    sigma: Fraction | None = None
    clip: Fraction | None = None
    clip_range: bool = False
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        if self.kind == "none":
            return "none"
        if self.kind == "additive":
            return "additive {" + ", ".join(f"{num_text(z)}: {num_text(p)}" for z, p in self.table) + "}"
        step = f" step {num_text(self.step)}" if self.step is not None else ""
        if self.kind == "rr":
            grid = f"rr grid {{{', '.join(num_text(g) for g in self.grid)}}}"
            clip = " clip" if self.clip_range else ""
            if self.epsilon is not None:
                return f"{grid} epsilon {self.epsilon.text()}{clip}"
            return f"{grid} r {num_text(self.base)}{clip}"  # type: ignore[arg-type]
        if self.kind == "laplace":
            assert self.epsilon is not None and self.lo is not None and self.hi is not None
            lo, hi = num_text(self.lo), num_text(self.hi)
            return f"laplace epsilon {self.epsilon.text()} range {lo} .. {hi}{step}"
        if self.kind == "gaussian" and self.sigma is not None:
            where = (f" clip {num_text(self.clip)}" if self.clip is not None
                     else f" range {num_text(self.lo)} .. {num_text(self.hi)}")  # type: ignore[arg-type]
            return f"gaussian sigma {num_text(self.sigma)}{where}{step}"
        letter = "r" if self.kind == "geometric" else "q"
        clip = " clip" if self.clip_range else ""
        return (f"{self.kind} {letter} {num_text(self.base)} range {num_text(self.lo)} .. "  # type: ignore[arg-type]
                f"{num_text(self.hi)}{step}{clip}")  # type: ignore[arg-type]


@dataclass(frozen=True)
class RunDecl:
    """``run noise_multiplier Z, rounds T, sampling poisson rate Q | poisson|fixed|shuffle K of N | all,
    clip C, delta D``: the run the finite model abstracts (a run configuration for the accountant; it
    changes nothing of the model's semantics). Every part is optional; ``parts_pos`` keeps each
    part's position."""

    noise_multiplier: Fraction | None = None
    rounds: int | None = None
    sampling: str | None = None
    rate: Fraction | None = None
    per_round: int | None = None
    clients: int | None = None
    clip: Fraction | None = None
    delta: Fraction | None = None
    pos: Position = field(default=NOPOS, compare=False, repr=False)
    parts_pos: tuple[tuple[str, Position], ...] = field(default=(), compare=False, repr=False)

    def text(self) -> str:
        parts = []
        if self.noise_multiplier is not None:
            parts.append(f"noise_multiplier {num_text(self.noise_multiplier)}")
        if self.rounds is not None:
            parts.append(f"rounds {self.rounds}")
        if self.sampling is not None:
            rate = ""
            if self.per_round is not None and self.clients is not None:
                rate = f" {self.per_round} of {self.clients}"
            elif self.rate is not None:
                rate = f" rate {num_text(self.rate)}"
            parts.append(f"sampling {self.sampling}{rate}")
        if self.clip is not None:
            parts.append(f"clip {num_text(self.clip)}")
        if self.delta is not None:
            parts.append(f"delta {num_text(self.delta)}")
        return "run " + ", ".join(parts)


@dataclass(frozen=True)
class NoiseDecl:
    """``noise [for c1, c2:] MECHANISM [on update|gradient]`` (``clients=None``: every client)."""

    clients: tuple[str, ...] | None
    mechanism: MechanismDecl
    target: str | None = None
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        out = "noise "
        if self.clients is not None:
            out += f"for {', '.join(self.clients)}: "
        out += self.mechanism.text()
        if self.target is not None:
            out += f" on {self.target}"
        return out


@dataclass(frozen=True)
class ProtocolDecl:
    """``protocol published|fedavg_rounds [traces full|drop]``."""

    variant: str
    traces: str | None = None
    aggregate: str | None = None
    aggregate_at: int | None = None
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        agg = ""
        if self.aggregate is not None:
            agg = f" aggregate {self.aggregate}" + (f" {self.aggregate_at}" if self.aggregate_at is not None
                                                   else "")
        return f"protocol {self.variant}{agg}" + (f" traces {self.traces}" if self.traces else "")


@dataclass(frozen=True)
class BoundDecl:
    """``rounds N`` or ``events N``."""

    kind: str
    value: int
    pos: Position = field(default=NOPOS, compare=False, repr=False)


@dataclass(frozen=True)
class Change:
    """One change of a neighbouring dataset: ``replace X with Y``, ``remove X``, ``add Y``."""

    kind: Literal["replace", "remove", "add"]
    old: str | None
    new: str | None
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        if self.kind == "replace":
            return f"replace {self.old} with {self.new}"
        if self.kind == "remove":
            return f"remove {self.old}"
        return f"add {self.new}"


@dataclass(frozen=True)
class NeighbourDecl:
    """``neighbour NAME: change, …`` — a dataset D1 next to the scenario's dataset D0 ([IIIf-FL]
    III-C, ``D0 ◇1 D1``)."""

    name: str
    changes: tuple[Change, ...]
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"neighbour {self.name}: " + ", ".join(c.text() for c in self.changes)


#: The observable of the reports the attacker copied in the current round (a time-varying topology's
#: ``eavesdrop`` step; :class:`flmodel.scenario_build.ScenarioSystem`): an attacker that observes it
#: copies every report whose route crosses it.
COPIED = "copied"


@dataclass(frozen=True)
class AttackerDecl:
    """``attacker NAME [at LOCATION | on A -- B] observes o1, o2`` — who the attacker is (an insider
    actor, an eavesdropper placed at a location or one tapping the link ``link``) and which observables
    it sees."""

    name: str
    location: str | None
    observes: tuple[Named, ...]
    pos: Position = field(default=NOPOS, compare=False, repr=False)
    link: Link | None = None

    def text(self) -> str:
        at = f" at {self.location}" if self.location else f" on {self.link.text()}" if self.link else ""
        return f"attacker {self.name}{at} observes {', '.join(o.name for o in self.observes)}"


@dataclass(frozen=True)
class RouteDecl:
    """``route c: a -> b -> g``: the locations client ``c``'s report travels through, from its own to
    the server's (instead of the shortest path of up links)."""

    client: str
    path: tuple[str, ...]
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        return f"route {self.client}: {' -> '.join(self.path)}"


#: The attributes an ``attack_step`` statement may declare, in their printed order.
STEP_ATTRIBUTES = ("cost", "probability", "time")


@dataclass(frozen=True)
class StepDecl:
    """``attack_step RULE [by ACTOR] [cost C] [probability P] [time T]``: the attributes of the steps of
    ``RULE`` by ``ACTOR`` in attack trees (``actor=None``: the rule's default for every actor); an
    attribute left ``None`` is not declared. ``actor_pos`` and ``value_pos`` (attribute -> position of
    its value) locate the parts for messages."""

    rule: str
    actor: str | None
    cost: Fraction | None = None
    probability: Fraction | None = None
    time: Fraction | None = None
    pos: Position = field(default=NOPOS, compare=False, repr=False)
    actor_pos: Position = field(default=NOPOS, compare=False, repr=False)
    value_pos: tuple[tuple[str, Position], ...] = field(default=(), compare=False, repr=False)

    def values(self) -> dict[str, Fraction]:
        """The declared attributes, by name."""
        return {name: v for name in STEP_ATTRIBUTES if (v := getattr(self, name)) is not None}

    def text(self) -> str:
        by = f" by {self.actor}" if self.actor is not None else ""
        values = "".join(f" {k} {num_text(v)}" for k, v in self.values().items())
        return f"attack_step {self.rule}{by}{values}"


@dataclass(frozen=True)
class DefenceDecl:
    """``defence NAME: remove [RULE] [by ACTOR] [at LOCATION] [budget C]``: the steps a defence removes
    (each part ``None`` when not given: any); or ``defence NAME: remove link A -- B, … [budget C]``: the
    declared links it removes (``links``; the scenario without them is :meth:`Scenario.without_links`).
    ``budget``: the cost up to which the defence is meant to block every attack (``None``: any cost).
    ``parts_pos`` (``rule``/``actor``/``location``/``budget`` -> position) locates the parts for
    messages."""

    name: str
    rule: str | None = None
    actor: str | None = None
    location: str | None = None
    pos: Position = field(default=NOPOS, compare=False, repr=False)
    parts_pos: tuple[tuple[str, Position], ...] = field(default=(), compare=False, repr=False)
    links: tuple[Link, ...] = ()
    budget: Fraction | None = None

    def text(self) -> str:
        out = f"defence {self.name}: remove"
        if self.links:
            out += " link " + ", ".join(lk.text() for lk in self.links)
        if self.rule is not None:
            out += f" {self.rule}"
        if self.actor is not None:
            out += f" by {self.actor}"
        if self.location is not None:
            out += f" at {self.location}"
        if self.budget is not None:
            out += f" budget {num_text(self.budget)}"
        return out


@dataclass(frozen=True)
class Scenario:
    """A parsed (and, from :func:`flmodel.scenario.parse_scenario`, semantically checked) scenario.

    The components follow [IIIf-FL] III-B: ``gra`` (``locations``, ``links``), ``aloc`` (``server``,
    ``clients``, ``actors``), ``poli`` (``policies``, ``policies_mode``), ``dataset``/``partition``
    (``data``, ``dataset``, ``partition``), the learning task (``model``), the noise mechanism
    (``noise``), the protocol variant and bounds, the neighbouring datasets of III-C, the attacker and
    the named properties; ``steps`` and ``defences`` annotate its attack trees (attributes of steps,
    removals that cut attacks) and change nothing of its semantics.

    The scenario is always the expanded one: constants, indexed names and families
    (:mod:`flmodel.scenario_family`) are resolved when it is read, ``sat[3]`` is the name ``sat3``.
    ``constants`` records the integer constants it was expanded with (the ``const`` defaults, or the
    values defined from outside); they take no part in equality and :meth:`to_text` does not print
    them, since the printed scenario no longer refers to them. ``routed`` keeps the time-varying
    topology's semantics (reports travel along routes of up links) for a scenario derived from a
    networked one (:meth:`without_links`) that no longer has a statement asking for it; the language has
    no syntax for it, so :meth:`to_text` does not show it."""

    name: str
    locations: tuple[Named, ...] = ()
    links: tuple[Link, ...] = ()
    server: Placed | None = None
    clients: tuple[Placed, ...] = ()
    actors: tuple[Placed, ...] = ()
    policies: tuple[PolicyDecl, ...] = ()
    policies_mode: str | None = None
    data: tuple[DataDecl, ...] = ()
    dataset: tuple[Named, ...] | None = None
    partition: tuple[PartDecl, ...] | None = None
    model: ModelDecl | None = None
    noise: tuple[NoiseDecl, ...] = ()
    protocol: ProtocolDecl | None = None
    bounds: tuple[BoundDecl, ...] = ()
    neighbours: tuple[NeighbourDecl, ...] = ()
    attacker: AttackerDecl | None = None
    properties: tuple[PropertyDecl, ...] = ()
    contacts: tuple[ContactDecl, ...] = ()
    losses: tuple[LossDecl, ...] = ()
    failures: tuple[Link, ...] = ()
    steps: tuple[StepDecl, ...] = ()
    defences: tuple[DefenceDecl, ...] = ()
    routes: tuple[RouteDecl, ...] = ()
    run: RunDecl | None = None
    source: str = field(default="<scenario>", compare=False)
    constants: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    routed: bool = False

    # ------------------------------------------------------------------ printing
    def to_text(self) -> str:
        """The scenario in the concrete syntax (canonical layout; parsing it gives back an equal
        scenario): the expanded, hand-written form, one name per family member, no constants."""
        name = self.name.replace("\\", "\\\\").replace('"', '\\"')
        lines = [f'scenario "{name}"']
        if self.locations:
            lines.append("locations " + ", ".join(n.name for n in self.locations))
        if self.links:
            lines.append("links " + ", ".join(lk.text() for lk in self.links))
        lines.extend(c.text() for c in self.contacts)
        lines.extend(lo.text() for lo in self.losses)
        if self.failures:
            lines.append("failure " + ", ".join(lk.text() for lk in self.failures))
        lines.extend(r.text() for r in self.routes)
        if self.server is not None:
            lines.append(f"server {self.server.text()}")
        if self.clients:
            lines.append("clients " + ", ".join(c.text() for c in self.clients))
        if self.actors:
            lines.append("actor " + ", ".join(a.text() for a in self.actors))
        if self.policies_mode is not None:
            lines.append(f"policies {self.policies_mode}")
        lines.extend(p.text() for p in self.policies)
        lines.extend(d.text() for d in self.data)
        if self.dataset is not None:
            lines.append(("dataset " + ", ".join(n.name for n in self.dataset)).rstrip())
        if self.partition is not None and self.partition:
            lines.append("partition " + ", ".join(p.text() for p in self.partition))
        if self.model is not None:
            lines.append(self.model.text())
        lines.extend(n.text() for n in self.noise)
        if self.run is not None:
            lines.append(self.run.text())
        if self.protocol is not None:
            lines.append(self.protocol.text())
        if self.bounds:
            lines.append("bounds " + ", ".join(f"{b.kind} {b.value}" for b in self.bounds))
        lines.extend(n.text() for n in self.neighbours)
        if self.attacker is not None:
            lines.append(self.attacker.text())
        lines.extend(d.text() for d in self.steps)
        lines.extend(d.text() for d in self.defences)
        lines.extend(p.text() for p in self.properties)
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ views
    @property
    def networked(self) -> bool:
        """Whether the topology varies (contact windows, losses, failures), reports take given routes,
        the attacker observes the reports it copies (:data:`COPIED`) or a round aggregates before every
        client reported: then reports travel along routes of up links (:mod:`flmodel.network`);
        otherwise links are the static ``gra`` no rule reads."""
        agg = self.protocol.aggregate if self.protocol is not None else None
        copies = self.attacker is not None and any(o.name == COPIED for o in self.attacker.observes)
        return self.routed or copies or bool(self.contacts or self.losses or self.failures or self.routes) \
            or agg not in (None, "all")

    @property
    def client_names(self) -> tuple[str, ...]:
        return tuple(c.actor for c in self.clients)

    def step_attributes(self) -> dict[tuple[str, str | None], dict[str, Fraction]]:
        """The ``attack_step`` declarations as plain data: ``(rule, actor)`` (``actor`` ``None`` for a
        rule's default) -> the declared attributes by name (the table of
        ``checker.attack_trees.attributes``)."""
        return {(d.rule, d.actor): d.values() for d in self.steps}

    def without_links(self, links: tuple[Link, ...]) -> Scenario:
        """The scenario with the directed edges of ``links`` removed (``a -- b`` both directions, ``a -> b``
        one) from its static links, contacts, losses and failures: a statement that keeps one direction of
        an undirected link keeps it as ``->``, one that keeps none is dropped. Reports are then routed
        without those edges (:mod:`flmodel.network`, kept for a networked scenario even when no contact,
        loss or failure statement remains: :attr:`routed`); nothing else changes."""
        removed = {e for lk in links for e in _edges(lk)}

        def kept(lk: Link) -> Link | None:
            rest = [e for e in _edges(lk) if e not in removed]
            if len(rest) == len(_edges(lk)):
                return lk
            return Link(rest[0][0], rest[0][1], True, lk.pos) if rest else None

        def keep_links(items: tuple[Link, ...]) -> tuple[Link, ...]:
            return tuple(k for lk in items if (k := kept(lk)) is not None)

        contacts = tuple(replace(c, link=k) for c in self.contacts if (k := kept(c.link)) is not None)
        losses = tuple(replace(lo, link=k) for lo in self.losses if (k := kept(lo.link)) is not None)
        return replace(self, links=keep_links(self.links), contacts=contacts, losses=losses,
                       failures=keep_links(self.failures), routed=self.networked)

    def defence(self, name: str) -> DefenceDecl:
        """The defence called ``name`` (``KeyError`` if none)."""
        for d in self.defences:
            if d.name == name:
                return d
        raise KeyError(name)

    def property(self, name: str) -> PropertyDecl:
        """The property called ``name`` (``KeyError`` if none)."""
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    def bound(self, kind: str) -> int | None:
        """The value of the bound ``kind`` (``rounds``, ``events``), ``None`` when not given."""
        return next((b.value for b in self.bounds if b.kind == kind), None)
