"""The vocabulary of one scenario theory: the names of its locations, data points and fixed components,
and the Isabelle terms of its events, traces, infrastructures, states, policies and learner."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from checker.app.isabelle.terms import Untranslatable, actor, prefixed_ident, rat, set_term, vec
from flmodel.data import DataPoint
from flmodel.infrastructure import Eval, Get, Infrastructure, Poli, Put
from flmodel.learning import HingeLoss, SquaredLoss
from flmodel.system import FLState
from flmodel.view import FLView

Key = TypeVar("Key")


class ScenarioVocabulary:
    """The constants of one scenario theory: locations, data points and the fixed components."""

    def __init__(self, sid: str, system: FLView) -> None:
        self.sid = sid
        g = system.initial.igra
        self.system = system
        self.locations = sorted(g.gra.locations)
        self.loc_names = self._unique({loc: prefixed_ident(loc, "loc_") for loc in self.locations})
        self.points: list[DataPoint] = sorted(self._all_points(system))
        self.point_names = self._unique(
            {p: prefixed_ident(p.name or f"p{i}", "pt_") for i, p in enumerate(self.points)}
        )
        self.rounds = system.rules.name == "fedavg_rounds"
        per = system.ctx.per_client  # clients with different mechanisms: noisy when any client's is
        self.noisy = system.ctx.mechanism is not None or (
            per is not None and any(m is not None for m, _ in per.values()))
        self.gated = bool(system.ctx.enforce_policies) and system.initial.poli != Poli.permissive(
            g.gra.locations
        )

    @staticmethod
    def _all_points(system: FLView) -> set[DataPoint]:
        g = system.initial.igra
        pts = set(g.dataset)
        for _c, part in g.partition.items_tuple:
            pts |= part
        return pts

    @staticmethod
    def _unique(names: dict[Key, str]) -> dict[Key, str]:
        """The names made distinct: a repeated name gets the suffix ``_1``, ``_2``, ... in key order."""
        seen: dict[str, int] = {}
        out: dict[Key, str] = {}
        for key in sorted(names, key=lambda k: (names[k], str(k))):
            n = names[key]
            if n in seen:
                seen[n] += 1
                n = f"{n}_{seen[n]}"
            else:
                seen[n] = 0
            out[key] = n
        return out

    def const(self, suffix: str) -> str:
        """A scenario constant name ``<sid>_<suffix>``."""
        return f"{self.sid}_{suffix}"

    # -- values -------------------------------------------------------------------------------------
    def loc(self, name: str) -> str:
        return self.loc_names[name]

    def point(self, p: DataPoint) -> str:
        if p not in self.point_names:
            raise Untranslatable(f"data point {p} is not one of the scenario's data points")
        return self.point_names[p]

    def data_set(self, pts: Iterable[DataPoint]) -> str:
        return set_term(self.point(p) for p in pts)

    def fun_term(self, entries: Sequence[tuple[str, str]], default: str) -> str:
        """``(\\<lambda>a. if a = k1 then v1 else ... else default)`` over actor keys."""
        if not entries:
            return f"(\\<lambda>a. {default})"
        body = default
        for key, val in reversed(sorted(entries)):
            body = f"if a = {actor(key)} then {val} else {body}"
        return f"(\\<lambda>a. {body})"

    def partition_term(self, part: Iterable[tuple[str, frozenset[DataPoint]]]) -> str:
        return self.fun_term([(c, self.data_set(ps)) for c, ps in part], "{}")

    def event(self, e: object) -> str:
        if isinstance(e, Put):
            return "Put [" + ", ".join(self.partition_term(p.items_tuple) for p in e.parts) + "]"
        if isinstance(e, Get):
            return f"Get ({actor(e.client)}) {vec(e.value)}"
        if isinstance(e, Eval):
            return f"Eval {vec(e.model)}"
        raise Untranslatable(f"event {e} (the trace-history reduction's marker) has no Isabelle counterpart")

    def trace(self, trace: tuple[object, ...]) -> str:
        return "[" + ", ".join(self.event(e) for e in trace) + "]"

    def infra(self, i: Infrastructure) -> str:
        g = i.igra
        fixed = self.system.initial.igra
        if (g.gra, g.aloc, g.server, g.clients, g.dataset) != (
            fixed.gra, fixed.aloc, fixed.server, fixed.clients, fixed.dataset
        ) or i.poli != self.system.initial.poli:
            raise Untranslatable("a state changes a component the rules keep fixed")
        ready = set_term(actor(a) for a in g.ready)
        grad = self.fun_term([(c, vec(v)) for c, v in g.gradient.items_tuple], "undefined")
        part = self.partition_term(g.partition.items_tuple)
        evs = set_term(self.trace(t) for t in i.prot.evs)
        const = self.const
        return (
            f"Infrastructure (Lgraph {const('gra')} {const('aloc')} {const('server')} {const('clients')} "
            f"{ready} {grad} "
            f"{vec(g.curmodpar)} {part} {const('dataset')}) (Protocol {evs}) {const('poli')}"
        )

    def state(self, s: FLState) -> str:
        t = self.infra(s.infra)
        if self.rounds:
            return f"({t}, {'True' if s.partitioned else 'False'})"
        return t

    def poli_term(self, poli: Poli) -> str:
        body = "{}"
        for loc, pols in reversed(poli.table.items_tuple):
            items = []
            for p in pols:
                conds = []
                if p.actors is not None:
                    conds.append(f"a \\<in> {set_term(actor(x) for x in p.actors)}")
                if p.at_location:
                    conds.append(f"aloc G a = {self.loc(loc)}")
                pred = " \\<and> ".join(conds) if conds else "True"
                acts = set_term(f"act_{k}" for k in sorted(p.actions))
                items.append(f"((\\<lambda>a. {pred}), {acts})")
            body = f"if l = {self.loc(loc)} then {set_term(items)} else {body}"
        return f"(\\<lambda>G l. {body})"

    def learner_term(self) -> str:
        loss = self.system.ctx.loss
        if isinstance(loss, SquaredLoss):
            g = f"squared_grad {'True' if loss.bias else 'False'}"
        elif isinstance(loss, HingeLoss):
            g = f"hinge_grad {'True' if loss.bias else 'False'}"
        else:
            raise Untranslatable(f"loss {getattr(loss, 'name', loss)!r} has no Isabelle definition")
        return f"Learner {rat(self.system.ctx.eta)} (mean_grad ({g}))"


