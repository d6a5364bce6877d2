"""Random small explicit models (PRISM/Storm ``.tra``/``.lab``) and mutations of their files.

A model is drawn as a graph with exact distributions and rendered in either flavour (Storm: ``dtmc``
or ``mdp`` header and a ``#DECLARATION`` label block; PRISM: ``N M`` / ``N C M`` header and
``0="init" 1="goal"`` labels). :data:`MUTATIONS` names each way of damaging (or harmlessly
reformatting) the files, with what the contract expects of the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
from hypothesis import strategies as st

LABEL_NAMES = ("init", "goal", "a", "b", "clipped")

#: What the contract expects of a mutated model: AGREE the verdict of the reference checker on the
#: unchanged model; REJECT exit 2, positioned in one of the files; EITHER one of the two.
AGREE, REJECT, EITHER = "agree", "reject", "either"


@dataclass(frozen=True)
class Row:
    src: int
    choice: int | None  # None for a DTMC
    dst: int
    prob: Fraction


@dataclass(frozen=True)
class ExplicitModel:
    kind: str  # "dtmc" or "mdp"
    num_states: int
    rows: tuple[Row, ...]
    labels: dict[str, frozenset[int]]
    flavor: str  # "storm" or "prism"
    decimals: bool  # write terminating probabilities as decimals (else p/q)
    extra: dict[str, bytes] = field(default_factory=dict)

    def reference(self) -> SimpleNamespace:
        """The structure the files describe, in the shape ``ReferenceChecker`` reads."""
        succ = [sorted({r.dst for r in self.rows if r.src == s}) for s in range(self.num_states)]
        ptr = np.zeros(self.num_states + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(s) for s in succ])
        idx = np.array([t for s in succ for t in s], dtype=np.int64)
        labels = {name: np.array([s in ids for s in range(self.num_states)], dtype=bool)
                  for name, ids in self.labels.items()}
        initial = sorted(self.labels.get("init", frozenset())) or [0]
        return SimpleNamespace(num_states=self.num_states, succ_ptr=ptr, succ_idx=idx, labels=labels,
                               initial=np.array(initial, dtype=np.int64))


def probability_text(p: Fraction, decimals: bool) -> str:
    if p.denominator == 1:
        return str(p.numerator)
    denominator = p.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if decimals and denominator == 1:
        digits = 0
        while (p * 10**digits).denominator != 1:
            digits += 1
        return f"{float(p):.{digits}f}"
    return f"{p.numerator}/{p.denominator}"


def tra_lines(model: ExplicitModel) -> list[str]:
    """The ``.tra`` file as lines (without line ends): the header first."""
    if model.flavor == "storm":
        header = model.kind
    elif model.kind == "dtmc":
        header = f"{model.num_states} {len(model.rows)}"
    else:
        choices = len({(r.src, r.choice) for r in model.rows})
        header = f"{model.num_states} {choices} {len(model.rows)}"
    body = []
    for r in model.rows:
        middle = f" {r.choice}" if r.choice is not None else ""
        body.append(f"{r.src}{middle} {r.dst} {probability_text(r.prob, model.decimals)}")
    if model.flavor == "storm":  # Storm counts the states its lines name: a deadlock gets 's s 0'
        for s in deadlocks(model):
            body.append(f"{s} 0 {s} 0" if model.kind == "mdp" else f"{s} {s} 0")
    return [header, *body]


def deadlocks(model: ExplicitModel) -> list[int]:
    """The states without a row (written as zero-probability self-loops in the Storm flavour, after
    the rows)."""
    sources = {r.src for r in model.rows}
    return [s for s in range(model.num_states) if s not in sources]


def lab_lines(model: ExplicitModel) -> list[str]:
    names = list(model.labels)
    per_state: dict[int, list[int]] = {}
    for j, name in enumerate(names):
        for s in sorted(model.labels[name]):
            per_state.setdefault(s, []).append(j)
    if model.flavor == "storm":
        head = ["#DECLARATION", " ".join(names), "#END"]
        return head + [f"{s} " + " ".join(names[j] for j in js) for s, js in sorted(per_state.items())]
    head = [" ".join(f'{j}="{name}"' for j, name in enumerate(names))]
    return head + [f"{s}: " + " ".join(map(str, js)) for s, js in sorted(per_state.items())]


def encode(lines: list[str], line_end: str = "\n") -> bytes:
    return "".join(line + line_end for line in lines).encode()


@st.composite
def distributions(draw: st.DrawFn, num_states: int) -> list[tuple[int, Fraction]]:
    targets = draw(st.lists(st.integers(0, num_states - 1), min_size=1, max_size=3, unique=True))
    weights = draw(st.lists(st.sampled_from([1, 1, 2, 3, 4]), min_size=len(targets), max_size=len(targets)))
    total = sum(weights)
    return [(t, Fraction(w, total)) for t, w in zip(targets, weights, strict=True)]


@st.composite
def explicit_models(draw: st.DrawFn) -> ExplicitModel:
    """A valid model of 1..6 states with at least one row: some states may be deadlocks (no rows; in
    the Storm flavour, which has no state count, a line of probability 0 names them), at least one
    state is ``init``."""
    n = draw(st.integers(1, 6))
    kind = draw(st.sampled_from(["dtmc", "mdp"]))
    rows: list[Row] = []
    for s in range(n):
        if draw(st.integers(0, 5)) == 0:
            continue  # a deadlock
        for choice in range(draw(st.integers(1, 2)) if kind == "mdp" else 1):
            for t, p in draw(distributions(n)):
                rows.append(Row(s, choice if kind == "mdp" else None, t, p))
    if not rows:  # every mutation below edits a transition line or needs one
        rows.append(Row(0, 0 if kind == "mdp" else None, 0, Fraction(1)))
    names = draw(st.lists(st.sampled_from(LABEL_NAMES[1:]), max_size=3, unique=True))
    labels = {"init": frozenset(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=2)))}
    for name in names:
        labels[name] = frozenset(draw(st.sets(st.integers(0, n - 1), max_size=n)))
    flavor = draw(st.sampled_from(["storm", "prism"]))
    return ExplicitModel(kind, n, tuple(rows), labels, flavor, draw(st.booleans()))


# ------------------------------------------------------------------------------------------------
# Mutations: each takes (the model, a draw function) and returns the bytes of (.tra, .lab)
# ------------------------------------------------------------------------------------------------

Files = tuple[bytes, bytes]
Mutation = Callable[[ExplicitModel, st.DrawFn], Files]


def _files(model: ExplicitModel) -> Files:
    return encode(tra_lines(model)), encode(lab_lines(model))


def _with_probability(text: str) -> Mutation:
    def mutate(model: ExplicitModel, draw: st.DrawFn) -> Files:
        lines = tra_lines(model)
        i = draw(st.integers(1, len(lines) - 1))
        fields = lines[i].split()
        lines[i] = " ".join([*fields[:-1], text])
        return encode(lines), encode(lab_lines(model))
    return mutate


def _row_sum(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = tra_lines(model)
    i = draw(st.integers(1, len(model.rows)))  # a row of positive probability
    fields = lines[i].split()
    p = model.rows[i - 1].prob
    lines[i] = " ".join([*fields[:-1], probability_text(p * draw(st.sampled_from([Fraction(1, 2), 2])),
                                                           model.decimals)])
    return encode(lines), encode(lab_lines(model))


def _truncate_tra(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = tra_lines(model)
    keep = draw(st.integers(1, len(lines) - 1))  # the kept lines, header included, then a cut line
    cut = lines[keep].split()[: draw(st.integers(1, 2))]
    return encode(lines[:keep]) + " ".join(cut).encode(), encode(lab_lines(model))


def _header_transitions_wrong(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = tra_lines(replace(model, flavor="prism"))
    words = lines[0].split()
    words[-1] = str(int(words[-1]) + draw(st.sampled_from([-1, 1, 7])))
    lines[0] = " ".join(words)
    return encode(lines), encode(lab_lines(replace(model, flavor="prism")))


def _header_states_too_small(model: ExplicitModel, draw: st.DrawFn) -> Files:
    prism = replace(model, flavor="prism")
    lines = tra_lines(prism)
    mentioned = max([r.src for r in model.rows] + [r.dst for r in model.rows] + [0])
    words = lines[0].split()
    words[0] = str(draw(st.integers(0, mentioned)))
    lines[0] = " ".join(words)
    return encode(lines), encode(lab_lines(prism))


def _replace_field(lines: list[str], draw: st.DrawFn, field: int, text: str) -> None:
    """Replace field ``field`` of a random transition line of ``lines`` (the header is line 0)."""
    i = draw(st.integers(1, len(lines) - 1))
    fields = lines[i].split()
    fields[field] = text
    lines[i] = " ".join(fields)


def _state_id(text: str, column: str) -> Mutation:
    def mutate(model: ExplicitModel, draw: st.DrawFn) -> Files:
        lines = tra_lines(model)
        _replace_field(lines, draw, 0 if column == "src" else -2, text)
        return encode(lines), encode(lab_lines(model))
    return mutate


def _label_absent_state(model: ExplicitModel, draw: st.DrawFn) -> Files:
    absent = model.num_states + draw(st.integers(0, 5))
    name = draw(st.sampled_from(list(model.labels)))
    lines = lab_lines(model)
    index = list(model.labels).index(name)
    lines.append(f"{absent} {name}" if model.flavor == "storm" else f"{absent}: {index}")
    return encode(tra_lines(model)), encode(lines)


def _undeclared_label(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = lab_lines(model)
    state = draw(st.integers(0, model.num_states - 1))
    lines.append(f"{state} undeclared_zz" if model.flavor == "storm" else f"{state}: 17")
    return encode(tra_lines(model)), encode(lines)


def _non_utf8(which: str) -> Mutation:
    def mutate(model: ExplicitModel, draw: st.DrawFn) -> Files:
        tra, lab = _files(model)
        data = tra if which == "tra" else lab
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xfe\xfe", b"\x80"])) + data[at:]
        return (data, lab) if which == "tra" else (tra, data)
    return mutate


def _bom(model: ExplicitModel, draw: st.DrawFn) -> Files:
    tra, lab = _files(model)
    which = draw(st.sampled_from(["tra", "lab", "both"]))
    bom = b"\xef\xbb\xbf"
    return (bom + tra if which != "lab" else tra), (bom + lab if which != "tra" else lab)


def _crlf(model: ExplicitModel, draw: st.DrawFn) -> Files:
    which = draw(st.sampled_from(["tra", "lab", "both"]))
    tra = encode(tra_lines(model), "\r\n" if which != "lab" else "\n")
    lab = encode(lab_lines(model), "\r\n" if which != "tra" else "\n")
    return tra, lab


def _comment(text: str) -> Mutation:
    def mutate(model: ExplicitModel, draw: st.DrawFn) -> Files:
        which = draw(st.sampled_from(["tra", "lab", "both"]))
        tra, lab = tra_lines(model), lab_lines(model)
        if which != "lab":
            tra.insert(draw(st.integers(0, len(tra))), text)
        if which != "tra":  # after the label declaration (Storm) or the PRISM header line
            lab.insert(draw(st.integers(3 if model.flavor == "storm" else 1, len(lab))), text)
        return encode(tra), encode(lab)
    return mutate


def _shuffle_rows(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = tra_lines(model)
    body = draw(st.permutations(lines[1:]))
    return encode([lines[0], *body]), encode(lab_lines(model))


def _blank_lines(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = tra_lines(model)
    for _ in range(draw(st.integers(1, 3))):
        lines.insert(draw(st.integers(1, len(lines))), "")
    return encode(lines), encode(lab_lines(model))


def _unchanged(model: ExplicitModel, _draw: st.DrawFn) -> Files:
    return _files(model)


def _empty_init(model: ExplicitModel, _draw: st.DrawFn) -> Files:
    """``init`` declared, no state labelled with it (it must not silently become state 0)."""
    return encode(tra_lines(model)), encode(lab_lines(replace(model, labels={**model.labels,
                                                                               "init": frozenset()})))


def _duplicate_row(model: ExplicitModel, draw: st.DrawFn) -> Files:
    lines = tra_lines(model)
    i = draw(st.integers(1, len(lines) - 1))
    lines.insert(draw(st.integers(i + 1, len(lines))), lines[i])
    return encode(lines), encode(lab_lines(model))


def _as_mdp(model: ExplicitModel) -> ExplicitModel:
    if model.kind == "mdp":
        return model
    return replace(model, kind="mdp", rows=tuple(replace(r, choice=0) for r in model.rows))


def _header_choices_wrong(model: ExplicitModel, draw: st.DrawFn) -> Files:
    prism = replace(_as_mdp(model), flavor="prism")
    lines = tra_lines(prism)
    words = lines[0].split()
    words[1] = str(max(0, int(words[1]) + draw(st.sampled_from([-1, 1, 5]))))
    lines[0] = " ".join(words)
    return encode(lines), encode(lab_lines(prism))


def _header_states_huge(model: ExplicitModel, draw: st.DrawFn) -> Files:
    prism = replace(model, flavor="prism")
    lines = tra_lines(prism)
    words = lines[0].split()
    words[0] = draw(st.sampled_from(["99999999", "50000000", "2000000"]))
    lines[0] = " ".join(words)
    return encode(lines), encode(lab_lines(prism))


def _unicode_digit(where: str) -> Mutation:
    """A digit of another script (Arabic-Indic '١', superscript '²', full-width '３'), which Python's
    ``int``, ``float`` and ``Fraction`` read as a number."""
    def mutate(model: ExplicitModel, draw: st.DrawFn) -> Files:
        digit = draw(st.sampled_from(["\u0661", "\u00b2", "\uff13", "\u0967"]))
        files = model if where != "header" else replace(model, flavor="prism")
        lines = tra_lines(files)
        if where == "header":
            lines[0] = digit + lines[0]
        else:
            _replace_field(lines, draw, 0 if where == "state" else -1, digit)
        return encode(lines), encode(lab_lines(files))
    return mutate


#: Mutation name -> (function, what the contract expects). The expectations need a model with at
#: least one row (the generator of the test ensures it).
MUTATIONS: dict[str, tuple[Mutation, str]] = {
    "unchanged": (_unchanged, AGREE),
    "rows shuffled": (_shuffle_rows, AGREE),
    "blank lines": (_blank_lines, AGREE),
    "CRLF line ends": (_crlf, AGREE),
    "UTF-8 BOM": (_bom, EITHER),
    "'#' comment line": (_comment("# a comment"), AGREE),
    "'//' comment line": (_comment("// a comment"), REJECT),
    "negative probability": (_with_probability("-1/2"), REJECT),
    "non-numeric probability": (_with_probability("abc"), REJECT),
    "probability 1/0": (_with_probability("1/0"), REJECT),
    "probability inf": (_with_probability("inf"), REJECT),
    "probability nan": (_with_probability("nan"), REJECT),
    "probability 1e-400": (_with_probability("1e-400"), REJECT),
    "row not summing to 1": (_row_sum, REJECT),
    "truncated .tra": (_truncate_tra, REJECT),
    "PRISM header: transition count wrong": (_header_transitions_wrong, REJECT),
    "PRISM header: state count too small": (_header_states_too_small, REJECT),
    "state id 1e11": (_state_id("100000000000", "dst"), REJECT),
    "state id of 24 digits": (_state_id("1" * 24, "src"), REJECT),
    "negative state id": (_state_id("-1", "dst"), REJECT),
    "label for an absent state": (_label_absent_state, REJECT),
    "undeclared label": (_undeclared_label, REJECT),
    "non-UTF-8 byte in .tra": (_non_utf8("tra"), REJECT),
    "non-UTF-8 byte in .lab": (_non_utf8("lab"), REJECT),
    "empty init label": (_empty_init, REJECT),
    "transition given twice": (_duplicate_row, REJECT),
    "PRISM header: choice count wrong": (_header_choices_wrong, REJECT),
    "PRISM header: state count huge": (_header_states_huge, REJECT),
    "sparse state id 99999999": (_state_id("99999999", "dst"), REJECT),
    "Unicode digit in a state id": (_unicode_digit("state"), REJECT),
    "Unicode digit in a probability": (_unicode_digit("probability"), REJECT),
    "Unicode digit in the PRISM header": (_unicode_digit("header"), REJECT),
}


# ------------------------------------------------------------------------------------------------
# The same models as JSON Kripke files (flcheck-kripke/1), and mutations of them
# ------------------------------------------------------------------------------------------------


def json_document(model: ExplicitModel) -> dict[str, object]:
    """The model as a JSON Kripke document: MDP choices become actions ``c0``, ``c1``, ..."""
    transitions = [{"from": r.src, "to": r.dst, "probability": str(r.prob),
                    **({"action": f"c{r.choice}"} if r.choice is not None else {})} for r in model.rows]
    return {"format": "flcheck-kripke/1", "states": model.num_states,
            "initial": sorted(model.labels.get("init", frozenset())) or [0], "transitions": transitions,
            "labels": {k: sorted(v) for k, v in model.labels.items()}}


JsonMutation = Callable[[ExplicitModel, st.DrawFn], str]


def _json(change: Callable[[dict[str, object], st.DrawFn], None]) -> JsonMutation:
    def mutate(model: ExplicitModel, draw: st.DrawFn) -> str:
        doc = json_document(model)
        change(doc, draw)
        return json.dumps(doc, indent=1, ensure_ascii=False)
    return mutate


def _set(key: str, values: st.SearchStrategy[object]) -> Callable[[dict[str, object], st.DrawFn], None]:
    def change(doc: dict[str, object], draw: st.DrawFn) -> None:
        doc[key] = draw(values)
    return change


def _unicode_json_probability(doc: dict[str, object], draw: st.DrawFn) -> None:
    transitions = doc["transitions"]
    assert isinstance(transitions, list)
    i = draw(st.integers(0, len(transitions) - 1))
    transitions[i]["probability"] = draw(st.sampled_from(["\u0661", "\u0661/\u0662", "\uff11"]))


#: JSON mutation name -> (function, what the contract expects).
JSON_MUTATIONS: dict[str, tuple[JsonMutation, str]] = {
    "unchanged": (_json(lambda doc, draw: None), AGREE),
    "no initial state": (_json(_set("initial", st.just([]))), REJECT),
    "initial not a list": (_json(_set("initial", st.sampled_from([0, "0", None, {}]))), REJECT),
    "huge state count": (_json(_set("states", st.sampled_from([99_999_999, 50_000_000, 2_000_000]))), REJECT),
    "negative state count": (_json(_set("states", st.sampled_from([-1, -5]))), REJECT),
    "Unicode digit in a probability": (_json(_unicode_json_probability), REJECT),
}
