"""One typed record per property kind (:mod:`flmodel.scenario_properties`): the transformer makes the
record of each kind with only its own fields, the printer writes it back, and the checks read the parts
the kinds share through one accessor each."""

from __future__ import annotations

import dataclasses
import typing
from fractions import Fraction

import flcheck_spec
import pytest

from flmodel.errors import ModelError
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_properties import (
    AdvantageProperty,
    AttackProperty,
    AttackTreeProperty,
    BudgetProperty,
    CrossvalProperty,
    CtlProperty,
    DpProperty,
    EpsSpec,
    PrivacyProperty,
    ProbabilityProperty,
    PropertyDecl,
    formula_of,
    neighbour_of,
    observing_of,
)
from tests.strategies import star_scenario_text

#: each kind's record and its fields (``pos`` aside): nothing another kind needs
FIELDS: dict[type, set[str]] = {
    CtlProperty: {"name", "formula"},
    AttackTreeProperty: {"name", "formula", "expect", "reduced"},
    ProbabilityProperty: {"name", "formula", "compare", "bound", "scheduler"},
    DpProperty: {"name", "formula", "neighbour", "scheduler", "observing"},
    PrivacyProperty: {"name", "eps", "neighbour", "observing", "scheduler"},
    AdvantageProperty: {"name", "bound_kind", "bound", "neighbour", "observing"},
    CrossvalProperty: {"name", "neighbour", "options"},
    AttackProperty: {"name", "attack", "options"},
    BudgetProperty: {"name", "eps", "neighbour", "delta", "budget_scope"},
}

#: one property of every kind, as a scenario writes it
WRITTEN = [
    ("ctl AG true", CtlProperty),
    ("attack_tree reduced exists round = 1", AttackTreeProperty),
    ("probability uniform >= 1/2 reach round = 1", ProbabilityProperty),
    ("dp D{ln(2), 0}[F round = 1] between hot scheduler blind observing curmodpar;", DpProperty),
    ("privacy epsilon <= ln(9) between hot scheduler memoryless observing curmodpar", PrivacyProperty),
    ("advantage <= tight(ln(3)) between hot", AdvantageProperty),
    ("advantage <= 1/2 between hot", AdvantageProperty),
    ("crossval between hot trials = 100 seed = 2", CrossvalProperty),
    ("attack mia rounds = 2", AttackProperty),
    ("budget epsilon <= ln(3) delta 1/1024 per client over rounds between hot;", BudgetProperty),
]


def test_every_kind_has_its_record_with_only_its_own_fields() -> None:
    assert set(typing.get_args(PropertyDecl)) == set(FIELDS)
    assert {cls.kind for cls in FIELDS} == {"ctl", "attack_tree", "probability", "dp", "privacy", "advantage",
                                            "crossval", "attack", "budget"}
    for cls, expected in FIELDS.items():
        assert {f.name for f in dataclasses.fields(cls)} - {"pos"} == expected, cls


@pytest.mark.parametrize("text,cls", WRITTEN, ids=[t for t, _ in WRITTEN])
def test_the_transformer_makes_the_record_of_the_kind(text: str, cls: type) -> None:
    scenario = parse_scenario(star_scenario_text([1, 2], noise="rr grid {0, 1, 2} r 1/2", hot=True,
                                                 properties=[text]))
    (p,) = scenario.properties
    assert type(p) is cls and p.name == "p0"
    assert parse_scenario(scenario.to_text()) == scenario  # printed back to the same record
    assert (formula_of(p) is not None) == (p.kind in ("ctl", "attack_tree", "probability", "dp"))
    assert (neighbour_of(p) == "hot") == (p.kind not in ("ctl", "attack_tree", "probability", "attack"))
    assert [n.name for n in observing_of(p)] == (["curmodpar"] if "observing" in text else [])


def test_the_records_carry_typed_values() -> None:
    def one(text: str) -> PropertyDecl:
        s = parse_scenario(star_scenario_text([1, 2], noise="rr grid {0, 1, 2} r 1/2", hot=True,
                                              properties=[text]))
        return s.properties[0]

    adv = one("advantage <= theorem1(ln(9)) between hot")
    assert isinstance(adv, AdvantageProperty) and adv.bound == EpsSpec(Fraction(9), True)
    number = one("advantage <= 1/4 between hot")
    assert isinstance(number, AdvantageProperty) and number.bound == Fraction(1, 4)
    budget = one("budget epsilon <= 2 between hot;")
    assert isinstance(budget, BudgetProperty) and (budget.delta, budget.budget_scope) == (0, "sequence")
    dp = one("dp D{ln(2), 0}[F round = 1] between hot;")
    assert isinstance(dp, DpProperty) and dp.scheduler == "worst"
    tree = one("attack_tree absent round = 2")
    assert isinstance(tree, AttackTreeProperty) and (tree.expect, tree.reduced) == ("absent", False)


@pytest.mark.parametrize("name", sorted(flcheck_spec.bundled_scenarios()))
def test_bundled_properties_are_typed_records(name: str) -> None:
    scenario = load_scenario(flcheck_spec.resource("scenarios", f"{name}.fl"))
    assert scenario.properties
    for p in scenario.properties:
        assert type(p) in FIELDS and p.text().startswith(f"property {p.name}: {p.kind}")


def test_an_out_of_range_figure_is_refused_at_its_kind() -> None:
    for text, message in (("advantage <= 3/2 between hot", "bound 3/2 is not in [0, 1]"),
                          ("budget epsilon <= 1 delta 2 over rounds between hot;", "δ = 2 is not in [0, 1]"),
                          ("privacy epsilon <= ln(1/2) between hot", "is negative"),
                          ("crossval between nobody", "unknown neighbour 'nobody'")):
        with pytest.raises(ModelError, match=message.replace("[", r"\[").replace("]", r"\]")):
            parse_scenario(star_scenario_text([1, 2], hot=True, properties=[text]))
