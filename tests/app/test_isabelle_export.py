"""``flcheck export isabelle``: golden files under theories/, determinism, the syntax check of every
export, the proof-script shapes built from the checker's evidence, the CLI, and random scenarios."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.isabelle import sources
from checker.app.isabelle.export_files import export_texts, proof_summary, write_export
from checker.app.isabelle.sources import example_export, golden_specs, load_export, round_floats
from checker.app.isabelle.syntax import check_export_dir, check_export_texts
from checker.app.isabelle.terms import rat, theory_name
from checker.app.isabelle.theory import PropertySpec, ScenarioExport, scenario_theory_text
from checker.cli import main
from checker.errors import InputError
from checker.mc.ctl_parse import parse_formula
from flmodel.data import point
from flmodel.examples import fl_infrastructure, seed_model
from flmodel.infrastructure import Infrastructure, Protocol
from flmodel.learning import HingeLoss, Loss, SquaredLoss
from flmodel.system import Bounds, FLSystem

ROOT = Path(__file__).resolve().parents[2]
THEORIES = ROOT / "theories"
REGENERATE = "flcheck export isabelle --bundled --clean -o theories/"


def props(*pairs: tuple[str, str]) -> tuple[PropertySpec, ...]:
    return tuple(PropertySpec(n, "ctl", t, parse_formula(t)) for n, t in pairs)


#: The bundled scenarios whose exports take minutes (checked only in the separate process below).
HEAVY = ("moniteo_swarm8", "walker12_relay", "walker32_relay")


def _other_seed() -> str:
    """A string-hash seed other than this process's (when it is fixed by ``PYTHONHASHSEED``)."""
    return "4" if os.environ.get("PYTHONHASHSEED") == "3" else "3"


def _export_in_another_process(out: Path) -> dict[str, str]:
    """The whole export (``flcheck export isabelle --bundled``), written to ``out`` by another process
    with another string-hash seed than this one: file name -> text."""
    argv = [sys.executable, "-m", "checker", "export", "isabelle", "--bundled", "-o", str(out)]
    r = subprocess.run(argv, env=dict(os.environ, PYTHONHASHSEED=_other_seed()), capture_output=True,
                       text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, f"flcheck export isabelle --bundled failed:\n{r.stderr}"
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(out.iterdir())}


@pytest.fixture(scope="module")
def example_files() -> dict[str, str]:
    """The export of the flmodel examples only (fast: their state spaces are small)."""
    return export_texts([load_export(s) for s in golden_specs() if s.startswith("example:")])


# ------------------------------------------------------------------------------------------------
# golden files
# ------------------------------------------------------------------------------------------------


def test_example_theories_are_current(example_files: dict[str, str]) -> None:
    """The examples' theories (and the base theory) in theories/ are byte-identical to a fresh export
    (quick; the full set, with the larger bundled scenarios, is the slow test below)."""
    stale = sorted(n for n, text in example_files.items()
                   if n != "ROOT" and (THEORIES / n).read_text(encoding="utf-8") != text)
    assert not stale, f"theories/ is out of date ({stale}); regenerate with\n    {REGENERATE}"
    assert check_export_texts(example_files) == []


@pytest.mark.slow
def test_bundled_export_is_current_valid_and_deterministic(tmp_path: Path) -> None:
    """One export of the bundled scenarios and examples (``--bundled``, minutes), in another process with
    another string-hash seed, and every check that needs it (one test, so the export runs once per slow
    run whichever worker takes it):

    1. theories/ holds exactly that export, byte for byte;
    2. every exported file passes the syntax check, and ROOT is the session listing every theory;
    3. this process's export of every bundled scenario but the heaviest (``HEAVY``), and of every
       example, is the same bytes (the quantitative verdicts come from other engines, whose float sums
       may run in set order, so a hash-seed dependence would show here)."""
    golden = _export_in_another_process(tmp_path)
    problems: list[str] = []

    committed = {p.name: p.read_text(encoding="utf-8") for p in THEORIES.iterdir() if p.is_file()}
    stale = sorted(n for n in golden if committed.get(n) != golden[n])
    extra = sorted(set(committed) - set(golden))
    if stale or extra:
        problems.append(f"theories/ is out of date (stale: {stale}, not generated: {extra}); regenerate "
                        f"with\n    {REGENERATE}\nand commit the result")

    issues = check_export_texts(golden)
    if issues:
        problems.append(f"the export fails the syntax check: {issues}")
    if not golden.get("ROOT", "").startswith("session FLcheck = HOL +"):
        problems.append(f"ROOT does not open the session FLcheck = HOL: {golden.get('ROOT', '')[:80]!r}")
    unlisted = sorted(n for n in golden if n.endswith(".thy")
                      and not re.search(rf"^  +{Path(n).stem}$", golden.get("ROOT", ""), re.M))
    if unlisted:
        problems.append(f"ROOT does not list the theories {unlisted}")

    specs = [s for s in golden_specs() if s not in HEAVY]
    here = export_texts([load_export(s) for s in specs])
    if len(here) <= len(specs):
        problems.append(f"{len(here)} files exported here for {len(specs)} specs (expected one theory "
                        "per spec and the session files)")
    differ = sorted(n for n, text in here.items() if n != "ROOT" and golden.get(n) != text)
    if differ:
        problems.append(f"the export differs between hash seeds {_other_seed()!r} (other process) and "
                        f"{os.environ.get('PYTHONHASHSEED', 'random')!r} (this one) in {differ}")

    assert not problems, "\n".join(problems)


def test_committed_theories_pass_the_syntax_check() -> None:
    assert check_export_dir(THEORIES) == []


# ------------------------------------------------------------------------------------------------
# determinism
# ------------------------------------------------------------------------------------------------


def test_export_is_deterministic_within_a_process() -> None:
    exp = example_export("example:seed")
    assert scenario_theory_text(exp) == scenario_theory_text(example_export("example:seed"))


def test_export_is_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    """Two processes with different string-hash seeds write the same bytes."""
    outs = []
    for seed in ("1", "2"):
        d = tmp_path / seed
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run(
            [sys.executable, "-m", "checker", "export", "isabelle", "example:moniteo_rr", "-o", str(d)],
            env=env, capture_output=True, text=True, timeout=300, cwd=ROOT,
        )
        assert r.returncode == 0, r.stderr
        outs.append({p.name: p.read_bytes() for p in sorted(d.iterdir())})
    assert outs[0] == outs[1]
    assert len(outs[0]) == 4  # the base theory, the scenario's, ROOT and the manifest SHA256SUMS


# ------------------------------------------------------------------------------------------------
# what the scenario theory contains
# ------------------------------------------------------------------------------------------------


def test_rationals_are_exact() -> None:
    assert rat(Fraction(3, 10)) == "(3 / 10)"
    assert rat(Fraction(-1, 2)) == "(- (1 / 2))"
    assert rat(7) == "7" and rat(-2) == "(- 2)" and rat(0) == "0"


def test_seed_theory_has_the_locale_and_the_evidence() -> None:
    text = scenario_theory_text(example_export("example:seed"))
    assert text.count("theory Scenario_example_seed\n  imports FL_Infrastructure\nbegin") == 1
    assert "locale scenario_example_seed =" in text
    for part in ("_gra ::", "_aloc ::", "_server ::", "_clients ::", "_dataset ::", "_poli ::", "_learner ::",
                 "_step ::", "_init ::", "_Kripke ::"):
        assert part in text
    assert "Learner (1 / 2) (mean_grad (squared_grad True))" in text
    # EF witness: step lemmas, the reach lemma, check_EF_reach and the attack tree
    assert "check_EF_reach [OF example_seed_model_changes_reach example_seed_model_changes_goal]" in text
    assert "example_seed_model_changes_tree_valid" in text
    # AG violated: a counterexample
    assert "check_AG_counterexample [OF example_seed_ready_within_clients_fails_reach" in text
    # AG on components no rule changes: proved by its own invariant despite the bounds
    assert "lemma example_seed_clients_fixed:" in text
    assert "oops" not in text.split("lemma example_seed_clients_fixed:")[1].split("\nqed")[0]
    # AG on a changing component, holding on a bounded unfolding: stated, oops, with the reason
    ag_ready = props(("r", "AG (ready == clients -> n >= 0)"))
    bounded = scenario_theory_text(ScenarioExport("b", seed_model(), ag_ready))
    m = re.search(r"lemma b_r: .*?\n  \(\* (.*?) \*\)\n  oops", bounded)
    assert m and "bounded" in m.group(1)


def test_witness_chain_follows_the_model() -> None:
    """Each step lemma of the EF witness names the rule of a real step, and the chain ends where the
    goal holds: the number of step lemmas equals the length of the checker's witness."""
    from checker.mc.ctl import ModelChecker
    from checker.mc.explore import explore

    system = seed_model()
    f = parse_formula("EF curmodpar != (0, 0)")
    k = explore(system)  # type: ignore[arg-type]  # FLSystem yields plain tuples
    res = ModelChecker(k).check(f, vacuity=False)
    assert res.witness is not None
    n_steps = len(res.witness.states) - 1
    text = scenario_theory_text(ScenarioExport("w", system, props(("p", str(f)))))
    steps = re.findall(r"lemma w_p_step(\d+): \"w_step (\S+) (\S+)\"\n  \(\* (\w+)", text)
    assert [int(s[0]) for s in steps] == list(range(1, n_steps + 1))
    assert steps[0][1] == "w_init"
    for (_, _src, dst, _rule), (_, nxt, _, _) in zip(steps, [*steps[1:], ("", "", "", "")], strict=True):
        if nxt:
            assert dst == nxt
    rules = [s[3] for s in steps]
    assert rules[0] == "put_part" and rules[-1] == "eval_server"
    # the reported actions are those of the witness path
    actions = [(s.action or "").split("(")[0] for s in res.witness.steps[1:]]
    assert rules == actions


def test_invariant_for_an_unbounded_complete_exploration() -> None:
    """With no trace (evs = {}) no rule is enabled: one reachable state, so an AG that holds is proved by
    the explicit invariant {init} through check_AG_inv."""
    infra = fl_infrastructure(["c1"], [point("a", 1, 2)])
    infra = Infrastructure(infra.igra, Protocol(frozenset()), infra.poli)
    system = FLSystem(infra, bounds=Bounds(None, None))
    text = scenario_theory_text(ScenarioExport("inv", system, props(("fixed", "AG ready == {}"))))
    assert "proof (rule check_AG_inv)" in text
    assert '"inv_fixed_inv \\<equiv> {' in text
    assert "oops" not in text.split("lemma inv_fixed:")[1]
    exp = ScenarioExport("inv", system, props(("fixed", "AG ready == {}")))
    assert check_export_texts(export_texts([exp])) == []


def test_untranslatable_and_unknown_properties_are_explained() -> None:
    text = scenario_theory_text(ScenarioExport("u", seed_model(), props(("r", "EF round >= 1"),
                                                                         ("en", "EF enabled(eval_server)"))))
    assert text.count("Not stated in Isabelle:") == 2
    assert "bookkeeping" in text and "enabled(...)" in text


def test_noise_support_becomes_locale_assumptions() -> None:
    text = scenario_theory_text(example_export("example:moniteo_rr"))
    assert "fixes example_moniteo_rr_support ::" in text
    assumes = re.findall(r"assumes (example_moniteo_rr_support_\d+):", text)
    assert assumes and len(assumes) == len(set(assumes))
    assert "state_transition_rounds example_moniteo_rr_learner example_moniteo_rr_support True" in text
    for a in assumes:  # every assumption is used by some step
        assert text.count(a) >= 2


def test_other_property_kinds_get_an_explanation() -> None:
    spec = PropertySpec("dp", "ni_fl_dp", "ni_fl_dp eps = 1", None, "holds", "eps=0.69")
    text = scenario_theory_text(ScenarioExport("o", seed_model(), (spec,)))
    assert "Kind ni_fl_dp (eps=0.69); verdict: holds." in text


def test_theory_names() -> None:
    assert theory_name("moniteo-8") == "Scenario_moniteo_8"
    assert theory_name("seed") == "Scenario_seed"


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------


def test_cli_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["export", "isabelle", "example:seed", "-o", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0 and "syntax check passed" in out and "not proof-checked" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FL_Infrastructure.thy", "ROOT", "SHA256SUMS",
                                                          "Scenario_example_seed.thy"]
    # a second scenario into the same directory: ROOT lists both
    rc = main(["export", "isabelle", "example:moniteo", "-o", str(tmp_path)])
    assert rc == 0
    root = (tmp_path / "ROOT").read_text()
    assert "Scenario_example_seed" in root and "Scenario_example_moniteo" in root
    # --clean drops the theories this export does not write, and only after it succeeded
    assert main(["export", "isabelle", "example:nope", "--clean", "-o", str(tmp_path)]) == 2
    assert (tmp_path / "Scenario_example_seed.thy").exists()
    assert main(["export", "isabelle", "example:moniteo", "--clean", "-o", str(tmp_path)]) == 0
    assert not (tmp_path / "Scenario_example_seed.thy").exists()
    assert "Scenario_example_seed" not in (tmp_path / "ROOT").read_text()


def test_cli_reports_a_broken_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = "theory Scenario_broken\n  imports FL_Infrastructure\nbegin\n"  # no "end"
    (tmp_path / "Scenario_broken.thy").write_text(broken)
    rc = main(["export", "isabelle", "example:seed", "-o", str(tmp_path)])
    assert rc == 1
    assert "FAILS the syntax check" in capsys.readouterr().err


def test_cli_bad_input(tmp_path: Path) -> None:
    assert main(["export", "isabelle", "no_such_scenario.fl", "-o", str(tmp_path)]) == 2
    assert main(["export", "isabelle", "example:nope", "-o", str(tmp_path)]) == 2


# ------------------------------------------------------------------------------------------------
# random valid scenarios
# ------------------------------------------------------------------------------------------------

PROPERTY_TEMPLATES = [
    "EF curmodpar != {zero}",
    "AG ready == clients",
    "EF (ready == clients & clients != {{}})",
    'EF "{c}" in ready',
    "AG clients == {{{cs}}}",
    "EF dataset == {{}}",
    "EX ready == {{}}",
    "E[ready == {{}} U \"{c}\" in ready]",
    "AF curmodpar == {zero}",
    "EF n >= 1",
]


@st.composite
def random_exports(draw: st.DrawFn) -> ScenarioExport:
    n_clients = draw(st.integers(1, 2))
    n_points = draw(st.integers(0, 2))
    pts = [point(f"d{i}", draw(st.integers(-2, 2)), draw(st.integers(-3, 3))) for i in range(n_points)]
    rules = draw(st.sampled_from(["published", "fedavg_rounds"]))
    losses: list[Loss] = [SquaredLoss(), HingeLoss()]
    loss = draw(st.sampled_from(losses))
    if isinstance(loss, HingeLoss):
        pts = [point(p.name, p.features, 1 if p.target >= 0 else -1) for p in pts]
    eta = Fraction(draw(st.integers(1, 4)), draw(st.integers(1, 5)))
    system = seed_model(n_clients, pts, max_rounds=1, max_events=draw(st.integers(1, 3)), eta=eta,
                        loss=loss, rules=rules)
    clients = [f"c{i}" for i in range(1, n_clients + 1)]
    chosen = draw(st.lists(st.sampled_from(PROPERTY_TEMPLATES), min_size=1, max_size=4, unique=True))
    zero = "(0, 0)"
    texts = [t.format(zero=zero, c=draw(st.sampled_from(clients)), cs=", ".join(clients)) for t in chosen]
    return ScenarioExport(f"rand_{rules}", system, props(*((f"p{i}", t) for i, t in enumerate(texts))))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_exports())
def test_random_scenarios_export_to_theories_that_pass_the_syntax_check(exp: ScenarioExport) -> None:
    files = export_texts([exp])
    assert check_export_texts(files) == []
    text = files[f"{theory_name(exp.name)}.thy"]
    # one subsection per property, each either stated (lemma) or explained (text)
    assert text.count("subsection \\<open>Property ") == len(exp.properties)


def test_privacy_property_of_the_published_relation_states_the_vacuous_ni_fl_dp() -> None:
    spec = PropertySpec("dp", "privacy", "privacy epsilon <= 1 between nb", None, None, "epsilon 1")
    published = seed_model().replace(enforce_policies=False)
    files = export_texts([ScenarioExport("o", published, (spec,))])
    assert check_export_texts(files) == []
    assert "by (rule NI_FL_DP_vacuous)" in files["Scenario_o.thy"]
    gated = export_texts([ScenarioExport("o", seed_model(), (spec,))])["Scenario_o.thy"]
    assert "NI_FL_DP_vacuous" not in gated  # NI_FL_DP is defined for the published relation only


# ------------------------------------------------------------------------------------------------
# random scenario files (the scenario language)
# ------------------------------------------------------------------------------------------------


@st.composite
def scenario_texts(draw: st.DrawFn) -> str:
    """A random valid scenario in the scenario language: 1–2 clients, 0–2 data points, either protocol,
    optional noise and initial partition, a policy mode, tight bounds and a few CTL / attack-tree
    properties."""
    k = draw(st.integers(1, 2))
    clients = [f"c{i}" for i in range(1, k + 1)]
    n = draw(st.integers(0, 2))
    pts = [(f"d{i}", draw(st.integers(-1, 2)), draw(st.integers(-2, 3))) for i in range(n)]
    protocol = draw(st.sampled_from(["published traces full", "fedavg_rounds traces drop",
                                     "fedavg_rounds traces full"]))
    lines = [
        'scenario "random"',
        "locations srv, " + ", ".join(f"o{i}" for i in range(1, k + 1)),
        "links " + ", ".join(f"srv -- o{i}" for i in range(1, k + 1)),
        "server s at srv",
        "clients " + ", ".join(f"{c} at o{i}" for i, c in enumerate(clients, 1)),
        "policies " + draw(st.sampled_from(["default", "permissive", "ignored"])),
    ]
    lines += [f"data {name} = ({x}) -> {y}" for name, x, y in pts]
    if pts:
        lines.append("dataset " + ", ".join(name for name, _, _ in pts))
        if protocol.startswith("fedavg") or draw(st.booleans()):
            parts: dict[str, list[str]] = {c: [] for c in clients}
            for i, (name, _, _) in enumerate(pts):
                parts[clients[i % k]].append(name)
            lines.append("partition " + ", ".join(f"{c}: {{{', '.join(ps)}}}" for c, ps in parts.items()))
    lines.append(f"model squared rate 1/{draw(st.integers(1, 4))} initial (0, 0)")
    if draw(st.booleans()):
        lines.append("noise rr grid {0, 1} r 1/3 clip on update")
    lines.append(f"protocol {protocol}")
    lines.append(f"bounds rounds 1, events {draw(st.integers(1, 3))}")
    c = draw(st.sampled_from(clients))
    props = draw(st.lists(st.sampled_from([
        "ctl EF ready == clients",
        f'ctl EF "{c}" in ready',
        "ctl AG clients != {}",
        "ctl EF curmodpar != (0, 0)",
        f"attack_tree exists ready_{c}",
        "attack_tree absent dataset == {}",
        "ctl AG (ready == clients -> EX ready == {})",
    ]), min_size=1, max_size=3, unique=True))
    lines += [f"property p{i}: {p};" for i, p in enumerate(props)]
    return "\n".join(lines) + "\n"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=scenario_texts())
def test_random_scenario_files_export_to_theories_that_pass_the_syntax_check(
    text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("scn") / "random.fl"
    path.write_text(text)
    exp = load_export(str(path))
    files = export_texts([exp])
    assert check_export_texts(files) == [], text
    assert files["Scenario_random.thy"].count("subsection \\<open>Property ") == len(exp.properties)


def test_proof_summary_counts_open_statements() -> None:

    two = props(("r", "AG (ready == clients -> n >= 0)"), ("e", "EF curmodpar != (0, 0)"))
    text = scenario_theory_text(ScenarioExport("b", seed_model(), two))
    stated, left_open = proof_summary(text)
    assert stated == text.count("\nlemma ")
    assert left_open == text.count("\n  oops\n") == 1
    assert proof_summary("lemma a: \"True\"\n  by simp\n") == (1, 0)


SMALL_SCENARIO = """scenario "small"
locations srv, o1
links srv -- o1
server s at srv
clients c1 at o1
policies default
data d0 = (1) -> 2
dataset d0
partition c1: {d0}
model squared rate 1/2 initial (0, 0)
protocol fedavg_rounds traces full
bounds rounds 1
property reports: attack_tree exists ready_c1;
property nothing_lost: attack_tree absent dataset == {};
property wrong_claim: attack_tree absent ready_c1;
"""


def test_scenario_file_attack_tree_expectations(tmp_path: Path) -> None:
    path = tmp_path / "small.fl"
    path.write_text(SMALL_SCENARIO)
    files = export_texts([load_export(str(path))])
    assert check_export_texts(files) == []
    text = files["Scenario_small.thy"]
    assert text.count("the scenario meets its expectation") == 2
    assert text.count("the scenario does NOT meet its expectation") == 1
    # the attack that exists comes with its tree and the EF lemma
    assert "small_reports_tree_valid" in text and "check_EF_reach [OF small_reports_reach" in text
    # full traces, fedavg_rounds: the relation is the round-based variant with the policy gate
    assert "state_transition_rounds small_learner (exact_update small_learner) True" in text


def test_float_figures_are_rounded_for_stable_bytes() -> None:
    assert round_floats("eps 2.1972245773362196, 1/2, 0.25") == "eps 2.197, 1/2, 0.25"
    assert round_floats("mass -2.220446049250313e-16") == "mass -2.22e-16"


def test_ag_on_unchanging_components_is_proved_for_the_unbounded_relation() -> None:
    """AG over dataset/clients/server only: its own invariant (the rules copy those components), so the
    lemma is proved even though the exploration was bounded; AG over ready is not."""
    exp = ScenarioExport("st", seed_model(), props(("ds", "AG dataset != {}"),
                                                   ("cl", 'AG (clients == {c1, c2} & "c1" in clients)'),
                                                   ("rd", "AG (ready == clients -> clients != {})")))
    files = export_texts([exp])
    assert check_export_texts(files) == []
    text = files["Scenario_st.thy"]
    for name in ("st_ds", "st_cl"):
        block = text.split(f"lemma {name}:")[1].split("\nqed")[0]
        assert "proof (rule check_AG_inv)" in block and "elim!: state_transition_FLx.cases" in block
    assert "oops" in text.split("lemma st_rd:")[1].split("\n\n")[0]


def test_a_failing_quantitative_engine_fails_the_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verdicts of privacy/advantage/probability properties come from ``flcheck check``; when that
    engine fails, the export fails too (no theory silently without those verdicts)."""

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("engine failure")

    monkeypatch.setattr(sources, "check_scenario", broken)
    with pytest.raises(RuntimeError, match="engine failure"):
        load_export("moniteo")


def test_write_export_never_overwrites_an_input(tmp_path: Path) -> None:
    source = tmp_path / "Scenario_x.thy"
    source.write_text("input")
    with pytest.raises(InputError, match="inputs"):
        write_export({"Scenario_x.thy": "theory", "ROOT": ""}, tmp_path, inputs=[source])
    assert source.read_text() == "input"


def test_example_options_name_their_theory() -> None:
    """``example:NAME:key=value`` is another system than ``example:NAME``: its theory has its own name,
    and the header names the spec as given."""
    exp = example_export("example:moniteo:mechanism=none")
    assert exp.name == "example_moniteo_mechanism_none" and exp.system.ctx.mechanism is None
    text = scenario_theory_text(exp)
    assert "flcheck export isabelle example:moniteo:mechanism=none)" in text.splitlines()[0]
    assert "theory Scenario_example_moniteo_mechanism_none" in text
    assert check_export_texts(export_texts([exp])) == []


def test_the_relation_is_explored_to_at_most_200000_states_within_the_job_s_limits() -> None:
    """A job without a state limit (``export isabelle`` has no default one) still explores the
    scenario's own relation to :data:`RELATION_STATES` states at most (walker32_relay's has more than
    2^32); a lower state limit and the job's time limit are kept."""
    from checker.app.isabelle.theory import RELATION_STATES, relation_limits
    from checker.mc.explore import Limits

    assert relation_limits(None).max_states == RELATION_STATES == 200_000
    job = Limits(max_seconds=60.0, max_memory_mb=900.0)
    assert relation_limits(job) == Limits(max_states=200_000, max_seconds=60.0, max_memory_mb=900.0)
    assert relation_limits(Limits(max_states=1_000)).max_states == 1_000
