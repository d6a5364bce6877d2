"""Random bad (and harmless) input through ``checker.cli.main``: every run ends in a verdict (agreeing
with the naive reference checker where there is one) or exit 2 with a positioned one-line message;
never a traceback, exit 3, a hang or a changed input. Classes of :data:`KNOWN_OPEN` are not drawn."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.checker.ctl_reference import ReferenceChecker
from tests.fuzz import cli_options, explicit_models, formulas, scenario_mutations
from tests.fuzz.contract import OPTION, POSITIONED, VERDICT, Outcome, classify, record, run_cli
from tests.fuzz.known_open import KNOWN_OPEN

OPEN = frozenset(KNOWN_OPEN)
#: Examples per test: the quick suite, and the slow variants (1,300 generated inputs in all by default;
#: ``FLCHECK_FUZZ_LARGE=700`` gives the 2,200 of a deeper run).
QUICK, LARGE = 30, int(os.environ.get("FLCHECK_FUZZ_LARGE", "400"))
#: Classes a run may end in, and what they are called in the summary.
AGREES = "accepted, agrees with the reference"


def _settings(examples: int) -> Callable[[Any], Any]:
    return settings(max_examples=examples, deadline=None, derandomize=examples == QUICK,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much, HealthCheck.data_too_large])


def _folder(tmp_path: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=tmp_path))


def _fail(kind: str, outcome: Outcome, why: str) -> None:
    record(kind, why)
    pytest.fail(f"[{kind}] {why}\n{outcome.describe()}")


def _expect(kind: str, klass: str, outcome: Outcome, cls: str, expect: str,
            agrees: Callable[[], bool] | None = None) -> None:
    """Check ``outcome`` (class ``cls``) against the expectation of its input class ``klass``."""
    label = f"{kind}: {klass}"
    if cls not in (VERDICT, POSITIONED, OPTION):
        _fail(kind, outcome, f"{klass}: {cls}")
    if cls == VERDICT:
        if expect == "reject":
            _fail(kind, outcome, f"{klass}: verdict on bad input")
        if agrees is not None:
            if not agrees():
                _fail(kind, outcome, f"{klass}: verdict disagrees with the reference")
            record(kind, AGREES)
        else:
            record(kind, "accepted")
        return
    if expect in ("agree", "accept"):
        _fail(kind, outcome, f"{klass}: {cls} on valid input")
    record(kind, cls)
    del label


# ------------------------------------------------------------------------------------------------
# 1. mutated bundled scenarios through check and explore
# ------------------------------------------------------------------------------------------------

_ORIGINAL: dict[tuple[str, str], object] = {}


def _scenario_result(command: str, outcome: Outcome) -> object:
    data = outcome.json()
    if command == "check":
        return [(p["name"], p["verdict"]) for p in data["properties"]]  # type: ignore[union-attr]  # JSON
    return (data["states"], data["transitions"], data["deadlocks"])


def _scenario_argv(command: str, path: Path, max_states: int) -> list[str]:
    return [command, str(path), "--max-states", str(max_states), "--max-seconds", "10", "--json"]


def _original(command: str, base: str, max_states: int) -> object:
    key = (command, base)
    if key not in _ORIGINAL:
        outcome = run_cli(_scenario_argv(command, scenario_mutations.scenario_path(base), max_states))
        _ORIGINAL[key] = _scenario_result(command, outcome)
    return _ORIGINAL[key]


def scenario_example(tmp_path: Path, data: st.DataObject, max_states: int) -> None:
    command = data.draw(st.sampled_from(["check", "explore"]), label="command")
    prefix = f"scenario {command}: "
    excluded = frozenset(k.removeprefix(prefix) for k in OPEN if k.startswith(prefix))
    mutated = data.draw(scenario_mutations.mutated_scenarios(excluded, reads_properties=command == "check"))
    path = _folder(tmp_path) / f"{mutated.base}.fl"
    path.write_bytes(mutated.data)
    outcome = run_cli(_scenario_argv(command, path, max_states), [path])
    cls = classify(outcome, [str(path)])
    expect = {"same": "either", "any": "either", "reject": "reject"}[mutated.expect]
    if command == "explore" and mutated.mutation.endswith("in a formula"):
        expect = "either"  # explore builds the state space and never reads the properties
    agrees = None
    if mutated.expect == "same":
        def agrees() -> bool:
            return _scenario_result(command, outcome) == _original(command, mutated.base, max_states)
    _expect(f"scenario {command}", mutated.mutation, outcome, cls, expect, agrees)


@_settings(QUICK)
@given(data=st.data())
def test_mutated_scenarios(tmp_path: Path, data: st.DataObject) -> None:
    scenario_example(tmp_path, data, max_states=200)


@pytest.mark.slow
@_settings(LARGE - 100)
@given(data=st.data())
def test_mutated_scenarios_large(tmp_path: Path, data: st.DataObject) -> None:
    scenario_example(tmp_path, data, max_states=500)


# ------------------------------------------------------------------------------------------------
# 2. random explicit models, mutated, through ctl and explore
# ------------------------------------------------------------------------------------------------


def _reference_verdict(model: explicit_models.ExplicitModel, formula: formulas.Formula,
                       semantics: str) -> str:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))  # the reference recurses once per operator
    try:
        holds = ReferenceChecker(model.reference(), semantics).holds(formulas.to_ast(formula))  # type: ignore[arg-type]  # duck-typed structure
    finally:
        sys.setrecursionlimit(limit)
    return "holds" if holds else "violated"


def _verdict(outcome: Outcome) -> str:
    """holds or violated (a vacuous truth is a truth)."""
    verdict = str(outcome.json()["verdict"])
    return "holds" if verdict == "holds vacuously" else verdict


def _write_model(folder: Path, files: tuple[bytes, bytes]) -> tuple[Path, Path]:
    tra, lab = folder / "model.tra", folder / "model.lab"
    tra.write_bytes(files[0])
    lab.write_bytes(files[1])
    return tra, lab


def explicit_example(tmp_path: Path, data: st.DataObject) -> None:
    command = data.draw(st.sampled_from(["ctl", "explore"]), label="command")
    names = [m for m in explicit_models.MUTATIONS if f"explicit {command}: {m}" not in OPEN]
    mutation = data.draw(st.sampled_from(names), label="mutation")
    model = data.draw(explicit_models.explicit_models(), label="model")
    mutate, expect = explicit_models.MUTATIONS[mutation]
    tra, lab = _write_model(_folder(tmp_path), mutate(model, data.draw))
    kind = f"explicit {command}"
    if command == "explore":
        outcome = run_cli(["explore", str(tra), str(lab), "--json"], [tra, lab])
        cls = classify(outcome, [str(tra), str(lab)])
        _expect(kind, mutation, outcome, cls, expect,
                lambda: outcome.json()["states"] == model.num_states
                and outcome.json()["transitions"] == len({(r.src, r.choice, r.dst) for r in model.rows}))
        return
    formula = data.draw(formulas.formulas(list(model.labels), max_leaves=8), label="formula")
    semantics = data.draw(st.sampled_from(["iiif", "total"]), label="semantics")
    argv = ["ctl", str(tra), str(lab), formulas.render(formula), "--semantics", semantics, "--json"]
    outcome = run_cli(argv, [tra, lab])
    cls = classify(outcome, [str(tra), str(lab)])
    _expect(kind, mutation, outcome, cls, expect,
            lambda: _verdict(outcome) == _reference_verdict(model, formula, semantics))


@_settings(QUICK * 2)
@given(data=st.data())
def test_explicit_models(tmp_path: Path, data: st.DataObject) -> None:
    explicit_example(tmp_path, data)


@pytest.mark.slow
@_settings(LARGE)
@given(data=st.data())
def test_explicit_models_large(tmp_path: Path, data: st.DataObject) -> None:
    explicit_example(tmp_path, data)


def json_example(tmp_path: Path, data: st.DataObject) -> None:
    """The models as JSON Kripke files, mutated, through ``ctl`` (CTL and P=?) and ``explore``."""
    command = data.draw(st.sampled_from(["ctl", "pctl", "explore"]), label="command")
    names = [m for m in explicit_models.JSON_MUTATIONS if f"json {command}: {m}" not in OPEN]
    mutation = data.draw(st.sampled_from(names), label="mutation")
    model = data.draw(explicit_models.explicit_models(), label="model")
    mutate, expect = explicit_models.JSON_MUTATIONS[mutation]
    path = _folder(tmp_path) / "model.json"
    path.write_text(mutate(model, data.draw), encoding="utf-8")
    kind = f"json {command}"
    if command == "explore":
        outcome = run_cli(["explore", str(path), "--json"], [path])
        _expect(kind, mutation, outcome, classify(outcome, [str(path)]), expect,
                lambda: outcome.json()["states"] == model.num_states)
        return
    if command == "pctl":
        outcome = run_cli(["ctl", str(path), "Pmax=? [F init]" if model.kind == "mdp" else "P=? [F init]",
                           "--json"], [path])
        _expect(kind, mutation, outcome, classify(outcome, [str(path)]), "either" if expect == "agree"
                else expect)
        return
    formula = data.draw(formulas.formulas(list(model.labels), max_leaves=8), label="formula")
    outcome = run_cli(["ctl", str(path), formulas.render(formula), "--json"], [path])
    _expect(kind, mutation, outcome, classify(outcome, [str(path)]), expect,
            lambda: _verdict(outcome) == _reference_verdict(model, formula, "iiif"))


@_settings(QUICK)
@given(data=st.data())
def test_json_models(tmp_path: Path, data: st.DataObject) -> None:
    json_example(tmp_path, data)


@pytest.mark.slow
@_settings(LARGE // 2)
@given(data=st.data())
def test_json_models_large(tmp_path: Path, data: st.DataObject) -> None:
    json_example(tmp_path, data)


# ------------------------------------------------------------------------------------------------
# 3. random formulas: on explicit models (verdicts against the reference) and on a scenario
# ------------------------------------------------------------------------------------------------

#: Formula classes on a scenario (the link-loss Moniteo): the text, expectation "reject" or "either".
_BOOLEAN_OBSERVABLES = ["ready_sat1", "ready_sat2", "bound_reached", "secret_in_dataset"]
_SYNTAX_WORDS = ["EF", "(", ")", "&", "|", "E[", "U", "]", "round", "=", "!", "->", "1", ",", "{", "}", "in"]
_ILL_TYPED = ['round != "1"', "ready == 1", "round in ready", "dataset < 2", 'curmodpar == "x"',
              "bound_reached < 1"]


def _prefixed(prefix: str, words: list[str], suffix: str = "") -> st.SearchStrategy[str]:
    return st.sampled_from(words).map(lambda word: f"{prefix}{word}{suffix}")


#: Formula classes on a scenario (the link-loss Moniteo): the text, expectation "reject" or "either".
SCENARIO_FORMULAS: dict[str, tuple[st.SearchStrategy[str], str]] = {
    "valid over boolean observables": (formulas.formulas(_BOOLEAN_OBSERVABLES).map(formulas.render),
                                       "either"),
    "enabled(unknown rule)": (_prefixed("EF enabled(", ["eval_rond", "get_grd", "put_prt", "evalserver"],
                                        ")"), "reject"),
    "unknown rule as a value": (_prefixed("EF last == ", ["get_grd", "eval_servr"]), "reject"),
    "unknown client in a set": (_prefixed('EF "', ["sat4", "sat", "sta1"], '" in ready'), "reject"),
    "unknown client as a value": (_prefixed('AG server != "', ["sat9", "grnd"], '"'), "reject"),
    "ill-typed comparison": (_prefixed("EF ", _ILL_TYPED), "reject"),
    "unknown observable": (st.sampled_from(["rounnd = 1", "ready_sat4", "EF readdy == {}"]), "reject"),
    "syntax error": (st.lists(st.sampled_from(_SYNTAX_WORDS), min_size=1, max_size=8).map(" ".join)
                     .filter(lambda t: t.count("(") != t.count(")") or t.strip() in ("EF", "&", "!", "U")),
                     "reject"),
}


def explicit_formula_example(tmp_path: Path, data: st.DataObject, max_depth: int) -> None:
    model = data.draw(explicit_models.explicit_models(), label="model")
    labels = list(model.labels)
    klass = data.draw(st.sampled_from([k for k in ("random", "deep", "very deep", "unknown label",
                                                   "enabled(unknown rule)", "ill-typed comparison",
                                                   "deep parentheses")
                                       if f"formula explicit: {k}" not in OPEN]), label="class")
    formula: formulas.Formula | None = None
    if klass == "random":
        formula = data.draw(formulas.formulas(labels), label="formula")
        text, expect = formulas.render(formula), "agree"
    elif klass in ("deep", "very deep"):
        low, high = (50, 400) if klass == "deep" else (max_depth - 50, max_depth)
        formula = data.draw(formulas.deep_formulas(labels, low, high), label="formula")
        text, expect = formulas.render(formula), "agree"
    elif klass == "deep parentheses":
        atom = data.draw(st.sampled_from(labels))
        formula = ("label", atom)
        text, expect = formulas.nested_parentheses(atom, data.draw(st.integers(50, max_depth))), "agree"
    elif klass == "unknown label":
        text, expect = f"EF ({data.draw(st.sampled_from(labels))} & goall)", "reject"
    elif klass == "enabled(unknown rule)":
        text, expect = "EF enabled(eval_rond)", "reject"
    else:
        text, expect = data.draw(st.sampled_from(['round != "1"', "init == 1", 'goal != "x"'])), "reject"
    tra, lab = _write_model(_folder(tmp_path), explicit_models.MUTATIONS["unchanged"][0](model, data.draw))
    outcome = run_cli(["ctl", str(tra), str(lab), text, "--json", "--no-vacuity"], [tra, lab])
    cls = classify(outcome, ["<formula>"])
    _expect("formula explicit", klass, outcome, cls, expect,
            None if formula is None else
            lambda: _verdict(outcome) == _reference_verdict(model, formula, "iiif"))


def scenario_formula_example(tmp_path: Path, data: st.DataObject) -> None:
    klass = data.draw(st.sampled_from([k for k in SCENARIO_FORMULAS if f"formula scenario: {k}" not in OPEN]))
    strategy, expect = SCENARIO_FORMULAS[klass]
    text = data.draw(strategy, label="formula")
    path = cli_options.copy_scenario(_folder(tmp_path))
    outcome = run_cli(["ctl", str(path), text, "--max-states", "300", "--max-seconds", "10"], [path])
    _expect("formula scenario", klass, outcome, classify(outcome, ["<formula>", str(path)]), expect)


@_settings(QUICK)
@given(data=st.data())
def test_formulas_on_explicit_models(tmp_path: Path, data: st.DataObject) -> None:
    explicit_formula_example(tmp_path, data, max_depth=500)


@_settings(QUICK)
@given(data=st.data())
def test_formulas_on_a_scenario(tmp_path: Path, data: st.DataObject) -> None:
    scenario_formula_example(tmp_path, data)


@pytest.mark.slow
@_settings(LARGE)
@given(data=st.data())
def test_formulas_large(tmp_path: Path, data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        explicit_formula_example(tmp_path, data, max_depth=500)
    else:
        scenario_formula_example(tmp_path, data)


# ------------------------------------------------------------------------------------------------
# 4. option values and output destinations
# ------------------------------------------------------------------------------------------------


def option_example(tmp_path: Path, data: st.DataObject) -> None:
    folder = _folder(tmp_path)
    scenario = cli_options.copy_scenario(folder)
    if data.draw(st.booleans(), label="output"):
        case = data.draw(cli_options.output_cases(OPEN), label="case")
        out = case.prepare(folder)
        watched = [scenario, out, out.parent]
        outcome = run_cli(case.argv(folder, out), watched if case.expect == "reject" else [scenario])
        _expect("output", case.name, outcome, classify(outcome, None), case.expect)
        return
    option = data.draw(cli_options.option_cases(OPEN), label="case")
    run_option_case(option, folder, scenario)


def run_option_case(option: cli_options.OptionCase, folder: Path, scenario: Path) -> None:
    """One option value through the CLI: a refused value is exit 2 on one line naming the option."""
    outcome = run_cli(option.argv(folder), [scenario])
    cls = classify(outcome, None)
    _expect("option", option.name, outcome, cls, option.expect)
    if cls == OPTION and option.option not in outcome.stderr:
        _fail("option", outcome, f"{option.name}: the message does not name {option.option}")


def test_every_refused_option_value(tmp_path: Path) -> None:
    """Every odd value that a numeric option of a command refuses (1,500 command lines, the parser's
    walk): exit 2, one line, naming the option; none reaches an engine."""
    folder = _folder(tmp_path)
    scenario = cli_options.copy_scenario(folder)
    cases = [c for c in cli_options.option_case_list(OPEN) if c.expect == cli_options.REJECT]
    assert len(cases) > 1000
    for case in cases:
        run_option_case(case, folder, scenario)


@pytest.mark.slow
def test_every_accepted_option_value(tmp_path: Path) -> None:
    """Every odd value a numeric option of a command with a time limit accepts: a verdict or exit 2,
    never exit 3 or a traceback, within the command's limits."""
    folder = _folder(tmp_path)
    scenario = cli_options.copy_scenario(folder)
    for case in cli_options.option_case_list(OPEN):
        if case.expect != cli_options.REJECT and case.runs:
            run_option_case(case, folder, scenario)


@_settings(QUICK)
@given(data=st.data())
def test_options(tmp_path: Path, data: st.DataObject) -> None:
    option_example(tmp_path, data)


@pytest.mark.slow
@_settings(LARGE - 200)
@given(data=st.data())
def test_options_large(tmp_path: Path, data: st.DataObject) -> None:
    option_example(tmp_path, data)
