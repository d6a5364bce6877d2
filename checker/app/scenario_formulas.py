"""The formulas of a scenario's properties: parsed with their positions in the scenario file, and
checked against the scenario's vocabulary before anything is explored.

Every command that reads a scenario (``check``, ``explore``, ``ctl``, ``privacy``, …) runs
:func:`validate_scenario`, so a typo anywhere in a property is exit 2 at its position in every
command, never a verdict (or a state count) on a file that ``check`` would refuse.
"""

from __future__ import annotations

import functools

from checker.app.scenario_vocabulary import scenario_vocabulary
from checker.errors import InputError, Position
from checker.mc import ctl_ast
from checker.mc.atoms import AtomEvaluator
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from checker.mc.vocabulary import Vocabulary, check_formula
from flmodel.errors import Diagnostic, ModelError
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem
from flmodel.scenario_check import check_observables
from flmodel.scenario_properties import AttackProperty, DpProperty, FormulaProperty


def parse_property(p: FormulaProperty) -> ctl_ast.Formula:
    """The property's formula, parsed with its position in the scenario file, once: the validation
    before exploring, the reductions and the check read the same formula object (the formulas are
    immutable; an error is raised again at each request)."""
    f = p.formula
    return _parsed(f.text, f.pos.source, f.pos.line or 1, f.pos.column or 1)


def parse_dp_query(p: DpProperty) -> ctl_ast.DPQuery:
    """The ``D{ε,δ}[ψ]`` query of a ``dp`` property (any other formula there is bad input at its
    position: :func:`validate_scenario` refuses it before anything is explored)."""
    f = parse_property(p)
    if not isinstance(f, ctl_ast.DPQuery):
        raise InputError(f"a dp property needs a D{{ε,δ}}[ψ] query, got {f}", position=p.formula.pos)
    return f


@functools.lru_cache(maxsize=1024)
def _parsed(text: str, source: str, line: int, column: int) -> ctl_ast.Formula:
    return parse_formula(text, source=source, line=line, column=column)


def formula_diagnostics(scenario: Scenario, kripke: Kripke | None,
                        vocabulary: Vocabulary) -> list[Diagnostic]:
    """Parse every formula and check its atoms against the vocabulary (before exploring: ``kripke``
    ``None``) or evaluate them on the explored structure, so that all formula errors are reported at
    once (with their positions in the scenario file) before any property is decided."""
    diags: list[Diagnostic] = []
    evaluator = None if kripke is None else AtomEvaluator(kripke)
    for p in scenario.properties:
        if not isinstance(p, FormulaProperty):
            continue
        try:
            formula = parse_property(p)
            if (p.kind == "dp") != isinstance(formula, ctl_ast.DPQuery):
                what = ("a D{ε,δ}[ψ] query" if p.kind == "dp"
                        else "a state formula (D{ε,δ} needs a dp property)")
                raise InputError(f"a {p.kind} property needs {what}, got {formula}", position=p.formula.pos)
            check_formula(formula, vocabulary)
            if evaluator is not None:
                for atom in ctl_ast.atoms_of(formula):
                    evaluator.evaluate(atom)
        except InputError as exc:
            pos = exc.position or Position(scenario.source)
            exp = f"; expected {exc.expected}" if exc.expected else ""
            diags.append(Diagnostic(pos, f"property {p.name!r}: {exc.message}{exp}"))
    return diags


def validate_scenario(scenario: Scenario, system: ScenarioSystem) -> Vocabulary:
    """The vocabulary of ``system``, after checking that every observed name exists, every ``attack``
    property names a known attack and every property's formula parses and type-checks
    (:class:`ModelError` listing all problems otherwise)."""
    problems = check_observables(scenario, set(system.observable_names()))
    attacks = [p for p in scenario.properties if isinstance(p, AttackProperty)]
    if attacks:
        from checker.app.attacks import ATTACKS  # lazy: the attacks import scipy and scikit-learn

        expected = " | ".join(sorted(ATTACKS))
        problems += [Diagnostic(p.pos, f"property {p.name!r}: unknown attack {p.attack!r}; "
                                       f"expected {expected}") for p in attacks if p.attack not in ATTACKS]
    if problems:
        raise ModelError(problems)
    vocabulary = scenario_vocabulary(system)
    diags = formula_diagnostics(scenario, None, vocabulary)
    if diags:
        raise ModelError(diags)
    return vocabulary
