"""The Python API of flcheck: load a model, explore it, check properties, judge privacy, generate attack
trees and export, with typed results for scripts and notebooks.

>>> import checker
>>> model = checker.load("seed_model")
>>> model.check("EF true").verdict
'holds'

Every function wraps the pipeline the command line uses, so a result here is the result of the
matching ``flcheck`` command:

============================  ==================================================================
:func:`load`                  :func:`checker.app.load.load_model` (scenario, bundled name,
                              ``example:NAME``, PRISM/Storm ``.tra``/``.lab``, JSON Kripke)
:meth:`Model.explore`         ``flcheck explore`` (:func:`checker.mc.explore.explore`)
:meth:`Model.check`           ``flcheck ctl``: CTL (:class:`checker.mc.ctl.ModelChecker`), PCTL's
                              ``P``/``Pmin``/``Pmax`` and dpCTL's ``D{ε,δ}`` with ``between``
                              (:mod:`checker.app.ctl_query`)
:meth:`Model.check_all`       ``flcheck check`` (:func:`checker.app.check.check_file`)
:meth:`Model.privacy`         ``flcheck privacy`` (:func:`checker.app.privacy_fl.privacy_report`)
:meth:`Model.attack_tree`     ``flcheck attack-tree``
                              (:func:`checker.attack_trees.generation.generate_attack_tree`)
:meth:`Model.export`          ``flcheck explore --write-*`` and ``flcheck export isabelle``
============================  ==================================================================

Each result (:mod:`checker.api_results`) is a frozen dataclass with ``verdict`` (where one is decided),
``to_json()`` (the JSON of the matching command, without the envelope) and ``_repr_html_()`` (a small
HTML table, shown by Jupyter); ``raw`` is the engine's own result object for everything else. Bad input raises
:class:`checker.errors.InputError` or :class:`flmodel.errors.ModelError`, as the CLI's exit 2.

Importing :mod:`checker` stays cheap: the names above are loaded on first use (``checker.__getattr__``),
and this module imports the pipelines only when a function runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.api_results import (
    AttackTreeResult,
    CheckRun,
    CtlResult,
    DPResult,
    Exploration,
    ExportResult,
    PrivacyResult,
    ProbabilityResult,
    PropertyOutcome,
)
from checker.errors import InputError, Position

if TYPE_CHECKING:
    from checker.mc.kripke import Kripke

__all__ = [
    "AttackTreeResult",
    "CheckRun",
    "CtlResult",
    "DPResult",
    "Exploration",
    "ExportResult",
    "Model",
    "PrivacyResult",
    "ProbabilityResult",
    "PropertyOutcome",
    "check",
    "check_all",
    "export_isabelle",
    "load",
]

ModelSpec = str | Path | Sequence[str | Path]


def _single(spec: ModelSpec) -> str | None:
    """The spec as one string when it is one name or path (a scenario can only be that)."""
    if isinstance(spec, str | Path):
        return str(spec)
    items = list(spec)
    return str(items[0]) if len(items) == 1 else None


class Model:
    """A model named as on the command line: a scenario file or bundled name (``"moniteo"``), an flmodel
    example (``"example:seed"``), a PRISM/Storm explicit model (``"m.tra"``, ``("m.tra", "m.lab")`` or the
    prefix ``"m"``) or a JSON Kripke file, with scenario constants set by ``defines``. The state space is
    explored on first use, under ``limits`` (:class:`checker.mc.explore.Limits`; default none), and
    kept."""

    def __init__(self, spec: ModelSpec, *, defines: Mapping[str, int] | None = None,
                 limits: Any = None) -> None:
        from checker.app.load import resolve_model_files  # lazy: the loader imports flmodel

        self.spec = spec
        self.defines = dict(defines or {})
        self.limits = limits
        self._kripke: Kripke | None = None
        self._seconds = 0.0
        single = _single(spec)
        resolved = resolve_model_files(spec)
        self.scenario_path: Path | None = None
        if single is not None and isinstance(resolved, str | Path) and str(resolved).endswith(".fl"):
            self.scenario_path = Path(resolved)

    def __repr__(self) -> str:
        return f"Model({self.spec!r}" + (f", defines={self.defines!r})" if self.defines else ")")

    @property
    def kripke(self) -> Kripke:
        """The explored structure (:class:`checker.mc.kripke.Kripke`), explored on first use."""
        if self._kripke is None:
            from checker.app.load import load_model  # lazy: the loader imports flmodel

            t0 = time.perf_counter()
            spec = self.spec if isinstance(self.spec, str | Path) else [str(s) for s in self.spec]
            self._kripke = load_model(spec, limits=self.limits, defines=self.defines or None)
            self._seconds = time.perf_counter() - t0
        return self._kripke

    def explore(self) -> Exploration:
        """The state space's size (``flcheck explore``)."""
        from checker.mc.explore import depth_of_structure, explorer_of  # lazy: exploration engine

        k = self.kripke
        return Exploration(str(k.source), int(k.num_states), int(k.num_transitions), int(k.deadlocks.sum()),
                           depth_of_structure(k), len(k.initial), bool(k.complete), k.limit_reason,
                           self._seconds, explorer_of(k))

    def check(self, formula: str, *, semantics: str = "iiif", evidence: bool = True, vacuity: bool = True,
              between: str | None = None, scheduler: str = "adaptive"
              ) -> CtlResult | ProbabilityResult | DPResult:
        """Decide ``formula`` as ``flcheck ctl`` does, with the same result.

        * CTL (``M ⊢ formula``: every initial state satisfies it), also with probability bounds inside
          (``P>=0.9 [F goal]``, ``AG (P<0.1 [X bad])``): a :class:`CtlResult`; ``semantics`` ``iiif``
          (deadlocks satisfy AX/AF) or ``total`` (deadlocks loop, NuSMV style);
        * a query ``P=? [ψ]``, ``Pmin=?``, ``Pmax=?`` at the top: a :class:`ProbabilityResult` (on a
          scenario ``P`` is the uniform scheduler's; on an explicit MDP say ``Pmin`` or ``Pmax``);
        * ``D{ε,δ}[ψ]`` on a scenario, against its declared neighbour ``between``, over the ``scheduler``
          class (``adaptive``, alias ``worst``; ``blind``; ``memoryless``; ``uniform``): a
          :class:`DPResult`."""
        from checker.app.ctl_query import (  # lazy: the PCTL and dpCTL pipelines
            dp_between,
            probabilistic_checker,
            probability_values,
            scenario_readings,
        )
        from checker.mc.ctl import ModelChecker  # lazy: CTL engine
        from checker.mc.ctl_ast import DPQuery, ProbQuery, has_probabilistic  # lazy: with the engine
        from checker.mc.ctl_parse import parse_formula  # lazy: with the engine
        from checker.mc.vocabulary import check_formula  # lazy: with the engine

        f = parse_formula(formula, source="<formula>")
        readings = scenario_readings(self.scenario_path, self.defines or None)
        if isinstance(f, DPQuery):
            dp = dp_between(self.scenario_path, f, between, defines=self.defines or None, scheduler=scheduler,
                            limits=self.limits, where="between=")
            return DPResult(str(f), dp.neighbour, dp.verdict, dp.json()["scheduler_class"], dp.reason, dp,
                            readings)
        if between is not None:
            raise InputError("between names the neighbour of a D{ε,δ}[ψ] query", None,
                             "a formula D{ε,δ}[path formula]")
        k = self.kripke
        if self.scenario_path is not None and k.vocabulary is not None:
            check_formula(f, k.vocabulary)
        if has_probabilistic(f):
            scenario = self.scenario_path is not None
            if isinstance(f, ProbQuery) and f.is_query:
                q = probability_values(k, f, semantics, scenario=scenario)
                data = q.json()
                initial = tuple((int(row["state"]), float(row["value"]), row["exact"])
                                for row in data["initial"])
                return ProbabilityResult(str(f), f.quantifier, q.scheduler, data["value"], data["exact"],
                                         initial, q, readings=readings)
            mc, _ = probabilistic_checker(k, semantics, scenario=scenario)
            res = mc.check(f, evidence=False, vacuity=False)  # as flcheck ctl
        else:
            res = ModelChecker(k, semantics).check(f, evidence=evidence, vacuity=vacuity)
        ev = res.evidence
        first = "" if ev is None else str(ev.render()).splitlines()[0]
        return CtlResult(str(res.formula), str(res.verdict), int(res.states), len(res.satisfying_initial),
                         len(res.initial), first, res, readings)

    def probability(self, formula: str, *, semantics: str = "iiif") -> ProbabilityResult:
        """:meth:`check` of a query ``P=? [ψ]``/``Pmin=?``/``Pmax=?``, typed (``InputError`` for any
        other formula)."""
        res = self.check(formula, semantics=semantics)
        if not isinstance(res, ProbabilityResult):
            raise InputError(f"{formula}: not a probability query", None,
                             "P=? [..], Pmin=? [..] or Pmax=? [..]")
        return res

    def dp(self, formula: str, *, between: str, scheduler: str = "adaptive") -> DPResult:
        """:meth:`check` of ``D{ε,δ}[ψ]`` against the declared neighbour ``between``, typed
        (``InputError`` for any other formula)."""
        res = self.check(formula, between=between, scheduler=scheduler)
        if not isinstance(res, DPResult):  # check refuses between= on any other formula before this
            raise InputError(f"{formula}: not a D{{ε,δ}}[ψ] query", None, "D{ε,δ}[path formula]")
        return res

    def check_all(self, only: Sequence[str] | None = None, *, observe: str = "sequence") -> CheckRun:
        """Every property the scenario declares (``only``: a subset by name), as ``flcheck check``."""
        return check_all(self._scenario("check_all"), only=only, defines=self.defines, observe=observe,
                         limits=self.limits)

    def privacy(self, eps: float | str | None = None, *, observe: str = "sequence") -> PrivacyResult:
        """NI-FL-DP at the model's dataset against its neighbours (``flcheck privacy``): the declared
        neighbours of a scenario, else every removal of a data point; ``eps``: the ε to decide (``None``:
        whether some finite ε holds). Needs a scenario or an ``example:NAME`` system."""
        from checker.app.privacy_fl import privacy_model, privacy_report  # lazy: the privacy pipeline
        from checker.app.privacy_results import number_json  # lazy: with the pipeline
        from checker.app.reductions import Reductions  # lazy: with the pipeline

        single = _single(self.spec)
        if single is None:
            raise InputError("privacy needs an FL model", Position(str(self.spec)),
                             "a scenario or example:NAME")
        model = privacy_model(single, self.defines or None, Reductions())  # as the CLI: every reduction
        rep = privacy_report(model.system, model.universe, observe=observe, eps=eps, limits=self.limits,
                             declared=model.declared, observing=model.observing, reducer=model.reducer)
        data = rep.json()
        eps_json = data["epsilon"]
        epsilon = float("inf") if eps_json == "inf" else float(eps_json)
        w = rep.worst
        return PrivacyResult(str(rep.verdict), epsilon, "0" if w is None else w.epsilon.text(),
                             float(number_json(w.delta)) if w else 0.0,
                             float(number_json(w.advantage)) if w else 0.0, len(rep.pairs), rep)

    def attack_tree(self, goal: str, *, max_attacks: int = 5, max_depth: int | None = None,
                    defence: str | None = None, budget: int | str | None = None) -> AttackTreeResult:
        """An IIIf attack tree for ``EF goal`` from the initial states (``flcheck attack-tree --goal``),
        evaluated under the scenario's ``attack_step`` attributes when it declares some; ``defence``:
        whether the scenario's defence of that name blocks every attack (of cost ``<= budget``, by
        default the statement's budget), as ``--defence NAME [--budget C]``."""
        from fractions import Fraction

        from checker.app.step_attributes import (  # lazy: the attack-tree pipeline
            attack_goal,
            judge_defence,
            scenario_of,
            step_table,
            summarise,
        )
        from checker.attack_trees.export import tree_to_text  # lazy: tree engine
        from checker.attack_trees.generation import AttackFound, generate_attack_tree  # lazy: tree engine

        def goal_of(structure: Kripke) -> Any:
            return attack_goal(structure, goal, "goal")[0]

        k = self.kripke
        mask, mentioned = attack_goal(k, goal, "goal")
        scenario = None if self.scenario_path is None else scenario_of(str(self.scenario_path),
                                                                       self.defines or None)
        table = step_table(scenario)
        verdict = None
        if defence is not None:
            limit = None if budget is None else Fraction(budget)
            verdict = judge_defence(scenario, defence, k, goal_of, table, limit, limits=self.limits)
        res = generate_attack_tree(k, mask, max_depth=max_depth, max_attacks=max_attacks, minimal_only=True,
                                   goal_observables=mentioned)
        if isinstance(res, AttackFound):
            summary = None if table is None else summarise(res.tree, table, k, mask)
            return AttackTreeResult(goal, True, True, res.tree.size(),
                                    tree_to_text(res.tree, k, goal_text=goal), res, k, summary, verdict)
        text = (f"no attack: AG ¬({goal}) holds on an invariant of {res.invariant_size} states"
                if res.conclusive else "unknown: no attack found in the explored part")
        return AttackTreeResult(goal, False, bool(res.conclusive), 0, text, res, k, None, verdict)

    def export(self, out: str | Path, format: str = "isabelle", **options: Any) -> ExportResult:
        """Write the model: ``explicit`` (``out.tra``/``.lab``[/``.sta``], option ``flavor``), ``json``
        (JSON Kripke), ``dot`` (Graphviz) or ``isabelle`` (the theory directory ``out`` with ROOT,
        syntax-checked as ``flcheck export isabelle``)."""
        if format == "isabelle":
            return export_isabelle([self._scenario_or_example()], out)
        if format == "explicit":
            from checker.io.prism import write_explicit  # lazy: writer

            paths = write_explicit(self.kripke, out, flavor=options.get("flavor", "storm"))
            return ExportResult(format, tuple(str(p) for p in paths))
        if format == "json":
            from checker.io.kripke_json import write_json  # lazy: writer

            return ExportResult(format, (str(write_json(self.kripke, out)),))
        if format == "dot":
            from checker.io.dot import write_dot  # lazy: writer

            return ExportResult(format, (str(write_dot(self.kripke, out, **options)),))
        raise InputError(f"unknown export format {format!r}", None, "isabelle, explicit, json or dot")

    def _scenario(self, what: str) -> str:
        if self.scenario_path is None:
            raise InputError(f"{what} needs a scenario (its properties)", Position(str(self.spec)),
                             "a scenario file (.fl) or a bundled scenario")
        return str(self.scenario_path)

    def _scenario_or_example(self) -> str:
        single = _single(self.spec)
        if single is not None and single.startswith("example:"):
            return single
        return self._scenario("the Isabelle export")


def load(spec: ModelSpec, *, defines: Mapping[str, int] | None = None, limits: Any = None) -> Model:
    """The :class:`Model` named by ``spec`` (see :class:`Model`); a name that is neither a file nor a
    bundled scenario raises :class:`checker.errors.InputError` listing the bundled ones."""
    model = Model(spec, defines=defines, limits=limits)
    single = _single(spec)
    if model.scenario_path is None and single is not None and not single.startswith("example:"):
        from checker.app.load import model_kind, resolve_model_files  # lazy: the loader imports flmodel

        model_kind(resolve_model_files(spec))  # raises for an unknown name before any exploration
    return model


def check(spec: ModelSpec, formula: str, *, defines: Mapping[str, int] | None = None,
          between: str | None = None, scheduler: str = "adaptive"
          ) -> CtlResult | ProbabilityResult | DPResult:
    """``load(spec).check(formula, between=between, scheduler=scheduler)``."""
    return load(spec, defines=defines).check(formula, between=between, scheduler=scheduler)


def check_all(scenario: str | Path, *, only: Sequence[str] | None = None,
              defines: Mapping[str, int] | None = None, observe: str = "sequence",
              limits: Any = None) -> CheckRun:
    """Every property of ``scenario`` (a path or bundled name), as ``flcheck check``
    (:func:`checker.app.check.check_file`)."""
    from checker.app.check import check_file  # lazy: the check pipeline imports every engine

    rep = check_file(scenario, only=only, defines=defines or None, observe=observe, limits=limits)
    props = tuple(PropertyOutcome(r.name, r.kind, str(r.verdict), r.value, r.value_text, r.formula,
                                  r.evidence, r.seconds) for r in rep.results)
    return CheckRun(rep.scenario_path, int(rep.kripke.num_states), int(rep.kripke.num_transitions), props,
                    rep.exit_code, rep)


def export_isabelle(scenarios: Sequence[str], out: str | Path) -> ExportResult:
    """Isabelle/HOL theories of ``scenarios`` (paths, bundled names, ``example:NAME``) in the directory
    ``out``, then the syntax check (as ``flcheck export isabelle``; not proof-checked)."""
    from checker.app.isabelle.export_files import export_texts, write_export  # lazy: Isabelle export
    from checker.app.isabelle.sources import load_export  # lazy: Isabelle export
    from checker.app.isabelle.syntax import check_export_dir  # lazy: Isabelle export

    exports = [load_export(s) for s in scenarios]
    written = write_export(export_texts(exports), out, inputs=[e.path for e in exports if e.path is not None])
    issues = check_export_dir(out)
    return ExportResult("isabelle", tuple(str(p) for p in written), tuple(str(i) for i in issues))
