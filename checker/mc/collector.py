"""Python's cyclic garbage collector around explorations: explored data is never traversed by it.

An exploration creates millions of small objects (states, their tuples and maps, exact probabilities,
observable values) that live as long as the explored structure and are not garbage. CPython's
generational collector nonetheless traverses them: once in each younger generation they pass through,
then in every full collection for as long as they live, and a full collection runs each time the
long-lived objects have grown by a quarter (measured by ``bench/bench_gc.py``: on ``walker32_relay``
about a third of the check's CPU time went to collections that freed nothing).

:func:`exploring` pauses the collector while an exploration runs; at the end, one collection of the
youngest generation — which holds exactly the objects created since the last collection, among them
everything the exploration created and still holds — frees whatever reference cycles the exploration left
behind, and every surviving object is moved to the permanent generation (:func:`gc.freeze`), which no
collection traverses. The objects created later (the Markov chains, the engines' work) are collected as
usual.

Memory stays bounded: :meth:`Frozen.tie` hands the permanent generation back to the oldest one
(:func:`gc.unfreeze`) when the explored structure is freed, so objects frozen with it that later became
cyclic garbage are collected by the next full collection; an object is held past its life at most as long
as an explored structure frozen after it was created lives. (The permanent generation is the process's:
a program that freezes objects itself, e.g. before forking workers, sees them unfrozen then.)
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Frozen", "exploring"]


class Frozen:
    """What an exploration froze (:func:`exploring`): ``done`` once it froze anything (never when the
    collector was off). (``gc.get_freeze_count`` walks the whole permanent generation: not counted.)"""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.done = False

    def freeze(self) -> None:
        """Collect the youngest generation, then freeze everything alive (when the collector was on)."""
        if self.enabled:
            gc.collect(0)
            gc.freeze()
            self.done = True

    def tie(self, owner: object) -> None:
        """Freeze what was built from the exploration since (the structure ``owner``), and unfreeze when
        ``owner`` is freed (nothing when the collector was off)."""
        if self.enabled:
            self.freeze()
            weakref.finalize(owner, gc.unfreeze)


@contextmanager
def exploring() -> Iterator[Frozen]:
    """Inside: the collector paused (objects are still freed by their reference counts). On leaving
    normally, when the collector was on: one collection of the youngest generation, everything alive
    frozen, the collector switched back on (:meth:`Frozen.tie` then ties the frozen objects to the
    explored structure); on an exception the collector is switched back on and nothing is frozen. Left
    as it was when it was off."""
    frozen = Frozen(gc.isenabled())
    gc.disable()
    try:
        yield frozen
    except BaseException:
        if frozen.enabled:
            gc.enable()
        raise
    if frozen.enabled:
        frozen.freeze()
        gc.enable()
