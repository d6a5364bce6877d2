"""From a checked :class:`~flmodel.scenario_ast.Scenario` to the bounded ``→FL`` transition system.

The construction ([IIIf-FL] III-B):

* ``gra`` = the declared locations and links (``a -- b`` gives both directed edges);
* ``aloc`` = the placements of the server, the clients, the other actors and the attacker (an
  eavesdropper declared only by ``attacker NAME at L`` becomes an actor at ``L``);
* ``ready = ∅``; ``curmodpar`` = the model's initial parameter; ``gradient c = curmodpar`` for every
  client; ``partition`` = the declared initial partition (then the data are already deployed:
  ``partitioned=True``) or empty parts (``put_part`` deploys them); ``dataset`` = the declared dataset;
* ``poli``: the explicit ``policy`` statements (a table location -> policies), else
  :meth:`Poli.fl_default` (``policies default``), :meth:`Poli.permissive` (``policies permissive``: with
  it the gated relation equals the published one) or the default table with enforcement switched off
  (``policies ignored``);
* rules ``published`` (the literal relation) or ``fedavg_rounds``, the loss, rate ``η``, the noise
  mechanism and what it perturbs (when clients have different mechanisms, each client's report draws
  from its own: ``RuleContext.per_client``), bounds and the trace mode (default ``full``
  for ``published`` — the literal trace sets — and ``drop`` for ``fedavg_rounds``).

:class:`ScenarioSystem` wraps the :class:`~flmodel.system.FLSystem`: same states, successors and
probabilities; its observables are the FLSystem's with ``:`` replaced by ``_`` (``gradient_sat1``,
``ready_sat1``, ``enabled_eval_round``), because the property language's names cannot contain ``:``,
plus ``secret_in_dataset`` (some secret point is in the dataset) and per secret point ``x``
``holds_x`` (the name of the client whose part contains ``x``, ``"none"`` if none). A scenario with a
time-varying topology (:mod:`flmodel.network`) also offers ``lost`` (the clients whose report of this
round was lost), ``lost_c``, ``step`` (the steps taken, saturated at the last step window) and, per
directed edge ``a -> b`` of the initial ``gra``, ``link_a_b`` (up in the next step); with an attacker,
``copied`` (the reports it copied in the current round by its ``eavesdrop`` step: pairs of client and
report) and, when it observes reports, ``seen`` and ``seen_c`` (the clients whose report it ever copied).

The functions of this module are the way from a :class:`~flmodel.scenario_ast.Scenario` to its
semantics: :func:`build_system` (the wrapped system), :func:`build_fl_system` (the unwrapped
``FLSystem``), :func:`neighbour_dataset`, :func:`neighbour_system` and :func:`universe`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from flcheck_spec.vocab import Position

from flmodel.data import DataPoint, Dataset
from flmodel.errors import Diagnostic, ModelError
from flmodel.fast import FastFL, batch_view
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import EMPTY_PROTOCOL, Gra, Igraph, Infrastructure, Poli, Policy
from flmodel.learning import HingeLoss, Loss, SquaredLoss
from flmodel.network import NetStatus, Network, Window, gra_status
from flmodel.network_rules import networked
from flmodel.noise import (
    Mechanism,
    ScalarDistribution,
    discrete_gaussian,
    geometric,
    randomized_response,
    rational_exp,
)
from flmodel.rules import RULE_SETS, RuleSet
from flmodel.scenario_ast import COPIED, Link, MechanismDecl, Scenario
from flmodel.scenario_properties import EpsSpec
from flmodel.system import Bounds, FLState, FLSystem
from flmodel.view import FLView

__all__ = ["AdditiveNoise", "ScenarioSystem", "build_fl_system", "build_system", "data_points",
           "initial_dataset", "mechanism_of", "neighbour_dataset", "neighbour_system", "universe"]


@dataclass(frozen=True)
class AdditiveNoise(Mechanism):
    """Additive noise with a finite table: ``M(u) = u + Z`` with ``P(Z = z) = table[z]`` per coordinate
    (the table's probabilities are positive and sum to 1; checked by the scenario checks)."""

    table: tuple[tuple[Fraction, Fraction], ...]
    name: str = "additive"

    def scalar(self, u: Fraction) -> ScalarDistribution:
        return tuple((u + z, p) for z, p in self.table)

    def describe(self) -> str:
        return "additive{" + ", ".join(f"{z}: {p}" for z, p in self.table) + "}"


def loss_of(name: str) -> Loss:
    """``squared`` (with intercept), ``squared_nobias``, ``hinge``."""
    if name == "squared":
        return SquaredLoss()
    if name == "squared_nobias":
        return SquaredLoss(bias=False)
    if name == "hinge":
        return HingeLoss()
    raise ModelError(f"unknown loss {name!r}")


def _base(eps: EpsSpec, scale: Fraction = Fraction(1)) -> Fraction:
    """``e^{−ε·scale}`` exactly when ``ε = ln(v)`` and ``scale = 1`` (then ``1/v``), else its rational
    approximation (:func:`flmodel.noise.rational_exp`; the mechanism realises ``−ln`` of it)."""
    if eps.log and scale == 1:
        return 1 / eps.value
    return rational_exp(-eps.as_float() * float(scale))


def mechanism_of(m: MechanismDecl) -> Mechanism | None:
    """The flmodel mechanism of a declaration (``None`` for ``none``: the published ``get_grad``).
    A mechanism of a scenario never clamps: a reported value outside its range is an error at the noise
    statement; the forms that name ε or σ are strict (a value between grid points is an error too),
    the base forms (``r R``, ``q Q``) round it to the nearest grid point (:mod:`flmodel.noise`).

    ``rr grid {…} epsilon E``: base ``r = e^{−E}`` (ratio of keeping to each other point ``e^E``);
    ``laplace epsilon E range A .. B step H``: the geometric mechanism with ``r = e^{−E·H/(B−A)}``, so
    that any two values of the range are E-indistinguishable; ``gaussian sigma S clip C step H``: the
    discrete Gaussian [DiscGauss] with ``q = e^{−H²/(2S²)}`` on the lattice ``−C, −C+H, …, C`` (each value
    clipped into it first; ``range A .. B`` instead: no clipping)."""
    if m.kind == "none":
        return None
    where = m.pos
    if m.kind == "rr":
        if m.base is not None:  # the base form rounds a value between grid points (documented)
            return randomized_response(m.grid, m.base, bounded=True, clip=m.clip_range, where=where)
        return randomized_response(m.grid, _base(m.epsilon), strict=True,  # type: ignore[arg-type]
                                   clip=m.clip_range, where=where)
    step = m.step if m.step is not None else Fraction(1)
    if m.kind == "geometric":
        return geometric(m.base, m.lo, m.hi, step, bounded=True, clip=m.clip_range,  # type: ignore[arg-type]
                         where=where)
    if m.kind == "laplace":
        r = _base(m.epsilon, step / (m.hi - m.lo))  # type: ignore[arg-type,operator]
        return geometric(r, m.lo, m.hi, step, strict=True, where=where)  # type: ignore[arg-type]
    if m.kind == "gaussian" and m.sigma is not None:
        lo, hi = (-m.clip, m.clip) if m.clip is not None else (m.lo, m.hi)
        q = rational_exp(-float(step * step / (2 * m.sigma * m.sigma)))
        return discrete_gaussian(q, lo, hi, step, strict=True, clip=m.clip is not None, where=where)  # type: ignore[arg-type]
    if m.kind == "gaussian":
        return discrete_gaussian(m.base, m.lo, m.hi, step, bounded=True, clip=m.clip_range,  # type: ignore[arg-type]
                                 where=where)
    if m.kind == "additive":
        return AdditiveNoise(tuple(m.table))
    raise ModelError(f"unknown mechanism {m.kind!r}")


def data_points(s: Scenario) -> dict[str, DataPoint]:
    """Every declared data point (also those only used by neighbours), by name."""
    return {d.name: DataPoint(d.name, tuple(d.features), d.target) for d in s.data}


def universe(s: Scenario) -> list[DataPoint]:
    """Every declared data point (the dataset's and those only neighbours use), for neighbour
    generation (``flmodel.data.neighbours``)."""
    return list(data_points(s).values())


def initial_dataset(s: Scenario) -> Dataset:
    """``dataset G`` of the initial state."""
    pts = data_points(s)
    names = [n.name for n in s.dataset] if s.dataset is not None else list(pts)
    return frozenset(pts[n] for n in names)


def owners(s: Scenario) -> dict[str, str]:
    """Data point name -> client holding it: the initial partition, else the ``observed by`` clause;
    a replaced point's replacement inherits the owner of the point it replaces."""
    out: dict[str, str] = {d.name: d.owner for d in s.data if d.owner is not None}
    if s.partition is not None:
        for part in s.partition:
            for n in part.points:
                out[n.name] = part.client
    for nb in s.neighbours:
        for ch in nb.changes:
            if ch.kind == "replace" and ch.new is not None and ch.old is not None \
                    and ch.new not in out and ch.old in out:
                out[ch.new] = out[ch.old]
    return out


def neighbour_dataset(s: Scenario, name: str) -> Dataset:
    """``D1`` of ``neighbour name``: the scenario's dataset with the changes applied ([IIIf-FL] III-C)."""
    for nb in s.neighbours:
        if nb.name == name:
            pts = data_points(s)
            d = set(initial_dataset(s))
            for ch in nb.changes:
                if ch.old is not None:
                    d.discard(pts[ch.old])
                if ch.new is not None:
                    d.add(pts[ch.new])
            return frozenset(d)
    raise KeyError(f"unknown neighbour {name!r}; declared: {[n.name for n in s.neighbours]}")


def _poli(s: Scenario, g: Igraph) -> tuple[Poli, bool]:
    if s.policies:
        table: dict[str, list[Policy]] = {}
        for p in s.policies:
            table.setdefault(p.location, []).append(
                Policy(None if p.actors is None else frozenset(p.actors), frozenset(p.actions),
                       not p.anywhere))
        return Poli(FrozenMap({k: tuple(v) for k, v in table.items()})), True
    mode = s.policies_mode or "default"
    if mode == "permissive":
        return Poli.permissive(g.gra.locations), True
    return Poli.fl_default(g), mode != "ignored"


def build_fl_system(s: Scenario) -> FLSystem:
    """The :class:`FLSystem` of a checked scenario (see the module docstring)."""
    assert s.server is not None and s.model is not None
    clients = tuple(c.actor for c in s.clients)
    aloc = {p.actor: p.location for p in (s.server, *s.clients, *s.actors)}
    if s.attacker is not None and s.attacker.location is not None and s.attacker.name not in aloc:
        aloc[s.attacker.name] = s.attacker.location
    net = network_of(s) if s.networked else None
    gra = Gra(frozenset(n.name for n in s.locations), scenario_edges(s), None if net is None else NetStatus())
    pts = data_points(s)
    data = initial_dataset(s)
    w0 = tuple(Fraction(x) for x in s.model.initial)
    if s.partition is not None:
        parts: dict[str, frozenset[DataPoint]] = {c: frozenset() for c in clients}
        for part in s.partition:
            parts[part.client] = frozenset(pts[n.name] for n in part.points)
        partition = FrozenMap(parts)
    else:
        partition = FrozenMap({c: frozenset() for c in clients})
    g = Igraph(gra, FrozenMap(aloc), s.server.actor, frozenset(clients), frozenset(),
               FrozenMap({c: w0 for c in clients}), w0, partition, data)
    poli, enforce = _poli(s, g)
    infra = Infrastructure(g, EMPTY_PROTOCOL, poli)
    variant = s.protocol.variant if s.protocol is not None else "published"
    traces = (s.protocol.traces if s.protocol is not None else None) or (
        "full" if variant == "published" else "drop")
    mechs, targets = client_noise(s)
    distinct = set(mechs.values())
    rules: RuleSet | str = variant
    per_client = None
    if len(distinct) <= 1 and len(set(targets.values())) <= 1:
        mech = next(iter(distinct)) if distinct else None
        target = next(iter(targets.values())) if targets else "update"
    else:  # clients with different mechanisms: each client's report draws from its own
        mech, target = None, "update"
        per_client = FrozenMap({c: (mechs[c], targets[c]) for c in clients})
    if net is not None:
        rules = networked(RULE_SETS[rules] if isinstance(rules, str) else rules, net)
    own = owners(s)

    def owner(p: DataPoint) -> str:
        return own.get(p.name, "")

    return FLSystem(infra, rules=rules, loss=loss_of(s.model.loss), eta=s.model.rate, mechanism=mech,
                    noise_target=target, per_client=per_client,  # type: ignore[arg-type]
                    bounds=Bounds(s.bound("rounds"), s.bound("events")), trace_mode=traces,  # type: ignore[arg-type]
                    enforce_policies=enforce, owner=owner if s.partition is not None else None,
                    partitioned=s.partition is not None)


def link_edges(lk: Link) -> tuple[tuple[str, str], ...]:
    """The directed edges of a link (``a -- b`` gives both directions)."""
    return ((lk.a, lk.b),) if lk.directed else ((lk.a, lk.b), (lk.b, lk.a))


def scenario_edges(s: Scenario) -> frozenset[tuple[str, str]]:
    """The directed edges of the scenario's links and contacts (every link of a contact plan)."""
    return frozenset(e for lk in (*s.links, *(c.link for c in s.contacts)) for e in link_edges(lk))


def network_of(s: Scenario) -> Network:
    """The :class:`~flmodel.network.Network` of a scenario's contact, loss, failure and route
    statements, its aggregation rule and its attacker. An attacker that observes ``copied`` copies
    the reports whose route crosses it in some configuration of the network
    (:meth:`~flmodel.network.Network.may_cross`; the others never reach it)."""
    windows = {e: (Window(c.unit, c.windows),) for c in s.contacts for e in link_edges(c.link)}
    losses = {e: (lo.probability, lo.retries) for lo in s.losses for e in link_edges(lo.link)}
    failures = tuple(frozenset(link_edges(lk)) for lk in s.failures)
    prot = s.protocol
    agg = (prot.aggregate if prot is not None else None) or "all"
    at = (prot.aggregate_at if prot is not None else None) or 0
    attacker, tapped, tap = attacker_taps(s)
    net = Network(windows, losses, failures, routes_of(s), agg, at, attacker, tapped, tap)  # type: ignore[arg-type]
    copies = s.attacker is not None and any(o.name == COPIED for o in s.attacker.observes)
    if copies and tapped and s.server is not None:
        placed = {c.actor: c.location for c in s.clients if c.actor in tapped}  # tapped are clients
        gra = Gra(frozenset(n.name for n in s.locations), scenario_edges(s), NetStatus())
        net = replace(net, tapped=net.may_cross(gra, placed, s.server.location))
    return net


def routes_of(s: Scenario) -> dict[str, tuple[str, ...]]:
    """The given routes, per client."""
    return {r.client: r.path for r in s.routes}


def attacker_location(s: Scenario) -> str | None:
    """Where the attacker is: its ``at`` location, else the location of the actor it is (``None`` for
    an attacker on a link)."""
    a = s.attacker
    if a is None or a.link is not None:
        return None
    if a.location is not None:
        return a.location
    placed = {p.actor: p.location for p in (*((s.server,) if s.server else ()), *s.clients, *s.actors)}
    return placed.get(a.name)


def attacker_taps(s: Scenario) -> tuple[tuple[str, str] | None, frozenset[str], frozenset[tuple[str, str]]]:
    """The attacker and where it is (a location, or ``a--b`` for a link), the clients whose reports it
    copies (those it observes as ``gradient_c``; every client when it observes ``copied``) and the
    directed edges of the link it taps (empty for an attacker at a location)."""
    a = s.attacker
    if a is None:
        return None, frozenset(), frozenset()
    tap = frozenset(link_edges(a.link)) if a.link is not None else frozenset()
    where = attacker_location(s) if a.link is None else f"{a.link.a}--{a.link.b}"
    if where is None:
        return None, frozenset(), frozenset()
    clients = set(s.client_names)
    observed = {o.name for o in a.observes}
    reports = {n[len("gradient_"):] for n in observed if n.startswith("gradient_")} & clients
    tapped = frozenset(clients if COPIED in observed else reports)
    return (a.name, where), tapped, tap


def client_noise(s: Scenario) -> tuple[dict[str, Mechanism | None], dict[str, str]]:
    """Per client: its mechanism (``None``: the published noise-free ``get_grad``) and what it
    perturbs (``update`` or ``gradient``). ``noise MECH`` applies to every client, ``noise for c: MECH``
    to the clients named (later statements refine earlier ones); clients never named get none."""
    clients = [c.actor for c in s.clients]
    mechs: dict[str, Mechanism | None] = {c: None for c in clients}
    targets: dict[str, str] = {c: "update" for c in clients}
    for nd in s.noise:
        m = mechanism_of(nd.mechanism)
        for c in nd.clients if nd.clients is not None else clients:
            mechs[c] = m
            targets[c] = nd.target or "update"
    return mechs, targets


class ScenarioSystem:
    """The transition system of a scenario (``checker.mc.ts.TransitionSystem``): the FLSystem with
    property-language observable names (see the module docstring). ``fl`` is the wrapped FLSystem."""

    def __init__(self, fl: FLView, secrets: Sequence[DataPoint] = (), scenario: Scenario | None = None):
        self.fl = fl
        self.scenario = scenario
        self.secrets = tuple(secrets)
        self._alias: dict[str, str] = {}
        names: list[str] = []
        for n in fl.observable_names():
            alias = n.replace(":", "_")
            self._alias[alias] = n
            self._alias[n] = n
            names.append(alias)
        names.append("secret_in_dataset")
        names.extend(f"holds_{p.name}" for p in self.secrets)
        self._links: dict[str, tuple[str, str]] = {}
        self._seen: dict[str, str] = {}
        self.network = network_of(scenario) if scenario is not None and scenario.networked else None
        if self.network is not None and scenario is not None:
            names += ["lost", "step", *(f"lost_{c}" for c in fl.clients)]
            if self.network.attacker is not None:
                names.append(COPIED)
            # seen_c for every report the attacker is declared to copy (false for those whose route
            # never crosses it: the network does not mark them, Network.may_cross)
            declared = attacker_taps(scenario)[1] if self.network.attacker is not None else frozenset()
            self._seen = {f"seen_{c}": c for c in sorted(declared)}
            if declared:
                names += ["seen", *self._seen]
            for a, b in sorted(fl.initial.igra.gra.edges):
                self._links[f"link_{a}_{b}"] = (a, b)
            names += list(self._links)
        self._names = tuple(names)

    # TransitionSystem protocol
    def initial_states(self) -> tuple[FLState, ...]:
        return self.fl.initial_states()

    def successors(self, state: FLState) -> list[Any]:
        return self.fl.successors(state)

    def observable_names(self) -> Sequence[str]:
        return self._names

    def batch_system(self) -> FastFL | str:
        """This system coded as integer rows for the checker's batch explorer, with this system's
        observables (:func:`flmodel.fast.batch_view`), or the reason it is not."""
        if type(self).successors is not ScenarioSystem.successors or \
                type(self).initial_states is not ScenarioSystem.initial_states:
            return "a system that changes the states or successors is not coded as integers"
        if self.network is not None:
            return "a time-varying topology is not coded as integers"
        return batch_view(self.fl, self)

    def observe(self, state: FLState, name: str) -> object:
        if name == "secret_in_dataset":
            return any(p in state.infra.igra.dataset for p in self.secrets)
        if name.startswith("holds_"):
            target = name[len("holds_"):]
            for p in self.secrets:
                if p.name == target:
                    g = state.infra.igra
                    for c in sorted(g.clients):
                        if p in g.part(c):
                            return c
                    return "none"
        if self.network is not None:
            gra = state.infra.igra.gra
            if name == "lost":
                return gra_status(gra).lost
            if name == "step":
                return gra_status(gra).clock
            if name.startswith("lost_") and name[5:] in self.fl.clients:
                return name[5:] in gra_status(gra).lost
            if name == "seen":
                return gra_status(gra).seen
            if name == COPIED:
                st = gra_status(gra)
                grads = state.infra.igra.gradient
                return frozenset((c, grads[c]) for c in st.crossed & st.seen)
            if name in self._seen:
                return self._seen[name] in gra_status(gra).seen
            if name in self._links:
                return self.network.edge_up(gra.edges, self._links[name], gra_status(gra))
        real = self._alias.get(name)
        if real is None:
            raise KeyError(f"unknown observable {name!r}; known: {', '.join(self._names)}")
        return self.fl.observe(state, real)

    def variable_reads(self, name: str) -> frozenset[str] | None:
        """The FL system's variables (:class:`flmodel.system.ActionClass`) the observable ``name``
        reads (the network's: :meth:`flmodel.network.Network.observable_reads`); ``None`` when unknown
        (``enabled``)."""
        if name == "secret_in_dataset":
            return frozenset({"dataset"})
        if name.startswith("holds_") and any(p.name == name[len("holds_"):] for p in self.secrets):
            return frozenset(f"partition:{c}" for c in self.fl.clients)
        if self.network is not None and name in self._names:
            reads = self.network.observable_reads(name, self.fl.clients, self._links.get(name))
            if reads is not None:
                return reads
        real = self._alias.get(name)
        return None if real is None else self.fl.variable_reads(real)

    # extras
    def with_dataset(self, data: Iterable[DataPoint]) -> ScenarioSystem:
        """The same system on another initial dataset (the partition follows the points' owners when
        the scenario has an initial partition; else ``put_part`` deploys it)."""
        return ScenarioSystem(self.fl.with_dataset(data), self.secrets, self.scenario)

    def describe(self) -> dict[str, object]:
        return self.fl.describe()

    @property
    def clients(self) -> tuple[str, ...]:
        return self.fl.clients


def build_system(s: Scenario) -> ScenarioSystem:
    """The :class:`ScenarioSystem` of a checked scenario."""
    try:
        fl = build_fl_system(s)
    except ModelError as exc:  # bad input the model finds (any other exception is a bug: exit 3)
        diags = [Diagnostic(Position(s.source, d.line, d.column), d.message) for d in exc.diagnostics]
        raise ModelError(diags) from None
    pts = data_points(s)
    secrets = [pts[d.name] for d in s.data if d.secret]
    return ScenarioSystem(fl, secrets, s)


def neighbour_system(s: Scenario, name: str) -> ScenarioSystem:
    """The system of the neighbouring dataset ``name`` (``D1``; ``D0`` is the scenario's)."""
    return build_system(s).with_dataset(neighbour_dataset(s, name))
