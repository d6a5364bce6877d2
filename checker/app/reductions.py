"""The state-space reductions of ``flcheck check``, derived from the scenario and the properties it
checks (the one place that joins the model's reduction hooks and the choice of reductions).

Dead values: a client's gradient is *dead* outside ``ready`` when the rules state the
footprint ``gradients="ready"`` (:attr:`flmodel.rules.Rule.gradients`; the model derives the clients,
:meth:`flmodel.system.FLSystem.dead_gradient_clients`); it may be reset to its initial value unless
something the check reads names it: a property formula, a property's ``observing`` list or the
attacker's observation that mentions ``gradient_c`` (or ``gradient`` without a client: then every
client is kept). Neighbour relations replace data points, which no gradient of an unready client
depends on. The reset is a functional bisimulation (module docstring of :mod:`flmodel.system`), so every
verdict, ε, δ(ε), advantage and probability of the check is unchanged; tests compare reduced and
unreduced checks on the bundled and on generated scenarios.

Symmetry: clients the model finds interchangeable (:func:`flmodel.symmetry.detect_symmetry`:
same data up to a renaming of points, same noise, same policies, links and location structure up to the
permutation and, with a time-varying topology, the same contact windows, losses, links that may fail,
and what their routes decide, with the attacker left in place) are permuted onto an orbit representative
(:class:`flmodel.symmetry.SymmetricSystem`). By the symmetry-reduction theorems ([ES96], [CEFJ96] for CTL;
[KNP06] for the reachability probabilities of an MDP, minimal, maximal and under the uniform scheduler) CTL
verdicts and probabilities of atoms the group leaves unchanged are exact on the quotient. So the quotient is
the explored structure only when every property that reads that structure is of a kind in
:data:`SYMMETRIC_KINDS` (``ctl`` without ``D{ε,δ}`` queries, ``probability``); the kinds of
:data:`OWN_EXPLORATION_KINDS` (privacy, advantage, ``D{ε,δ}``, budgets, cross-validation, attacks) never read
it: ``check`` decides them on their own explorations of the system without the symmetry
(:attr:`flmodel.symmetry.SymmetricSystem.base`). A client that a formula, an ``observing`` list or the
attacker's observation names (by its name, its location or a point of its part), and a client the attacker
is or sits with, is fixed: it leaves its class (:func:`symmetry_fixed`). Tests compare every verdict and
probability with the unreduced check.

Counter abstraction (:mod:`checker.app.counter`, [ES96], [EW05], [DM06]): on top of the symmetry, a
state stands for how many clients of each class are in each local state, and only one client per
occupied local state acts (the others' steps have the same distribution over orbits); stored as the
counters themselves where the footprints show that a class client's actions read and write only its own
local state and the global part. Refused (the orbit quotient explored, ``reason``) under the uniform
scheduler and attack trees (:func:`checker.app.counter.counter_refusal`).

Cone of influence ([COI], :mod:`checker.mc.cone`): the values no ``ctl`` or ``probability`` property
reads, directly or through what the rules compute them from (the footprints of
:meth:`flmodel.system.FLSystem.action_classes`), are forgotten: reset to their initial value in every
explored state (a functional bisimulation). Under the same condition on the property kinds as the
symmetry; the other kinds decide on the system that keeps every value.

Attack trees (``attack_tree reduced``): the symmetry and the cone also reduce the structure an attack
tree is built on when the property asks for it. Both are maps ``h`` onto the reduced structure with
``h(succ(s)) = succ(h(s))`` that keep the goal's atoms, so ``EF goal`` holds in the model iff it holds
in the reduced structure ([ES96]; a functional bisimulation): by [AT_EF] and [Completeness] a valid
attack tree exists in one iff in the other, and the verdict is exact. The tree itself is the reduced
structure's (validated there): its ways are the quotient's, each standing for the ways of the model
that rename interchangeable clients or differ in forgotten values; ``check`` replays every way on the
model (:class:`checker.app.lift.Replayer`). Without ``reduced`` an attack tree keeps the structure
whole, its ways and their count those of the model. The partial order is not used for attack trees.

Partial order and the privacy explorations: :class:`ObservationReducer`.

Example::

    >>> from flmodel.scenario import load_scenario
    >>> from checker.app.load import resolve_scenario_path
    >>> s = load_scenario(resolve_scenario_path("moniteo_swarm8"), defines={"N": 3})
    >>> from flmodel.scenario_build import build_system
    >>> reduced, applied = reduce_system(build_system(s), s)
    >>> applied.names, applied.details["dead_values"]["clients"]
    (['dead_values', 'cone', 'symmetry', 'counter'], ['sat1', 'sat2', 'sat3'])
    >>> applied.details["cone"]["forgotten"]
    ['curmodpar', 'gradient:sat1', 'gradient:sat2', 'gradient:sat3', 'last']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from checker.app.counter import CounterStates, CounterSystem, compact_refusal, counter_refusal
from checker.app.privacy_observation import Recorded, ReducedStep
from checker.app.scenario_formulas import parse_property
from checker.app.value_reductions import forgettable, reduce_values
from checker.mc import ctl_ast
from checker.mc.cone import cone_of_influence
from checker.mc.confluence import AmpleSystem, confluence_conflicts
from flmodel.data import DataPoint
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem
from flmodel.scenario_properties import FormulaProperty, observing_of
from flmodel.symmetry import SymmetricSystem, detect_symmetry
from flmodel.system import FLState
from flmodel.view import FLView

__all__ = ["OWN_EXPLORATION_KINDS", "REDUCTIONS", "SYMMETRIC_KINDS", "Applied", "ObservationReducer",
           "Reductions", "clients_named", "gradient_readers", "names_in", "reduce_system",
           "state_abstraction", "symmetry_fixed"]

#: The reductions ``flcheck check`` knows, in the order they are applied (``--no-<name>`` switches one
#: off with dashes for underscores; ``--no-reduce`` all).
REDUCTIONS = ("dead_values", "traces", "cone", "partial_order", "gradient_sum", "symmetry", "counter")


@dataclass(frozen=True)
class Reductions:
    """Which reductions to apply (all on by default; :meth:`none` for the plain exploration)."""

    dead_values: bool = True
    symmetry: bool = True
    partial_order: bool = True
    cone: bool = True
    gradient_sum: bool = True
    traces: bool = True
    counter: bool = True

    @classmethod
    def dead_values_only(cls, choice: Reductions) -> Reductions:
        """The reductions of a system that other explorations start from (the privacy pipeline's,
        ``D{ε,δ}``'s): its dead values reset when ``choice`` resets them, nothing else (each of those
        explorations applies its own reductions, :class:`ObservationReducer`)."""
        return replace(cls.none(), dead_values=choice.dead_values)

    @classmethod
    def none(cls) -> Reductions:
        """Every reduction off (``--no-reduce``)."""
        return cls(dead_values=False, symmetry=False, partial_order=False, cone=False, gradient_sum=False,
                   traces=False, counter=False)

    def enabled(self) -> list[str]:
        """The names of the reductions switched on."""
        return [n for n in REDUCTIONS if getattr(self, n)]


@dataclass
class Applied:
    """What was applied: ``names`` (in order) and per reduction the JSON-able ``details`` (applied or
    not, and why; what it covers)."""

    names: list[str] = field(default_factory=list)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    explorations: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, states: int | None = None) -> dict[str, Any]:
        """``{"applied", "states", "states_unreduced", <name>: details, "explorations"}``:
        ``states_unreduced`` is ``states`` when nothing was applied, else unknown (``None``: the check
        explores once); ``explorations`` lists the privacy pipeline's own explorations (per neighbouring
        pair: what the attacker observes, and per system its states and the reductions applied,
        :class:`ObservationReducer`)."""
        return {"applied": list(self.names), "states": states,
                "states_unreduced": states if not self.names else None,
                **{k: dict(v) for k, v in self.details.items()}, "explorations": list(self.explorations)}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*")


def _words(texts: Iterable[str]) -> set[str]:
    return {w for t in texts for w in _WORD.findall(t)}


def read_texts(scenario: Scenario) -> list[str]:
    """What the check reads by name: the property formulas, ``observing`` lists and the attacker's
    observation."""
    texts: list[str] = []
    for p in scenario.properties:
        if isinstance(p, FormulaProperty):
            texts.append(p.formula.text)
        texts.extend(o.name for o in observing_of(p))
    if scenario.attacker is not None:
        texts.extend(o.name for o in scenario.attacker.observes)
    return texts


def gradient_readers(scenario: Scenario, clients: Iterable[str], reads: Sequence[str] = ()
                     ) -> tuple[set[str], bool]:
    """The clients whose gradient the check reads (named as ``gradient_c`` or ``gradient:c`` by a
    property formula, an ``observing`` list, the attacker's observation or ``reads``, what the caller
    reads beyond the scenario, e.g. ``flcheck privacy --observing``), and whether some text names
    ``gradient`` without a client of ``clients`` (then all of them are read)."""
    names = set(clients)
    texts = [*read_texts(scenario), *reads]
    read: set[str] = set()
    unnamed = False
    for w in _words(texts):
        if not w.startswith("gradient"):
            continue
        rest = w[len("gradient"):]
        client = rest[1:] if rest[:1] in ("_", ":") else None
        if client in names:
            read.add(client)
        else:
            unnamed = True
    return read, unnamed


def reduce_system(system: ScenarioSystem, scenario: Scenario, choice: Reductions | None = None,
                  reads: Sequence[str] = ()) -> tuple[ScenarioSystem, Applied]:
    """``system`` with the reductions of ``choice`` (default: all) that the scenario admits, and what
    was applied; ``reads``: observables the caller reads beyond the scenario's properties and attacker
    (the dead values keep what they name)."""
    choice = choice or Reductions()
    applied = Applied()
    if choice.dead_values:
        candidates = system.fl.dead_gradient_clients()
        read, unnamed = gradient_readers(scenario, system.fl.clients, reads)
        if not candidates:
            info: dict[str, Any] = {"applied": False,
                                    "reason": "the rules do not state that gradients are dead outside ready"}
        elif unnamed:
            info = {"applied": False, "reason": "a property or observation reads every gradient"}
        else:
            reset = [c for c in candidates if c not in read]
            info = {"applied": bool(reset), "clients": reset, "kept": sorted(read),
                    "what": "gradient of a client not in ready reset to its initial value"}
            if not reset:
                info["reason"] = "every client's gradient is read by a property or observation"
            else:
                system = ScenarioSystem(reduce_values(system.fl, reset_unready=reset), system.secrets,
                                        system.scenario)
                applied.names.append("dead_values")
        applied.details["dead_values"] = info
    else:
        applied.details["dead_values"] = {"applied": False, "reason": "switched off"}
    for name, reduce in (("traces", _traces), ("cone", _cone), ("partial_order", _partial_order),
                         ("symmetry", _symmetry)):
        if not getattr(choice, name):
            applied.details[name] = {"applied": False, "reason": "switched off"}
            continue
        if name == "symmetry" and "partial_order" in applied.names:
            applied.details[name] = {"applied": False, "reason": "not applied: the partial order is (one "
                                     "interleaving of the commuting steps is smaller than their orbits)"}
            continue
        system, applied.details[name] = reduce(system, scenario)
        if applied.details[name]["applied"]:
            applied.names.append(name)
    if not choice.counter:
        applied.details["counter"] = {"applied": False, "reason": "switched off"}
    elif "symmetry" not in applied.names:
        applied.details["counter"] = {"applied": False, "reason": "not applied: no symmetry classes to count "
                                      "(the plain exploration)"}
    else:
        system, applied.details["counter"] = _counter(system, scenario)
        if applied.details["counter"]["applied"]:
            applied.names.append("counter")
    return system, applied


class AmpleScenarioSystem(ScenarioSystem):
    """A scenario's system explored with one ample action per state where partial-order reduction allows
    it (:class:`checker.mc.confluence.AmpleSystem`); ``base`` is the system it reduces (same states)."""

    def __init__(self, base: ScenarioSystem, ample: AmpleSystem) -> None:
        super().__init__(base.fl, base.secrets, base.scenario)
        self.base = base
        self._ample = ample

    def successors(self, state: FLState) -> list[Any]:
        return self._ample.successors(state)


def _safety_or_reachability(f: ctl_ast.Formula) -> bool:
    """``AG p`` or ``EF p`` with ``p`` free of temporal operators (``EX true``, a state that is no
    deadlock, allowed): an LTL-X property of the runs."""
    return isinstance(f, ctl_ast.AG | ctl_ast.EF) and _state_only(f.arg)


def _state_only(f: ctl_ast.Formula) -> bool:
    return all(not isinstance(g, ctl_ast.Unary | ctl_ast.Binary) or _no_deadlock(g) for g in f.subformulas())


def _no_deadlock(f: ctl_ast.Formula) -> bool:
    """``EX true`` or ``AX false``: whether the state has a successor (kept by every ample set)."""
    return (isinstance(f, ctl_ast.EX) and isinstance(f.arg, ctl_ast.TrueF)) or (
        isinstance(f, ctl_ast.AX) and isinstance(f.arg, ctl_ast.FalseF))


def _partial_order(system: ScenarioSystem, scenario: Scenario) -> tuple[ScenarioSystem, dict[str, Any]]:
    """One ample action per state (:class:`checker.mc.confluence.AmpleSystem`, conditions C0–C4) when the
    properties that read the explored structure are ``ctl`` formulas without ``P``/``D`` and without a
    next-step operator (but ``EX true``) or ``probability`` properties with ``min``/``max``, the rules'
    action classes commute (C1), and the system is acyclic (C3); C4 (a deterministic ample action) is
    required unless every formula is an invariant or a reachability (LTL-X)."""
    refusal = structure_refusal(scenario, "partial order")
    if refusal is not None:
        return system, {"applied": False, "reason": refusal}
    branching = False
    for p in scenario.properties:
        if p.kind in OWN_EXPLORATION_KINDS or not isinstance(p, FormulaProperty):
            continue
        if p.kind == "probability" and p.scheduler == "uniform":
            return system, {"applied": False, "reason": f"not applied: property {p.name} reads the uniform "
                            "scheduler, which weighs every interleaving"}
        f = parse_property(p)
        if ctl_ast.has_probabilistic(f):
            return system, {"applied": False, "reason": f"not applied: property {p.name} has a P or D query"}
        if any(isinstance(g, ctl_ast.EX | ctl_ast.AX) and not _no_deadlock(g) for g in f.subformulas()):
            return system, {"applied": False, "reason": f"not applied: property {p.name} has a next-step "
                            "operator (EX or AX), which the reduction does not keep"}
        if p.kind == "ctl" and not _safety_or_reachability(f):
            branching = True
    fl = system.fl
    if not fl.acyclic():
        return system, {"applied": False, "reason": "not applied: the system is not known to be acyclic "
                        "(no events bound, or rules other than the round-based ones)"}
    classes = fl.action_classes()
    if classes is None:
        return system, {"applied": False, "reason": "not applied: a rule of the system states no footprint"}
    conflicts = confluence_conflicts(classes)
    if conflicts:
        return system, {"applied": False, "reason": "not confluent: " + conflicts[0].text()}
    visible, why = _read_names(system, scenario)
    if why is not None:
        return system, {"applied": False, "reason": why}
    watched = frozenset(a.rule for p in scenario.properties
                        if p.kind not in OWN_EXPLORATION_KINDS and isinstance(p, FormulaProperty)
                        for a in ctl_ast.atoms_of(parse_property(p)) if isinstance(a, ctl_ast.Enabled))
    if any(r not in fl.rule_names for r in watched):
        return system, {"applied": False, "reason": "not applied: an enabled() atom names a step by its full "
                        "text"}
    if not any(c.rule not in watched and not c.writes & visible for c in classes):
        return system, {"applied": False, "reason": "not applied: every step writes what a property reads"}
    by_name = {(c.rule, c.actor): c for c in classes}
    ample = AmpleSystem(system, lambda action: by_name.get((action.rule, action.actor)), frozenset(visible),
                        watched, deterministic=branching)
    return AmpleScenarioSystem(system, ample), {
        "applied": True, "what": "one ample step per state where the steps commute and the properties "
        "do not see it" + (" (a deterministic one: branching-time formulas)" if branching else "")}


def state_abstraction(system: ScenarioSystem) -> Callable[[FLState], Hashable]:
    """The map from the unreduced system's states onto ``system``'s (a reduced system of
    :func:`reduce_system`): the model's ``abstract`` (:mod:`checker.app.value_reductions`), then the orbit
    representative under a symmetry quotient, or its counters (used to replay evidence,
    :mod:`checker.app.lift`)."""
    if isinstance(system, AmpleScenarioSystem):
        system = system.base
    if isinstance(system, CounterStates):
        return system.abstract
    if isinstance(system, SymmetricSystem):
        inner = system.base.fl.abstract
        canonical = system.canonical
        return lambda state: canonical(inner(state))
    return system.fl.abstract


def structure_refusal(scenario: Scenario, reduction: str, *, reduced_trees: bool = False) -> str | None:
    """Why a reduction of the explored structure that is proven for CTL and first-passage probabilities
    only (the symmetry quotient, the cone of influence) may not be used: a property that reads the
    structure with a kind outside :data:`SYMMETRIC_KINDS`, or a ``D{ε,δ}`` query; ``None`` when it may.
    With ``reduced_trees`` an ``attack_tree reduced`` property does not stop it (module docstring)."""
    for p in scenario.properties:
        if p.kind in OWN_EXPLORATION_KINDS:
            continue
        if p.kind == "attack_tree" and p.reduced and reduced_trees:
            continue
        if p.kind not in SYMMETRIC_KINDS:
            return f"not applied: property {p.name} is of kind {p.kind}, whose result the {reduction} " \
                   f"is not proven to preserve (only {', '.join(SYMMETRIC_KINDS)})"
        if isinstance(p, FormulaProperty) and _DP_QUERY.search(p.formula.text):
            return f"not applied: property {p.name} has a D{{ε,δ}} query (neighbouring systems)"
    return None


def _cone(system: ScenarioSystem, scenario: Scenario) -> tuple[ScenarioSystem, dict[str, Any]]:
    """The cone of influence (:mod:`checker.mc.cone`) of what the properties that read the explored
    structure read; the FL system forgets the values outside it (:mod:`checker.app.value_reductions`)."""
    refusal = structure_refusal(scenario, "cone of influence", reduced_trees=True)
    if refusal is not None:
        return system, {"applied": False, "reason": refusal}
    classes = system.fl.action_classes()
    if classes is None:
        return system, {"applied": False, "reason": "not applied: a rule of the system states no footprint"}
    seeds, why = _read_names(system, scenario)
    if why is not None:
        return system, {"applied": False, "reason": why}
    cone = cone_of_influence(classes, seeds)
    forget = sorted(forgettable(system.fl) - cone - system.fl.forgotten)
    if not forget:
        return system, {"applied": False, "reason": "every value the model can forget influences a property"}
    fl = reduce_values(system.fl, forget=forget)
    return ScenarioSystem(fl, system.secrets, system.scenario), {
        "applied": True, "forgotten": forget, "what": "values no ctl or probability property reads, "
        "directly or through the rules, reset to their initial value"}


def _read_names(system: ScenarioSystem, scenario: Scenario) -> tuple[set[str], str | None]:
    """The variables the properties that read the explored structure read through their atoms, or
    why they cannot be told (a name whose reads the model does not state)."""
    observables = set(system.observable_names())
    seeds: set[str] = set()
    for p in scenario.properties:
        if p.kind in OWN_EXPLORATION_KINDS or not isinstance(p, FormulaProperty):
            continue
        for atom in ctl_ast.atoms_of(parse_property(p)):
            for name in _atom_names(atom):
                if name not in observables:
                    continue  # a symbol (``last == get_grad``), not an observable
                reads = system.variable_reads(name)
                if reads is None:
                    return seeds, f"not applied: property {p.name} reads {name}, whose dependencies the " \
                                  "model does not state"
                seeds |= reads
    return seeds, None


def _traces(system: ScenarioSystem, scenario: Scenario) -> tuple[ScenarioSystem, dict[str, Any]]:
    """The trace abstraction (``traces drop``, :mod:`flmodel.rules`): the published rules read the
    trace set only through ``[] ∈ evs`` and ``∃ l. l ∈ evs``, and the next igraph does not depend on the
    trace ``l`` a step extends, so keeping ``evs ∩ {[]}`` and one marker for the rest is a functional
    bisimulation of the Markov decision process whose actions are the steps without their trace
    (each ``l``-variant of a step has the same distribution of abstracted successors): CTL verdicts and
    minimal and maximal probabilities over atoms that read no trace are the same. The uniform
    scheduler is not kept (it weighs a step by its number of traces), nor are attack trees' alternatives
    (paths that differ in the trace they extend): only ``ctl`` without ``P``/``D`` queries and
    ``probability`` properties with ``min`` or ``max`` read the abstracted structure."""
    fl = system.fl
    if fl.ctx.trace_mode != "full":
        return system, {"applied": False, "reason": "the scenario already drops the traces"}
    for p in scenario.properties:
        if p.kind in OWN_EXPLORATION_KINDS:
            continue
        if p.kind == "probability" and p.scheduler in ("min", "max", None):
            continue
        f = parse_property(p) if p.kind == "ctl" else None
        if f is not None and not ctl_ast.has_probabilistic(f):
            if any(isinstance(a, ctl_ast.Enabled) and "[" in a.rule for a in ctl_ast.atoms_of(f)):
                return system, {"applied": False, "reason": f"not applied: property {p.name} names a step "
                                "with its trace (enabled of an action's full text)"}
            continue
        return system, {"applied": False, "reason": f"not applied: property {p.name} ({p.kind}) may depend "
                        "on how many traces a step can extend (the uniform scheduler, attack trees' ways)"}
    reads, why = _read_names(system, scenario)
    if why is not None:
        return system, {"applied": False, "reason": why}
    if "evs" in reads:
        return system, {"applied": False, "reason": "not applied: a property reads the traces"}
    return ScenarioSystem(fl.replace(trace_mode="drop"), system.secrets, system.scenario), {
        "applied": True, "what": "the trace set abstracted to [] ∈ evs and whether it holds another trace"}


def _atom_names(atom: ctl_ast.Atom) -> list[str]:
    """The identifiers an atom reads (observables or symbols)."""
    if isinstance(atom, ctl_ast.Label):
        return [atom.name]
    terms = (atom.left, atom.right) if isinstance(atom, ctl_ast.Compare) else \
        (atom.element, atom.collection) if isinstance(atom, ctl_ast.Member) else ()
    return [t.name for t in terms if isinstance(t, ctl_ast.Ref)]


#: The property kinds whose results the symmetry quotient preserves (module docstring).
SYMMETRIC_KINDS = ("ctl", "probability")
#: The property kinds decided on explorations of their own (the privacy pipeline, ``D{ε,δ}``, the
#: attacks) of the system without the symmetry: they never read the quotient.
OWN_EXPLORATION_KINDS = ("privacy", "advantage", "dp", "budget", "crossval", "attack")
_DP_QUERY = re.compile(r"\bD\s*\{")
_QUOTED = re.compile(r'"([^"]*)"')


def names_in(texts: Iterable[str], names: Iterable[str]) -> set[str]:
    """The ``names`` that some word of ``texts`` contains as a part delimited by the word's ends,
    ``_`` or ``:`` (``gradient_sat1``, ``ready:sat1``, ``"sat1"``, ``link_o1_ground``)."""
    words = _words(texts)
    out: set[str] = set()
    for n in names:
        pat = re.compile(r"(?:^|[_:])" + re.escape(n) + r"(?:$|[_:])")
        if any(pat.search(w) for w in words):
            out.add(n)
    return out


def symmetry_fixed(scenario: Scenario, system: ScenarioSystem) -> tuple[set[str], str | None]:
    """The clients the symmetry must fix, and a reason when no symmetry may be used at all.

    A property that reads the explored structure with a kind outside :data:`SYMMETRIC_KINDS` (``attack_tree``:
    its alternatives are paths of the structure, not of the quotient) or a ``ctl`` formula with a ``D{ε,δ}``
    query stops it. A client is fixed when a property formula, an ``observing`` list or the attacker's
    observation names it, its location, or a data point of its initial part (``gradient_c``, ``holds_x``,
    ``enabled(...)`` with an action's full text, a quoted name compared with ``ready``...), or when a word or
    quoted string of those texts is a part of one of these names (the atoms compare strings by substring in
    places). The attacker itself and a client at the attacker's location are fixed too."""
    refusal = structure_refusal(scenario, "symmetry quotient", reduced_trees=True)
    if refusal is not None:
        return set(), refusal
    return clients_named(read_texts(scenario), system, scenario), None


def clients_named(texts: Sequence[str], system: ScenarioSystem, scenario: Scenario | None = None
                  ) -> set[str]:
    """The clients ``texts`` name: by name, location or a data point of the initial part, or by a word
    or quoted string that is a part of one of these names; and the client ``scenario``'s attacker is or
    shares a location with."""
    g = system.fl.initial.igra
    clients = set(g.clients)
    fixed = names_in(texts, clients)
    locs = names_in(texts, {g.aloc[c] for c in clients})
    if scenario is not None and scenario.attacker is not None:
        spy = scenario.attacker
        fixed |= {spy.name} & clients
        locs |= {spy.location or g.aloc.get(spy.name, "")} & {g.aloc[c] for c in clients}
    points = names_in(texts, {x.name for c in clients for x in g.part(c)})
    # a string constant or symbol compared with a name by text (``matches``, ``in`` on strings:
    # ``"1" in holds_x``) tells apart the names it is a part of
    pieces = _words(texts) | {m for t in texts for m in _QUOTED.findall(t)}
    for c in clients:
        own = (c, g.aloc[c], *(x.name for x in g.part(c)))
        if g.aloc[c] in locs or any(x.name in points for x in g.part(c)) \
                or any(w in n for w in pieces for n in own):
            fixed.add(c)
    return fixed


def step_colours(scenario: Scenario) -> dict[str, tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]]:
    """Per actor, the attributes its own ``attack_step`` statements give its steps (``(rule, sorted
    attributes)`` pairs; an actor without one is absent): a permutation of the symmetry must map every
    actor onto one of the same colour, so that a step and its image have the same cost, probability
    and time, and an attack tree's attributes on the quotient are the model's. A statement without
    ``by`` gives every actor of its rule the same values and colours no one."""
    own: dict[str, list[tuple[str, tuple[tuple[str, Fraction], ...]]]] = {}
    for (rule, actor), values in scenario.step_attributes().items():
        if actor is not None:
            own.setdefault(actor, []).append((rule, tuple(sorted(values.items()))))
    return {a: tuple(sorted(v)) for a, v in own.items()}


def _symmetry(system: ScenarioSystem, scenario: Scenario) -> tuple[ScenarioSystem, dict[str, Any]]:
    fixed, refusal = symmetry_fixed(scenario, system)
    if refusal is not None:
        return system, {"applied": False, "reason": refusal}
    sym, reason = detect_symmetry(system, fixed, step_colours(scenario))
    if sym is None:
        return system, {"applied": False, "reason": "not applied: " + reason, "fixed": sorted(fixed)}
    return SymmetricSystem(system, sym), {
        "applied": True, "classes": [list(c) for c in sym.classes], "fixed": sorted(fixed),
        "what": "states stored as orbit representatives of the permutations of each class's clients"}


def _counter(system: ScenarioSystem, scenario: Scenario) -> tuple[ScenarioSystem, dict[str, Any]]:
    """The counter abstraction (:mod:`checker.app.counter`) on top of the symmetry quotient ``system``;
    the quotient itself (orbit representatives, every client's steps) when it is refused."""
    assert isinstance(system, SymmetricSystem)
    refusal = counter_refusal(scenario, system.base)
    if refusal is not None:
        return system, {"applied": False, "reason": refusal + " (the orbit quotient is explored instead)"}
    why = compact_refusal(system.base, system.symmetry)
    kind = CounterSystem if why else CounterStates
    counter = kind(system.base, system.symmetry)
    return counter, {
        "applied": True, "classes": [list(c) for c in system.symmetry.classes],
        "stored": "representatives" if why else "counters",
        **({"stored_reason": why} if why else {}),
        "what": "a state stands for how many clients of each class are in each local state (its generic "
                "representative); one step per occupied local state of a class, not per client"}


# ------------------------------------------------------------------------------ what the attacker sees
Step = tuple[Any, FLState, Fraction]


@dataclass(frozen=True)
class ObservationReducer:
    """The reductions of the explorations behind a privacy figure (the FL system observed by the
    attacker, :func:`checker.app.privacy_observation.observe_dataset`), per neighbouring system.

    * Partial order: when :func:`checker.mc.confluence.confluence_conflicts` finds no conflict among
      the system's action classes (:meth:`flmodel.system.FLSystem.action_classes`), the attacker's
      record included (a release is appended by every aggregation, what the attacker observes by every
      action that writes a variable it reads, a client's updates by its reports, the trace by every
      step), every scheduler gives the same distribution of the record at the end of the runs
      (the confluence theorem of :mod:`checker.mc.confluence`), so only the first enabled action of
      each state is explored (``FLSystem.successors(first_only=True)``), exactly.
    * Gradient sum: when every rule reads the ready clients' gradients only through their weighted
      sum (:meth:`flmodel.system.FLSystem.gradients_summed`), the trace is not recorded and what the
      attacker observes reads no client's gradient, only that sum is kept (``sum_gradients``: a
      functional bisimulation ``h`` of the FL system
      together with the dead-value reset), so reports that add up to the same sum lead to
      one state. When clients' updates are recorded, a report's update is read off the step's target
      before ``h`` forgets it (the step carries that raw target, :class:`ObservedSystem`), and the
      next steps are those of the FL system from ``h``'s image: by the footprint, they are the images
      of the steps from the raw state (a report computes the new gradient from the model and the
      client's data, never from another gradient), so the record's distribution is unchanged.
    * Symmetry: when the trace is not recorded and what the attacker observes reads no variable of a
      client the group moves (by name, or as a value: ``ready`` reads every client's ``ready:c``, so
      it fixes them all), the states are replaced by their orbit representatives
      (:class:`flmodel.symmetry.SymmetricSystem` of the neighbouring system itself) under the group
      that also fixes every client whose updates are recorded: the record is then a symmetric function
      of the run and the uniform scheduler (and, under confluence, the first-action one on
      representatives) is symmetric, so the lumped chain has the same distribution of the record
      ([KNP06]). A recorded update is read off the raw target (the reporting client is fixed, so the
      representative's value would be the same).

    ``steps(fl, recorded)`` returns the reduced successor function of one neighbouring system for the
    record ``recorded`` (``None``: the plain one) and what was applied."""

    scenario: Scenario
    secrets: tuple[DataPoint, ...]
    choice: Reductions = field(default_factory=Reductions)

    def _confluent(self, system: ScenarioSystem, recorded: Recorded) -> tuple[bool, dict[str, Any]]:
        fl = system.fl
        classes = fl.action_classes()
        if classes is None:
            return False, {"applied": False, "reason": "a rule of the system states no footprint"}
        observed: set[str] | None = set()
        for name in recorded.observing:
            reads = system.variable_reads(name)
            if reads is None or observed is None:
                observed = None
            else:
                observed |= reads
        extra: list[tuple[int, str]] = []
        for i, c in enumerate(classes):
            if c.aggregates:
                extra += [(i, "record:releases"), (i, "record:seen")]
            if observed is None or c.writes & observed:
                extra.append((i, "record:seen"))
            if c.actor in fl.clients and recorded.records_updates_of(c.actor):
                extra.append((i, f"record:updates:{c.actor}"))
            if recorded.trace:
                extra.append((i, "record:trace"))
        conflicts = confluence_conflicts(classes, extra)
        if conflicts:
            return False, {"applied": False, "reason": "not confluent: " + conflicts[0].text(),
                           "conflicts": len(conflicts)}
        return True, {"applied": True, "what": "one action per state: every pair of actions that may be "
                      "enabled together commutes, so every scheduler gives the same end-of-run "
                      "distribution of the attacker's record"}

    def _symmetric(self, system: ScenarioSystem, recorded: Recorded
                   ) -> tuple[SymmetricSystem | None, dict[str, Any]]:
        if recorded.trace or (recorded.updates and recorded.clients is None):
            return None, {"applied": False, "reason": "the record names every client (updates or trace)"}
        fixed = clients_named(recorded.observing, system, self.scenario)
        if recorded.updates and recorded.clients is not None:
            fixed |= set(recorded.clients)  # their updates are in the record
        for name in recorded.observing:  # the recorded value itself must be invariant: a set of client names
            reads = system.variable_reads(name)  # (``ready``) is not, a client's own value is if it is fixed
            if reads is None:
                return None, {"applied": False, "reason": f"the attacker observes {name}, whose variables "
                              "the model does not state"}
            fixed |= {v.partition(":")[2] for v in reads if ":" in v}
        sym, reason = detect_symmetry(system, fixed)
        if sym is None:
            return None, {"applied": False, "reason": reason, "fixed": sorted(fixed)}
        return SymmetricSystem(system, sym), {"applied": True, "classes": [list(c) for c in sym.classes],
                                              "fixed": sorted(fixed)}

    def _summed(self, system: ScenarioSystem, recorded: Recorded) -> tuple[bool, dict[str, Any]]:
        fl = system.fl
        if not fl.gradients_summed():
            return False, {"applied": False, "reason": "the rules do not state that they read the gradients "
                           "only through their weighted sum"}
        if recorded.trace:
            return False, {"applied": False, "reason": "the record holds the protocol trace"}
        for name in recorded.observing:
            reads = system.variable_reads(name)
            if reads is None or any(v.startswith("gradient:") for v in reads):
                return False, {"applied": False, "reason": f"the attacker observes {name}, which reads a "
                               "client's gradient (or variables the model does not state)"}
        what = "the ready clients' gradients kept as their weighted sum"
        if recorded.updates:
            what += " (a report's update recorded before)"
        return True, {"applied": True, "what": what}

    def steps(self, fl: FLView, recorded: Recorded
              ) -> tuple[Callable[[FLState], Sequence[ReducedStep]] | None, dict[str, Any]]:
        info: dict[str, Any] = {}
        summed = False
        if self.choice.gradient_sum:
            plain = ScenarioSystem(fl, self.secrets, self.scenario)
            summed, info["gradient_sum"] = self._summed(plain, recorded)
        else:
            info["gradient_sum"] = {"applied": False, "reason": "switched off"}
        # with updates recorded, the steps are the plain system's, read raw, then mapped by the sum
        abstract = reduce_values(fl, sum_gradients=True).abstract if summed and recorded.updates else None
        if summed and abstract is None:
            fl = reduce_values(fl, sum_gradients=True)
        system = ScenarioSystem(fl, self.secrets, self.scenario)
        one = False
        if self.choice.partial_order and recorded.interleavings:
            info["partial_order"] = {"applied": False, "reason": "what is read depends on the interleaving"}
        elif self.choice.partial_order:
            one, info["partial_order"] = self._confluent(system, recorded)
        else:
            info["partial_order"] = {"applied": False, "reason": "switched off"}
        quotient: SymmetricSystem | None = None
        if self.choice.symmetry:
            quotient, info["symmetry"] = self._symmetric(system, recorded)
        else:
            info["symmetry"] = {"applied": False, "reason": "switched off"}
        if not one and quotient is None and abstract is None:
            return (fl.successors if fl.sums_gradients else None), info
        successors = fl.successors
        if quotient is None and abstract is None:
            return (lambda state: successors(state, first_only=True)), info
        canonical = quotient.canonical if quotient is not None else None

        def step(state: FLState) -> list[ReducedStep]:
            if abstract is not None:  # outcomes apart by their raw targets: the record reads them
                out: list[ReducedStep] = []
                for act, raw, p in successors(state, first_only=one):
                    target = abstract(raw)
                    out.append((act, canonical(target) if canonical is not None else target, p, raw))
                return out
            assert canonical is not None
            merged: dict[tuple[Any, FLState], Fraction] = {}
            for act, target, p in successors(state, first_only=one):
                key = (act, canonical(target))
                merged[key] = merged[key] + p if key in merged else p
            return [(a, t, p) for (a, t), p in merged.items()]

        return step, info

    def interchangeable(self, fl: FLView) -> list[tuple[str, ...]]:
        """The classes of clients the symmetry finds interchangeable in ``fl`` (nothing fixed; one
        class per client when the symmetry is switched off or refused): a permutation within a class is
        an automorphism of the system, so interchangeable clients' records have the same distribution."""
        if self.choice.symmetry:
            sym, _ = detect_symmetry(ScenarioSystem(fl, self.secrets, self.scenario), set())
            if sym is not None:
                inside = {c for cls in sym.classes for c in cls}
                return [tuple(cls) for cls in sym.classes] + [(c,) for c in fl.clients if c not in inside]
        return [(c,) for c in fl.clients]
