"""Confluence from footprints: when every pair of actions that may be enabled together commutes, every
scheduler gives the same distribution of the states where the runs end, and one fixed order of the
actions may be explored instead of all interleavings (a partial-order reduction for end-of-run
distributions); and the ample sets of a partial-order reduction of the explored structure
(:class:`AmpleSystem`), whose persistence condition the same confluence provides.

The model states its *action classes* (each action belongs to one), each with a footprint: the
variables its enabledness, probabilities and effects read, the variables it may write, necessary
conditions of its enabledness (``guard``: ``(variable, value)`` pairs), writes that commute with the
writes of the same variable under the same key (``commuting``), and whether at most one action of the
class is enabled at a time (``single``). Two classes ``A`` and ``B`` are

* *exclusive* when their guards require different values of one variable (never enabled together);
* *independent* when, apart from the variables both write under one commuting key, ``A`` writes
  nothing ``B`` reads or writes and ``B`` writes nothing ``A`` reads.

Independent actions ``a`` and ``b`` enabled in a state ``s`` satisfy the diamond property: ``b`` stays
enabled after ``a`` (its guard reads nothing ``a`` writes) and vice versa, and
``Σ_t P_a(s,t) P_b(t,u) = Σ_t P_b(s,t) P_a(t,u)`` for every ``u`` (each draws its outcome from
what it reads, which the other does not change, and writes disjoint variables).

Theorem (local confluence, the probabilistic form of Newman's lemma on terminating systems). Let an
MDP be finite and acyclic, and let every two distinct actions enabled in one reachable state satisfy
the diamond property. Then every scheduler yields the same distribution ``F(s)`` over the deadlocks
reached from ``s``. Proof by induction on the length ``h(s)`` of the longest path from ``s``: a
scheduler choosing ``a`` in ``s`` yields ``G_a(s) = Σ_t P_a(s,t) F(t)`` by the hypothesis; for another
enabled ``b``, ``F(t) = G_b(t)`` in each ``a``-successor ``t`` (``b`` is enabled there), so
``G_a(s) = Σ_u (Σ_t P_a(s,t) P_b(t,u)) F(u) = G_b(s)`` by the diamond; randomised choices mix
equal values. Hence the distribution of any function of the final state (an attacker's record kept in
the state included) is the same under the uniform scheduler, under the worst one and under the
deterministic scheduler that always takes the first enabled action: exploring that one action per
state is exact ([God96] for the idea of exploring one interleaving of independent actions; [BGC04]
for partial-order reduction on Markov decision processes).

:func:`confluence_conflicts` checks the hypothesis on the footprints: every pair of classes that are
not exclusive (a class with itself unless ``single``) must be independent. The footprints are the
model's statement; the tests compare the reduced distributions with the unreduced ones.

    >>> from collections import namedtuple
    >>> C = namedtuple("C", "rule actor reads writes guard commuting single")
    >>> report = C("report", "c1", frozenset({"x"}), frozenset({"r1"}), frozenset({("done1", False)}),
    ...            frozenset(), True)
    >>> other = C("report", "c2", frozenset({"x"}), frozenset({"r2"}), frozenset({("done2", False)}),
    ...           frozenset(), True)
    >>> confluence_conflicts([report, other])
    []
    >>> update = C("update", "s", frozenset({"r1", "r2"}), frozenset({"x"}), frozenset(), frozenset(), True)
    >>> print(confluence_conflicts([report, other, update])[0].reason)
    report(c1) writes r1, which update(s) reads
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["AmpleSystem", "Conflict", "Footprint", "confluence_conflicts", "exclusive", "independent"]


class Footprint(Protocol):
    """What :func:`confluence_conflicts` reads of an action class (e.g.
    ``flmodel.system.ActionClass``)."""

    @property
    def rule(self) -> str: ...
    @property
    def actor(self) -> str: ...
    @property
    def reads(self) -> frozenset[str]: ...
    @property
    def writes(self) -> frozenset[str]: ...
    @property
    def guard(self) -> frozenset[tuple[str, Hashable]]: ...
    @property
    def commuting(self) -> frozenset[tuple[str, Hashable]]: ...
    @property
    def single(self) -> bool: ...


@dataclass(frozen=True)
class Conflict:
    """Two action classes that may be enabled together and do not commute, and why."""

    first: str
    second: str
    reason: str

    def text(self) -> str:
        return f"{self.first} and {self.second} may be enabled together and do not commute ({self.reason})"


def _name(c: Footprint) -> str:
    return f"{c.rule}({c.actor})"


def exclusive(a: Footprint, b: Footprint) -> bool:
    """Whether the guards of ``a`` and ``b`` require different values of one variable."""
    need = dict(a.guard)
    return any(v in need and need[v] != x for v, x in b.guard)


def _shared_commuting(a: Footprint, b: Footprint) -> set[str]:
    return {v for v, k in a.commuting if (v, k) in b.commuting}


def independent(a: Footprint, b: Footprint) -> str | None:
    """``None`` when ``a`` and ``b`` are independent (module docstring), else the reason they are not."""
    free = _shared_commuting(a, b)
    for x, y in ((a, b), (b, a)):
        touched = sorted((x.writes & (y.reads | y.writes)) - free)
        if touched:
            what = "reads" if touched[0] in y.reads else "writes"
            return f"{_name(x)} writes {touched[0]}, which {_name(y)} {what}"
    return None


def confluence_conflicts(classes: Sequence[Footprint], extra_writes: Iterable[tuple[int, str]] = ()
                         ) -> list[Conflict]:
    """The pairs of ``classes`` that break the hypothesis of the confluence theorem (module docstring):
    not exclusive (a class with itself unless it is ``single``) and not independent. ``extra_writes``
    adds ``(class index, variable)`` writes, e.g. an observer's record that some actions append to."""
    extra: dict[int, set[str]] = {}
    for i, v in extra_writes:
        extra.setdefault(i, set()).add(v)
    cs: list[Footprint] = [
        _Widened(c, frozenset(extra[i])) if i in extra else c for i, c in enumerate(classes)]
    out: list[Conflict] = []
    for i, a in enumerate(cs):
        for b in cs[i:]:
            if b is a and a.single:
                continue
            if exclusive(a, b):
                continue
            reason = independent(a, b)
            if reason is not None:
                out.append(Conflict(_name(a), _name(b), reason))
    return out


@dataclass(frozen=True)
class _Widened:
    """``base`` with more written variables (not commuting)."""

    base: Footprint
    more: frozenset[str]

    @property
    def rule(self) -> str:
        return self.base.rule

    @property
    def actor(self) -> str:
        return self.base.actor

    @property
    def reads(self) -> frozenset[str]:
        return self.base.reads

    @property
    def writes(self) -> frozenset[str]:
        return self.base.writes | self.more

    @property
    def guard(self) -> frozenset[tuple[str, Hashable]]:
        return self.base.guard

    @property
    def commuting(self) -> frozenset[tuple[str, Hashable]]:
        return self.base.commuting

    @property
    def single(self) -> bool:
        return self.base.single


# ------------------------------------------------------------------------------ ample sets
class AmpleSystem:
    """The transition system ``ts`` explored with one ample action per state where the conditions of
    partial-order reduction hold, else with every action ([God96]; [GKPP99] for branching time; [BGC04]
    for minimal and maximal probabilities):

    * C0: a state with an enabled action keeps one (the first candidate below), so deadlocks stay;
    * C1 (persistence): ``ts``'s action classes are confluent (:func:`confluence_conflicts` found no
      conflict, checked by the caller): an action dependent on the ample one is never enabled together
      with it, and the ample one stays enabled until taken, so no dependent action can come first;
    * C2 (invisibility): the ample action writes no variable in ``visible`` (what the properties'
      atoms read), and no action of a rule in ``watched`` (``enabled(rule)`` atoms, which read the
      explored edges) is enabled in the state;
    * C3 (cycles): the caller ensures ``ts`` is acyclic, so no action is postponed forever;
    * C4 (branching time, ``deterministic``): the ample action has one successor state.

    Under C0–C3 every LTL-X property over the visible atoms, in particular invariants, reachability and
    the minimal and maximal probabilities of reaching a visible target, is the same on the reduced
    structure (a singleton ample set is what [BGC04]'s probabilistic condition asks); with C4 too, the
    reduced structure is stutter-bisimilar to the full one, which keeps every CTL-X formula ([GKPP99]).
    ``class_of`` maps an action to its class (``None``: unknown, the state is expanded in full)."""

    def __init__(self, ts: Any, class_of: Callable[[Any], Footprint | None], visible: frozenset[str],
                 watched: frozenset[str], deterministic: bool) -> None:
        self.ts = ts
        self._class_of = class_of
        self._visible = visible
        self._watched = watched
        self._deterministic = deterministic

    def initial_states(self) -> Any:
        return self.ts.initial_states()

    def observable_names(self) -> Any:
        return self.ts.observable_names()

    def observe(self, state: Any, name: str) -> object:
        return self.ts.observe(state, name)

    def successors(self, state: Any) -> list[Any]:
        steps = list(self.ts.successors(state))
        groups: dict[Any, list[Any]] = {}
        for step in steps:
            groups.setdefault(step[0], []).append(step)
        if len(groups) < 2:
            return steps
        if any(getattr(a, "rule", None) in self._watched for a in groups):
            return steps
        for action, own in groups.items():
            cls = self._class_of(action)
            if cls is None:
                return steps
            if cls.writes & self._visible:
                continue
            if self._deterministic and len({s[1] for s in own}) > 1:
                continue
            return own
        return steps
