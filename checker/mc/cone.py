"""The cone of influence of the variables a property reads ([COI]): the variables whose values can
affect them, read off the footprints of a model's action classes.

A footprint (e.g. ``flmodel.system.ActionClass``) states what the class's enabledness reads
(``guard_reads``) and, per written variable, what its new value depends on (``effects``: the
variables the joint distribution of the new values of any set of written variables depends on are the
union of theirs). The cone of a set of ``seeds`` is the least set of variables that contains the seeds
and every class's guard reads (whether a step exists is always observable: deadlocks, ``EX``,
``enabled``), and that contains ``effects[v]`` for every variable ``v`` of the cone some class writes.

Theorem. Let ``h`` map a state to the state with every variable outside the cone reset to its initial
value. Then ``h`` is a functional bisimulation of the Markov decision process onto its image: an
action is enabled in ``h(s)`` iff in ``s`` (its guard reads only cone variables, which ``h`` keeps),
and the distribution of the cone variables after it is the same from ``h(s)`` as from ``s`` (the new
values of cone variables depend only on cone variables; the others are unchanged or reset). So every
CTL formula, first-passage probability (minimal, maximal or under the uniform scheduler) and
distribution over atoms that read only cone variables has the same value on the structure explored
through ``h`` (outcomes of one action that ``h`` merges are one step, their probabilities summed),
which is the standard cone-of-influence reduction of model checkers.

    >>> from collections import namedtuple
    >>> C = namedtuple("C", "guard_reads effects")
    >>> report = C(frozenset({"ready"}), (("ready", frozenset()), ("update", frozenset({"model"}))))
    >>> aggregate = C(frozenset({"ready"}), (("model", frozenset({"update"})), ("ready", frozenset())))
    >>> sorted(cone_of_influence([report, aggregate], {"ready"}))
    ['ready']
    >>> sorted(cone_of_influence([report, aggregate], {"model"}))
    ['model', 'ready', 'update']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["ConeFootprint", "cone_of_influence"]


class ConeFootprint(Protocol):
    """What :func:`cone_of_influence` reads of an action class."""

    @property
    def guard_reads(self) -> frozenset[str]: ...
    @property
    def effects(self) -> tuple[tuple[str, frozenset[str]], ...]: ...


def cone_of_influence(classes: Sequence[ConeFootprint], seeds: Iterable[str]) -> frozenset[str]:
    """The cone of influence of ``seeds`` (module docstring): a least fixpoint over the effects."""
    cone = set(seeds)
    for c in classes:
        cone |= c.guard_reads
    writers: dict[str, list[frozenset[str]]] = {}
    for c in classes:
        for v, deps in c.effects:
            writers.setdefault(v, []).append(deps)
    todo = list(cone)
    while todo:
        v = todo.pop()
        for deps in writers.get(v, ()):
            for d in deps - cone:
                cone.add(d)
                todo.append(d)
    return frozenset(cone)
