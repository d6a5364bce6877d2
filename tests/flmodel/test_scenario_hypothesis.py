"""Property-based tests of the scenario parser: round trip on random valid scenarios (numbers written
in every accepted form), and random mutations of the bundled files give a ModelError with positions or
a valid scenario — never another exception."""

from __future__ import annotations

from fractions import Fraction

import flcheck_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flmodel.errors import ModelError
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system


def _num_text(draw: st.DrawFn, value: Fraction) -> str:
    """Write ``value`` as an integer, a fraction or a decimal (when it has a finite one)."""
    forms = [f"{value.numerator}/{value.denominator}"]
    if value.denominator == 1:
        forms.append(str(value.numerator))
    for places in (1, 2, 3):
        scaled = value * 10**places
        if scaled.denominator == 1:
            sign = "-" if scaled < 0 else ""
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            forms.append(f"{sign}{digits[:-places]}.{digits[-places:]}")
            break
    return draw(st.sampled_from(forms))


fractions = st.builds(Fraction, st.integers(-40, 40), st.sampled_from([1, 2, 4, 5, 3, 8]))
positive = st.builds(Fraction, st.integers(1, 9), st.sampled_from([1, 2, 4, 10]))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, dict[str, object]]:
    """A random valid scenario text and a few of the values it must be read as."""
    k = draw(st.integers(1, 3))
    clients = [f"c{i}" for i in range(1, k + 1)]
    dim = draw(st.integers(1, 2))
    n = draw(st.integers(1, 4))
    feats = [[draw(fractions) for _ in range(dim)] for _ in range(n)]
    targets = [draw(fractions) for _ in range(n)]
    lines = ['scenario "random \\"one\\""', "locations g, " + ", ".join(f"l{c}" for c in clients)]
    if draw(st.booleans()):
        lines.append("links " + ", ".join(f"g {draw(st.sampled_from(['--', '->']))} l{c}" for c in clients))
    lines.append("server srv at g")
    lines.append("clients " + ", ".join(f"{c} at l{c}" for c in clients))
    mode = draw(st.sampled_from(["explicit", "default", "permissive", "ignored"]))
    if mode == "explicit":
        lines.append("policy at g: srv may put_part, eval_server")
        for c in clients:
            who = draw(st.sampled_from([c, "any"]))
            lines.append(f"policy at l{c}: {who} may get_grad" + draw(st.sampled_from(["", " anywhere"])))
    else:
        lines.append(f"policies {mode}")
    owner = [draw(st.sampled_from(clients)) for _ in range(n)]
    for i in range(n):
        fs = ", ".join(_num_text(draw, f) for f in feats[i])
        sec = draw(st.sampled_from(["", " secret"]))
        lines.append(f"data p{i} = ({fs}) -> {_num_text(draw, targets[i])}{sec}")
    lines.append(f"data extra = ({', '.join('1' for _ in range(dim))}) -> 7 observed by {owner[0]}")
    lines.append("dataset " + ", ".join(f"p{i}" for i in range(n)))
    partitioned = draw(st.booleans())
    if partitioned:
        parts = [f"{c}: {{{', '.join(f'p{i}' for i in range(n) if owner[i] == c)}}}" for c in clients]
        lines.append("partition " + ", ".join(parts))
    loss = draw(st.sampled_from(["squared", "squared_nobias"]))
    rate = draw(positive)
    init = [draw(fractions) for _ in range(dim + (1 if loss == "squared" else 0))]
    init_text = ", ".join(_num_text(draw, x) for x in init)
    lines.append(f"model {loss} rate {_num_text(draw, rate)} initial ({init_text})")
    noise = draw(st.sampled_from(["none", "rr grid {0, 1, 2} r 1/3 clip",
                                  "geometric r 0.5 range 0 .. 4 step 1 clip",
                                  "gaussian q 1/2 range -1 .. 1 clip",
                                  "additive {-1: 0.25, 0: 1/2, 1: 1/4}"]))
    lines.append(f"noise {noise}" + draw(st.sampled_from(["", " on update", " on gradient"])))
    lines.append("protocol " + draw(st.sampled_from(["published", "fedavg_rounds"]))
                 + draw(st.sampled_from(["", " traces full", " traces drop"])))
    lines.append(f"bounds rounds {draw(st.integers(0, 3))}" + draw(st.sampled_from(["", ", events 5"])))
    lines.append("neighbour nb: replace p0 with extra")
    lines.append("neighbour nb2: add extra")
    lines.append("attacker eve at g observes curmodpar, round")
    props = draw(st.lists(st.sampled_from([
        "property P: ctl AG (round < 1 -> EF round = 1);",
        "property P: attack_tree exists ready_c1;",
        "property P: privacy epsilon <= ln(3/2) between nb",
        "property P: privacy epsilon <= 0.5 between nb2 observing curmodpar",
        "property P: advantage <= 1/3 between nb",
        "property P: advantage <= theorem1(2) between nb",
        "property P: probability uniform == 1 reach round >= 0;",
        "property P: probability <= 0.75 reach AG \"c1\" in ready;",
        "property P: crossval between nb trials = 50",
        "property P: attack leakage seed = 1 name = \"x y\"",
    ]), max_size=5))
    lines.extend(p.replace("property P", f"property q{i}") for i, p in enumerate(props))
    sep = draw(st.sampled_from(["\n", "\n\n", "\n# a comment\n", "  // c\n"]))
    return sep.join(lines) + "\n", {"rate": rate, "init": tuple(init), "targets": targets}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_round_trip_is_identity(case: tuple[str, dict[str, object]]) -> None:
    text, expect = case
    s = parse_scenario(text, "random.fl")
    assert s.model is not None
    assert s.model.rate == expect["rate"] and s.model.initial == expect["init"]
    assert [d.target for d in s.data[:-1]] == expect["targets"]
    printed = s.to_text()
    again = parse_scenario(printed, "printed.fl")
    assert again == s
    assert again.to_text() == printed
    build_system(s)  # builds without error


BASES = [p.read_text(encoding="utf-8") for p in flcheck_spec.bundled_scenarios().values()]
CHARS = st.sampled_from([*" \n;:,{}()=-><#/.0123456789\"'abcxyzAEFG_", "at", "policy", "rr", "ln("])


@st.composite
def mutations(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(BASES))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "dup_line", "drop_line", "swap_words"]))
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        if kind == "delete":
            j = draw(st.integers(i, min(len(text), i + 12)))
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(CHARS) + text[i:]
        elif kind == "replace":
            text = text[:i] + draw(CHARS) + text[i + 1:]
        else:
            lines = text.split("\n")
            li = draw(st.integers(0, len(lines) - 1))
            if kind == "dup_line":
                lines.insert(li, lines[li])
            elif kind == "drop_line":
                del lines[li]
            else:
                words = lines[li].split(" ")
                if len(words) > 1:
                    a, b = draw(st.integers(0, len(words) - 1)), draw(st.integers(0, len(words) - 1))
                    words[a], words[b] = words[b], words[a]
                lines[li] = " ".join(words)
            text = "\n".join(lines)
    return text


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_mutations_give_positioned_errors_never_tracebacks(text: str) -> None:
    try:
        s = parse_scenario(text, "mutant.fl")
    except ModelError as exc:
        assert exc.diagnostics
        for d in exc.diagnostics:
            assert d.source == "mutant.fl"
            assert d.line is not None and d.line >= 1 and d.message
        return
    try:
        build_system(s)
    except ModelError as exc:
        assert exc.diagnostics
    assert parse_scenario(s.to_text(), "again.fl") == s
