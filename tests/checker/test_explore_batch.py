"""The batch explorer (:mod:`checker.mc.explore_batch`) over integer-coded systems, among them the FL
system's (:mod:`flmodel.fast`), against the plain explorer (:func:`checker.mc.explore.explore` with
``fast=False``, one Python state at a time) as the reference: the same states in the same order, the
same CSR arrays, actions and exact probabilities, the same observables on every state, and the same
partial structure, frontier and reason under every state and transition limit."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import json
from collections.abc import Hashable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.load import resolve_scenario_path
from checker.app.reductions import REDUCTIONS, Reductions, reduce_system
from checker.app.value_reductions import reduce_values
from checker.cli.main import main
from checker.markov.distributions import observable_distribution
from checker.markov.models import mdp_from_kripke
from checker.mc.explore import Limits, Progress, explore
from checker.mc.explore_batch import BatchSteps, RowIndex, explore_batch, first_unique
from checker.mc.kripke import Kripke
from checker.mc.ts import Step
from flmodel.fast import batch_view
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_build import ScenarioSystem, build_system
from flmodel.symmetry import SymmetricSystem, detect_symmetry
from tests.strategies import star_scenario_text


def assert_same(plain: Kripke, fast: Kripke, *, observables: bool = True) -> None:
    """Everything the two explorations give is equal (the batch one says it ran)."""
    assert fast.stats.get("batch") == 1.0 and "batch" not in plain.stats
    assert fast.num_states == plain.num_states
    for name in ("initial", "succ_ptr", "succ_idx", "edge_action"):
        a, b = getattr(plain, name), getattr(fast, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert fast.actions == plain.actions
    assert (fast.edge_prob_exact is None) == (plain.edge_prob_exact is None)
    if plain.edge_prob_exact is not None:
        assert fast.edge_prob_exact is not None and fast.edge_prob is not None and plain.edge_prob is not None
        assert list(fast.edge_prob_exact) == list(plain.edge_prob_exact)
        assert all(type(p) is Fraction for p in fast.edge_prob_exact)
        assert np.array_equal(fast.edge_prob, plain.edge_prob)
    assert (fast.complete, fast.limit_reason) == (plain.complete, plain.limit_reason)
    assert (fast.frontier is None) == (plain.frontier is None)
    if plain.frontier is not None:
        assert np.array_equal(fast.frontier, plain.frontier)
    assert fast.stats["depth"] == plain.stats["depth"]
    assert (fast.states is None) == (plain.states is None)
    if plain.states is not None:
        assert fast.states is not None and list(fast.states) == list(plain.states)
    if observables:
        assert list(fast.observables) == list(plain.observables)
        for name in plain.observables:
            assert list(fast.observables[name]) == list(plain.observables[name]), name


def both(system: Any, **kwargs: Any) -> tuple[Kripke, Kripke]:
    """The plain and the batch exploration of ``system``."""
    return explore(system, fast=False, **kwargs), explore(system, **kwargs)


def scenario_system(name: str, defines: dict[str, int] | None = None) -> ScenarioSystem:
    return build_system(load_scenario(resolve_scenario_path(name), defines=defines))


# ------------------------------------------------------------------------------------------ FL systems
@pytest.mark.parametrize(("name", "defines"), [("moniteo", None), ("moniteo_rounds", None),
                                               ("moniteo_swarm8", {"N": 4})])
def test_bundled_round_scenarios_explore_identically(name: str, defines: dict[str, int] | None) -> None:
    system = scenario_system(name, defines)
    assert not isinstance(system.batch_system(), str)
    plain, fast = both(system)
    assert plain.complete and plain.num_states > 100
    assert_same(plain, fast)


def test_bundled_scenario_with_its_dead_values_reset() -> None:
    scenario = load_scenario(resolve_scenario_path("moniteo_rounds"))
    only = Reductions(**{name: name == "dead_values" for name in REDUCTIONS})
    system, applied = reduce_system(build_system(scenario), scenario, only)
    assert applied.names == ["dead_values"] and system.fl.reset_unready
    plain, fast = both(system)
    assert_same(plain, fast)


@pytest.mark.parametrize(("name", "why"), [
    ("seed_model", "fedavg_rounds"), ("moniteo_published", "fedavg_rounds"),
    ("moniteo_link_loss", "time-varying topology"), ("walker_family", "time-varying topology")])
def test_what_is_not_coded_is_explored_plainly(name: str, why: str) -> None:
    defines = {"N": 2} if name == "walker_family" else None
    system = scenario_system(name, defines)
    refusal = system.batch_system()
    assert isinstance(refusal, str) and why in refusal
    k = explore(system, limits=Limits(max_states=50))
    assert "batch" not in k.stats


def test_reduced_systems_are_refused() -> None:
    text = star_scenario_text([1, 2, 1], noise="rr grid {0, 1} r 1/2 clip")
    system = build_system(parse_scenario(text))
    assert "cone" in str(batch_view(reduce_values(system.fl, forget={"curmodpar"})))
    assert "gradient sum" in str(batch_view(reduce_values(system.fl, sum_gradients=True)))
    symmetric = SymmetricSystem(system, detect_symmetry(system)[0])
    assert isinstance(symmetric.batch_system(), str)
    assert "batch" not in explore(symmetric).stats
    unpartitioned = build_system(parse_scenario(star_scenario_text([1, 2], partitioned=False)))
    assert "put_part_once" in str(unpartitioned.batch_system())
    full = build_system(parse_scenario(star_scenario_text([1, 2], traces="full")))
    assert "trace" in str(full.batch_system())


NOISES = ["rr grid {0, 1} r 1/2 clip", "rr grid {0, 1, 2} r 1/3 clip", "geometric r 1/2 range 0 .. 2 clip",
          "additive {0: 1/2, 1/2: 1/4, -1: 1/4}", "none", "gaussian q 1/2 range -1 .. 1 step 1/2 clip"]


@st.composite
def round_scenarios(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A generated round-based star scenario: 1-3 clients with data 0-3, one mechanism for all or one
    per client, on the update or on the gradient, 1-2 rounds, sometimes an events bound, sometimes a
    secret datum (the observables ``secret_in_dataset`` and ``holds_d<n>``), default, permissive,
    ignored or hand-written policies (which may leave a client without its report step); and the
    clients whose gradient the dead-value reset resets."""
    n = draw(st.integers(1, 3))
    values = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    per_client = draw(st.booleans())
    noise: str | list[str] = (draw(st.lists(st.sampled_from(NOISES), min_size=n, max_size=n)) if per_client
                              else draw(st.sampled_from(NOISES)))
    rounds = draw(st.integers(1, 2))
    events = draw(st.one_of(st.none(), st.integers(1, 2 * n + 2)))
    shared = draw(st.booleans())  # every client at site o1, or each at its own
    text = star_scenario_text(values, noise=noise, rounds=rounds, events=events,
                              sites=[1] * n if shared else None, hot=draw(st.booleans()))
    if draw(st.booleans()):
        text = text.replace(" on update", " on gradient")
    policies = draw(st.sampled_from(["default", "permissive", "ignored", "own"]))
    if policies == "own":
        allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        lines = ["policy at ground: srv may put_part, eval_server"]
        lines += [f"policy at o{1 if shared else i}: sat{i} may get_grad"
                  for i in range(1, n + 1) if allowed[i - 1]]
        text = text.replace("policies default", "\n".join(lines))
    elif policies != "default":
        text = text.replace("policies default", f"policies {policies}")
    reset = [f"sat{i}" for i in range(1, n + 1) if draw(st.booleans())]
    return text, reset


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(round_scenarios())
def test_generated_round_scenarios_explore_identically(case: tuple[str, list[str]]) -> None:
    text, reset = case
    system = build_system(parse_scenario(text))
    if reset:
        system = ScenarioSystem(reduce_values(system.fl, reset_unready=reset), system.secrets,
                                system.scenario)
    assert not isinstance(system.batch_system(), str)
    plain, fast = both(system, limits=Limits(max_states=5000))
    assert_same(plain, fast)


# ------------------------------------------------------------------------------------------ limits
def test_state_and_transition_limits_give_the_same_partial_structure() -> None:
    system = scenario_system("moniteo_swarm8", {"N": 4})
    full = explore(system, fast=False)
    n, m = full.num_states, full.num_transitions
    for states in (1, 2, 3, 10, 100, n - 1, n, n + 1):
        assert_same(*both(system, limits=Limits(max_states=states)), observables=False)
    for transitions in (1, 3, 4, 50, m - 1, m, m + 1):
        assert_same(*both(system, limits=Limits(max_transitions=transitions)), observables=False)
    for states, transitions in ((50, 100), (50, 200), (200, 300), (5, 3)):
        plain, fast = both(system, limits=Limits(max_states=states, max_transitions=transitions))
        assert_same(plain, fast, observables=False)
        assert not fast.complete


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 1000), st.integers(1, 3000), st.integers(1, 64))
def test_limits_anywhere_in_two_rounds(states: int, transitions: int, slice_states: int) -> None:
    system = scenario_system("moniteo_rounds")
    batch = system.batch_system()
    assert not isinstance(batch, str)
    lim = Limits(max_states=states, max_transitions=transitions)
    assert_same(explore(system, fast=False, limits=lim),
                explore_batch(batch, limits=lim, slice_states=slice_states), observables=False)


def _true_successors(partial: Kripke, full: Kripke) -> None:
    """Every expanded state of a partial structure has its successors of the full one (same ids)."""
    assert partial.frontier is not None and partial.frontier.any()
    for s in np.flatnonzero(~partial.frontier).tolist():
        assert np.array_equal(partial.successors(s), full.successors(s))


@pytest.mark.parametrize("limit", [Limits(max_seconds=0.0), Limits(max_memory_mb=1.0)])
def test_time_and_memory_limits_stop_between_slices(limit: Limits) -> None:
    system = scenario_system("moniteo_swarm8", {"N": 5})
    full = explore(system, fast=False)
    batch = system.batch_system()
    assert not isinstance(batch, str)
    plain = explore(system, fast=False, limits=limit)
    fast = explore_batch(batch, limits=limit, slice_states=64)
    assert plain.limit_reason == fast.limit_reason and fast.limit_reason is not None
    assert not fast.complete and 1 < fast.num_states < full.num_states
    _true_successors(plain, full)
    _true_successors(fast, full)


def test_progress_reports_and_options() -> None:
    system = scenario_system("moniteo_swarm8", {"N": 3})
    seen: list[Progress] = []
    plain, fast = explore(system, fast=False), explore(system, progress=seen.append, progress_interval=0.0)
    assert seen and seen[-1].states == fast.num_states and seen[-1].frontier == 0
    assert all(a.states <= b.states for a, b in itertools.pairwise(seen))
    assert_same(plain, fast)
    for kwargs in ({"keep_states": False}, {"lazy_observables": False}, {"observables": ("round", "ready")},
                   {"probabilities": False}, {"keep_states": False, "observables": ()}):
        assert_same(*both(system, **kwargs))


# ------------------------------------------------------------------------------------------ generic
class Walk:
    """A plain transition system and its integer coding: a pair ``(i, x)`` steps to ``(i + 1, x·a mod
    M)`` or ``(i + 1, x·b mod M)`` (probability 1/3 and 2/3, one action) or, with the action ``reset``,
    to ``(i + 1, 1)``, until ``i = depth``; with a large ``M`` the rows need more than one 63-bit word."""

    def __init__(self, depth: int, modulus: int, a: int = 3, b: int = 7):
        self.depth, self.m, self.a, self.b = depth, modulus, a, b
        self.width = 3
        self.actions = ["mul", "reset"]
        self.probabilities = [Fraction(1, 3), Fraction(2, 3), Fraction(1)]

    def initial_states(self) -> list[tuple[int, int]]:
        return [(0, 1), (0, 2), (0, 1)]

    def successors(self, s: tuple[int, int]) -> list[Step[tuple[int, int]]]:
        i, x = s
        if i >= self.depth:
            return []
        return [Step("mul", (i + 1, x * self.a % self.m), Fraction(1, 3)),
                Step("mul", (i + 1, x * self.b % self.m), Fraction(2, 3)),
                Step("reset", (i + 1, 1), Fraction(1))]

    def observable_names(self) -> Sequence[str]:
        return ["x"]

    def observe(self, s: Hashable, name: str) -> object:
        assert isinstance(s, tuple)
        return s[1]

    # the integer coding: (i, high and low halves of x)
    def initial_rows(self) -> np.ndarray:
        return np.array([self._row(s) for s in self.initial_states()], dtype=np.int64)

    def _row(self, s: tuple[int, int]) -> list[int]:
        return [s[0], s[1] >> 31, s[1] & ((1 << 31) - 1)]

    def decode(self, row: np.ndarray) -> Hashable:
        i, hi, lo = row.tolist()
        return (i, (hi << 31) | lo)

    def successors_batch(self, rows: np.ndarray) -> BatchSteps:
        src, act, tgt, prob = [], [], [], []
        for k, row in enumerate(rows):
            for step in self.successors(self.decode(row)):  # type: ignore[arg-type]
                src.append(k)
                act.append(self.actions.index(step.action))  # type: ignore[arg-type]
                tgt.append(self._row(step.target))
                prob.append(self.probabilities.index(step.probability))
        return BatchSteps(np.array(src, dtype=np.int64), np.array(act, dtype=np.int64),
                          np.array(tgt, dtype=np.int64).reshape(-1, 3), np.array(prob, dtype=np.int64))


@pytest.mark.parametrize("modulus", [11, 1 << 61])
def test_a_generic_batch_system(modulus: int) -> None:
    walk = Walk(6, modulus)
    plain = explore(walk, fast=False)
    for slice_states in (1, 5, 1 << 15):
        assert_same(plain, explore_batch(walk, slice_states=slice_states))
    assert plain.num_states > 100 or modulus == 11


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**62), min_size=3, max_size=3), min_size=1, max_size=60),
       st.integers(1, 3))
def test_row_index_is_an_exact_map(rows: list[list[int]], chunks: int) -> None:
    arr = np.array(rows, dtype=np.int64)
    reference: dict[tuple[int, ...], int] = {}
    index = RowIndex(3)
    index.rebuild(arr[:0], arr.max(axis=0))
    for part in np.array_split(arr, chunks):
        if not len(part):
            continue
        keys = index.pack(part)
        uniq, first, inverse = first_unique(keys)
        assert np.array_equal(uniq[inverse], keys)
        assert all(first[inverse[i]] <= i for i in range(len(part)))
        found = index.lookup(uniq)
        expected = [reference.get(tuple(part[f].tolist()), -1) for f in first.tolist()]
        assert found.tolist() == expected
        new = np.flatnonzero(found < 0)
        ids = np.arange(len(reference), len(reference) + len(new))
        index.insert(uniq[new], ids)
        for f, i in zip(first[new].tolist(), ids.tolist(), strict=True):
            reference[tuple(part[f].tolist())] = i
    assert index.lookup(index.pack(arr)).tolist() == [reference[tuple(r)] for r in rows]


def test_the_fl_view_decodes_what_it_encodes() -> None:
    system = scenario_system("moniteo_rounds")
    view = batch_view(system.fl, system)
    assert not isinstance(view, str)
    k = explore(system, fast=False)
    assert k.states is not None
    for s in k.states:
        assert view.decode(view.encode(s)) == s  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ the CLI
def _explore_json(argv: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["explore", *argv, "--json"])
    return code, json.loads(out.getvalue())


def test_cli_explore_says_which_explorer_ran(tmp_path: Path) -> None:
    code, fast = _explore_json(["moniteo_swarm8", "-D", "N=4"])
    code_plain, plain = _explore_json(["moniteo_swarm8", "-D", "N=4", "--no-fast"])
    assert code == code_plain == 0 and (fast["explorer"], plain["explorer"]) == ("batch", "plain")
    figures = ("states", "transitions", "deadlocks", "depth", "initial", "complete", "limit_reason")
    assert [fast[k] for k in figures] == [plain[k] for k in figures]
    limited = _explore_json(["moniteo_swarm8", "-D", "N=4", "--max-states", "100"])
    assert limited[0] == 1 and limited[1]["explorer"] == "batch" and not limited[1]["complete"]
    assert _explore_json(["moniteo_link_loss", "--max-states", "100"])[1]["explorer"] == "plain"
    path = tmp_path / "swarm.json"
    assert main(["explore", "moniteo_swarm8", "-D", "N=3", "--write-json", str(path)]) == 0
    assert _explore_json([str(path)])[1]["explorer"] == "file"


def _timeless(doc: Any) -> Any:
    """A JSON document without its timings."""
    if isinstance(doc, dict):
        return {k: _timeless(v) for k, v in doc.items() if "seconds" not in k and k != "time"}
    if isinstance(doc, list):
        return [_timeless(v) for v in doc]
    return doc


@pytest.mark.parametrize("reduce", [[], ["--no-reduce"]])
def test_cli_check_gives_the_same_report_with_either_explorer(reduce: list[str]) -> None:
    runs = []
    for fast in ([], ["--no-fast"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "moniteo_swarm8", "-D", "N=3", "--json", *reduce, *fast])
        runs.append((code, _timeless(json.loads(out.getvalue()))))
    assert runs[0] == runs[1]
    assert len(runs[0][1]["properties"]) == 7 and runs[0][1]["complete"]


# ------------------------------------------------------------------------------------------ the bench's model
def _swarm_models() -> Any:
    """``bench/swarm_models.py`` (the generators bench_scale measures)."""
    path = Path(__file__).resolve().parents[2] / "bench" / "swarm_models.py"
    spec = importlib.util.spec_from_file_location("swarm_models", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("n", "rounds", "values"), [(3, 1, 3), (3, 2, 3), (2, 2, 2), (2, 3, 3)])
def test_the_prism_swarm_is_the_generated_scenario(n: int, rounds: int, values: int, tmp_path: Path) -> None:
    """The PRISM swarm Storm builds in bench_scale has the explored structure's states and, for every
    scheduler (Storm's Pmin and Pmax), its end-of-run distribution of the model (flcheck's, exact)."""
    stormpy = pytest.importorskip("stormpy")
    models = _swarm_models()
    k = explore(build_system(parse_scenario(models.swarm_scenario(n, rounds, values))))
    assert k.stats.get("batch") == 1.0
    dtmc = mdp_from_kripke(k).induced_dtmc("uniform", exact=True)
    final = observable_distribution(dtmc, k.observables["curmodpar"], exact=True).dist
    prism = tmp_path / "swarm.prism"
    prism.write_text(models.swarm_prism(n, values, rounds=rounds))
    program = stormpy.parse_prism_program(str(prism))
    assert stormpy.build_model(program).nr_states == k.num_states
    for total in range(n * (values - 1) + 1):
        goal = f"rnd={rounds} & total={total}"
        props = stormpy.parse_properties(f"Pmin=? [F ({goal})]; Pmax=? [F ({goal})]", program)
        model = stormpy.build_model(program, props)
        expected = float(final.get((Fraction(total, n),), Fraction(0)))
        for prop in props:
            got = stormpy.model_checking(model, prop).get_value_vector()[model.initial_states[0]]
            assert got == pytest.approx(expected, abs=1e-12)
