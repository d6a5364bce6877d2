"""Scenarios over the whole scenario language, for the differential comparison of reduced and plain checks.

:func:`scenarios` is a hypothesis strategy of scenario texts that reach every statement of
``spec/grammar/scenario.lark``: the rules as published and the round-based ones, full and dropped trace
sets, rounds and events bounds, policies (default, permissive, ignored, explicit ones that deny a client),
data with secrets and owners, partitions deployed or not, every noise mechanism on the update or the
gradient and per client, quorum and deadline rounds, networks (contact windows in rounds and steps,
losses with retries, links that fail, relays and declared routes), attackers at a location, on a link or
inside, attack steps with costs, probabilities and times, defences, neighbours that replace, remove and
add, and properties of every kind but ``attack`` (a training experiment that reads no structure): CTL
over every operator (n-ary ``|``/``&``, ``->``, ``<->``, until, release, next steps, ``P`` and ``D``
queries), probabilities under every scheduler, attack trees (plain and ``reduced``, ``exists`` and
``absent``), privacy (uniform and worst schedulers, ``observing``), advantage (every bound), ``dp``,
budgets (every scope, with and without ``delta``) and ``crossval``.

Atoms compare the observables the built system offers with values that occur in a small plain
exploration of it, so that they are true in some states and false in others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hypothesis import assume
from hypothesis import strategies as st

from checker.mc.explore import Limits, explore
from flmodel.errors import ModelError
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system

NOISES = ("rr grid {0, 1} r 1/2 clip", "rr grid {0, 1, 2} r 2/3 clip", "geometric r 1/2 range 0 .. 2 clip",
          "gaussian q 1/2 range 0 .. 2 clip", "additive {-1: 1/4, 0: 1/2, 1: 1/4}",
          "gaussian sigma 1 range -2 .. 2 step 1/4", "rr grid {0, 1, 2} epsilon ln(2)")
#: how a link at a client's site behaves on a network
PROFILES = ("", "contact {} in rounds 1", "contact {} in steps 1..2", "contact {} in steps 2..3",
            "loss {} 1/2", "loss {} 1/3 retries 1", "failure {}")


@dataclass
class Draft:
    """A scenario without its properties, and what the property generator may name."""

    lines: list[str]
    clients: list[str]
    locations: list[str]
    neighbours: list[str]
    rounds: int
    network: bool
    links: list[str] = field(default_factory=list)
    alike: bool = False  # built with interchangeable clients: properties mostly name none of them

    @property
    def published(self) -> bool:
        return any(line.startswith("protocol published") for line in self.lines)

    def text(self, properties: Sequence[str] = ()) -> str:
        body = [*self.lines, *(f"property p{i}: {p};" for i, p in enumerate(properties))]
        return "\n".join(body) + "\n"


def _fmt(value: object) -> str:
    """A model value as a property-language constant."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ")" if len(value) != 1 else _fmt(value[0])
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(_fmt(v) for v in value)) + "}"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


@st.composite
def drafts(draw: st.DrawFn) -> Draft:
    """The scenario's statements (module docstring)."""
    protocol = draw(st.sampled_from(["fedavg_rounds", "fedavg_rounds", "published"]))
    published = protocol == "published"
    n = draw(st.integers(1, 2 if published else 3))
    traces = draw(st.sampled_from(["drop", "full"])) if published else "drop"
    network = draw(st.integers(0, 2)) == 0
    relay = network and n >= 2 and draw(st.booleans())
    shared = n >= 2 and not network and draw(st.integers(0, 3)) == 0  # two clients at one site
    clients = [f"sat{i}" for i in range(1, n + 1)]
    alike = n >= 2 and draw(st.booleans())  # interchangeable clients: the symmetry's ground
    shared_profile = draw(st.sampled_from(PROFILES)) if network else ""
    sites = [f"o{i}" for i in range(1, n + 1)]
    where = {c: ("o1" if shared and i < 2 else sites[i]) for i, c in enumerate(clients)}
    used_sites = sorted(set(where.values()))
    locations = ["g", *used_sites, *(["r1"] if relay else [])]
    lines = ['scenario "generated"', "locations " + ", ".join(locations)]
    static: list[str] = []
    net: list[str] = []
    links: list[str] = []
    for i, site in enumerate(used_sites):
        link = f"{site} -- r1" if relay and i > 0 else f"g -- {site}"
        links.append(link)
        profile = shared_profile if alike or not network else draw(st.sampled_from(PROFILES))
        if profile.startswith("contact"):
            net.append(profile.format(link))
        else:
            static.append(link)
            if profile:
                net.append(profile.format(link))
    if relay:
        static.append("r1 -- g")
        links.append("r1 -- g")
        if draw(st.booleans()):
            static.append("g -- o2")  # a tie between the direct link and the relay: a route decides
            links.append("g -- o2")
            net.append(f"route {clients[1]}: o2 -> r1 -> g")
    if static:  # without a static link the contact windows declare them all
        lines.append("links " + ", ".join(static))
    lines += net
    lines.append("server srv at g")
    lines.append("clients " + ", ".join(f"{c} at {where[c]}" for c in clients))
    spy_kind = draw(st.sampled_from(["none", "none", "at", "inside", "on"] if network else
                                    ["none", "none", "at", "inside"]))
    if alike and spy_kind == "inside":
        spy_kind = "at"
    if spy_kind in ("at", "on"):
        lines.append(f"actor eve at {'r1' if relay and spy_kind == 'at' else 'g'}")
    policy = draw(st.sampled_from(["default", "default", "permissive", "ignored"] if alike else
                                  ["default", "default", "permissive", "ignored", "explicit"]))
    if policy == "explicit":
        lines.append("policy at g: srv may put_part, eval_server")
        allowed = [c for c in clients if draw(st.integers(0, 4)) > 0] or clients[:1]
        for site in used_sites:
            here = [c for c in allowed if where[c] == site]
            if here:
                lines.append(f"policy at {site}: {', '.join(here)} may get_grad")
    else:
        lines.append(f"policies {policy}")
    # data: one point per client, sometimes two for the first; values on a small grid
    points: list[tuple[str, str, int]] = []  # (name, owner, value)
    common = draw(st.integers(0, 2))
    for i, c in enumerate(clients, 1):
        points.append((f"d{i}", c, common if alike else draw(st.integers(0, 2))))
    if not published and not alike and draw(st.integers(0, 3)) == 0:
        points.append(("d9", clients[0], draw(st.integers(0, 2))))
    secret = draw(st.sampled_from([None, *[p[0] for p in points]]))

    for name, owner, value in points:
        extra = " secret" if name == secret else ""
        if extra and draw(st.booleans()):
            extra += f" observed by {owner}"
        lines.append(f"data {name} = (1) -> {value}{extra}")
    alt = draw(st.integers(0, 2))
    lines.append(f"data dx = (1) -> {alt}")  # not in the dataset: a neighbour's replacement or addition
    lines.append("dataset " + ", ".join(p[0] for p in points))
    deployed = not published or draw(st.booleans())
    if deployed:
        parts: dict[str, list[str]] = {c: [] for c in clients}
        for name, owner, _ in points:
            parts[owner].append(name)
        lines.append("partition " + ", ".join(f"{c}: {{{', '.join(ps)}}}" for c, ps in parts.items()))
    rate = draw(st.sampled_from(["1/2", "1/2", "1/4"]))
    lines.append(f"model squared_nobias rate {rate} initial (0)")
    noise = draw(st.sampled_from(["none", "all", "all"] if alike else ["none", "all", "all", "some"]))
    target = draw(st.sampled_from(["update", "update", "gradient"]))
    if noise == "all":
        lines.append(f"noise {draw(st.sampled_from(NOISES))} on {target}")
    elif noise == "some":
        lines.append(f"noise for {clients[-1]}: {draw(st.sampled_from(NOISES))} on {target}")
    aggregate = ""
    if not published and draw(st.integers(0, 3)) == 0:
        aggregate = draw(st.sampled_from([f" aggregate quorum {draw(st.integers(1, n))}",
                                          f" aggregate deadline {draw(st.integers(1, 3))}"]))
    if network and not aggregate and not net:  # a network needs a statement that makes it one
        if published:
            lines.append(f"loss {links[0]} 1/3")
        else:
            aggregate = f" aggregate quorum {n}"
    lines.append(f"protocol {protocol}{aggregate} traces {traces}")
    rounds = draw(st.integers(1, 2 if n <= 2 and not network else 1))
    if published:
        rounds = 1 if traces == "full" else rounds
        events = draw(st.integers(2, 3 if traces == "full" else 4))
        lines.append(f"bounds rounds {rounds}, events {events}")
    else:
        lines.append(f"bounds rounds {rounds}")
    neighbours = []
    change = draw(st.sampled_from(["replace", "replace", "remove", "add"]))
    victim = secret or points[-1][0]
    if change == "replace":
        lines.append(f"neighbour hot: replace {victim} with dx")
    elif change == "remove" and deployed:
        lines.append(f"neighbour hot: remove {victim}")
    else:
        lines[lines.index(f"data dx = (1) -> {alt}")] += f" observed by {clients[-1]}"
        lines.append("neighbour hot: add dx")
    neighbours.append("hot")
    observes = draw(st.sampled_from(["curmodpar", "curmodpar", "ready", f"gradient_{clients[-1]}",
                                     "round", "curmodpar, ready"]))
    if spy_kind == "at":
        lines.append(f"attacker eve at {'r1' if relay else 'g'} observes {observes}")
    elif spy_kind == "on":
        lines.append(f"attacker eve on {links[0]} observes {draw(st.sampled_from(['copied', observes]))}")
    elif spy_kind == "inside":
        lines.append(f"attacker {clients[0]} observes {observes}")
    draft = Draft(lines, clients, locations, neighbours, rounds, network, links, alike)
    try:
        parse_scenario(draft.text(), source="<generated>")
    except ModelError as exc:  # an attacker that cannot see what it observes: the scenario without it
        if "attacker" not in str(exc) or not lines[-1].startswith("attacker"):
            raise
        lines.pop()
    return draft


def _values(draft: Draft) -> tuple[dict[str, list[object]], list[str]]:
    """Per observable, values it takes in the first states of a plain exploration, and the rule names.
    A draft whose strict noise statement meets a value off its grid is bad input: not drawn."""
    system = build_system(parse_scenario(draft.text(), source="<generated>"))
    try:
        k = explore(system, limits=Limits(max_states=400), fast=False)
    except ModelError:
        assume(False)
        raise
    names = [n for n in system.observable_names() if not n.startswith("enabled:")]
    seen: dict[str, list[object]] = {}
    assert k.states is not None
    try:  # an enabledness observable steps the frontier's states (past the limit), which may meet it too
        for state in k.states:
            for name in names:
                v = system.observe(state, name)
                bucket = seen.setdefault(name, [])
                if v not in bucket and len(bucket) < 6:
                    bucket.append(v)
    except ModelError:
        assume(False)
        raise
    return seen, list(system.fl.rule_names)


def _name(observable: str) -> str:
    """The property-language name of an observable (``ready:sat1`` is ``ready_sat1``)."""
    return observable.replace(":", "_")


def _names_client(name: str, draft: Draft) -> bool:
    return any(name.endswith(("_" + c, ":" + c)) for c in draft.clients)


@st.composite
def atoms(draw: st.DrawFn, values: dict[str, list[object]], rules: list[str], draft: Draft) -> str:
    kind = draw(st.integers(0, 9))
    if draft.alike and draw(st.integers(0, 3)) > 0:  # keep the clients interchangeable
        values = {k: v for k, v in values.items()
                  if not _names_client(k, draft) and not k.startswith("holds_")}
        kind = 2 + kind % 8
    if kind == 0:
        return f"enabled({draw(st.sampled_from(rules))})"
    if kind == 1:
        c = draw(st.sampled_from(draft.clients))
        return draw(st.sampled_from([f'"{c}" in ready', "ready == clients", f'"{c}" not in ready']))
    if kind == 2 and "last" in values:
        return f"last == {draw(st.sampled_from([*rules, 'none']))}"
    name = draw(st.sampled_from(sorted(values)))
    options = values[name]
    v = draw(st.sampled_from(options))
    if isinstance(v, bool):
        return _name(name) if v else f"!{_name(name)}"
    if isinstance(v, int) and draw(st.booleans()):
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "!="]))
        return f"{_name(name)} {op} {v}"
    if isinstance(v, frozenset) and any(not isinstance(x, str) for x in v):
        return f"{_name(name)} == {{}}" if not v else f"!({_name(name)} == {{}})"
    if isinstance(v, frozenset | tuple | str | int) or hasattr(v, "numerator"):
        return f"{_name(name)} {draw(st.sampled_from(['==', '!=']))} {_fmt(v)}"
    return "true"


@st.composite
def formulas(draw: st.DrawFn, leaf: st.SearchStrategy[str], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(leaf)
    sub = formulas(leaf, depth - 1)
    kind = draw(st.integers(0, 13))
    a = draw(sub)
    if kind <= 5:
        op = ["AG", "EF", "AF", "EG", "AX", "EX"][kind]
        return f"{op} ({a})"
    b = draw(sub)
    if kind <= 9:
        q, op = ["E", "A", "E", "A"][kind - 6], ["U", "U", "R", "R"][kind - 6]
        return f"{q}[({a}) {op} ({b})]"
    if kind == 10:
        more = draw(st.lists(sub, min_size=1, max_size=2))
        return " | ".join(f"({x})" for x in (a, b, *more))
    if kind == 11:
        return f"({a}) & ({b})"
    if kind == 12:
        return f"({a}) -> ({b})"
    return f"({a}) <-> ({b})"


@st.composite
def properties(draw: st.DrawFn, draft: Draft, values: dict[str, list[object]], rules: list[str]
               ) -> list[str]:
    leaf = atoms(values, rules, draft)
    out: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kinds = ["ctl", "ctl", "ctl", "probability", "probability", "attack_tree", "attack_tree"]
        if draft.neighbours:
            kinds += ["privacy", "advantage", "dp", "budget", "crossval"]
        kind = draw(st.sampled_from(kinds))
        state = draw(formulas(leaf, 1))
        nb = draw(st.sampled_from(draft.neighbours or ["none"]))
        observing = draw(st.sampled_from(["", "", " observing curmodpar", " observing ready",
                                          f" observing gradient_{draft.clients[0]}"]))
        if kind == "ctl":
            f = draw(formulas(leaf, 3))
            if draw(st.integers(0, 5)) == 0:
                f = f"({f}) & {draw(st.sampled_from(['P', 'Pmin', 'Pmax']))}>=1/2 [F {state}]"
            elif draw(st.integers(0, 6)) == 0:
                f = f"({f}) | {draw(st.sampled_from(['P', 'Pmax']))}<=1/3 [{state} U<=3 ({draw(leaf)})]"
            out.append(f"ctl {f}")
        elif kind == "probability":
            sched = draw(st.sampled_from(["min", "max", "uniform", ""]))
            bound = draw(st.sampled_from(["1/2", "1/3", "1", "0"]))
            cmp = draw(st.sampled_from([">=", "<=", ">", "<"]))
            out.append(f"probability {sched} {cmp} {bound} reach {state}".replace("  ", " "))
        elif kind == "attack_tree":
            reduced = draw(st.sampled_from(["", "reduced "]))
            out.append(f"attack_tree {reduced}{draw(st.sampled_from(['exists', 'absent']))} {state}")
        elif kind == "privacy":
            small = draft.rounds == 1 and len(draft.clients) <= 2 and not draft.published
            sched = " scheduler worst" if small and draw(st.integers(0, 4)) == 0 else ""
            eps = draw(st.sampled_from(["ln(2)", "ln(4)", "1", "0"]))
            out.append(f"privacy epsilon <= {eps} between {nb}{sched}{observing}")
        elif kind == "advantage":
            bound = draw(st.sampled_from(["1/2", "theorem1(ln(2))", "tight(ln(3))"]))
            out.append(f"advantage <= {bound} between {nb}{observing}")
        elif kind == "dp":
            sched = draw(st.sampled_from(["", " scheduler uniform", " scheduler memoryless"]))
            out.append(f"dp D{{ln(2), 1/10}}[F {draw(leaf)}] between {nb}{sched}")
        elif kind == "budget":
            delta = draw(st.sampled_from(["", " delta 1/100"]))
            scope = draw(st.sampled_from(["", " per round", " over rounds", " per client over rounds"]))
            out.append(f"budget epsilon <= ln(3){delta}{scope} between {nb}")
        else:
            out.append(f"crossval between {nb} trials=400 seed=1")
    attack_steps = []
    declared: set[tuple[str, str | None]] = set()
    for _ in range(draw(st.integers(0, 2))):
        rule = draw(st.sampled_from(rules))
        actor = draw(st.sampled_from([None, *draft.clients]))
        if (rule, actor) in declared:
            continue
        declared.add((rule, actor))
        attr = draw(st.sampled_from(["cost 1", "cost 3", "probability 1/2", "time 2", "cost 2 time 1"]))
        attack_steps.append(f"attack_step {rule}{'' if actor is None else ' by ' + actor} {attr}")
    if attack_steps and draw(st.booleans()):
        attack_steps.append(f"defence cut: remove {draw(st.sampled_from(rules))} by {draft.clients[0]}")
    draft.lines.extend(attack_steps)
    return out


def _accepted(draft: Draft, props: list[str]) -> str:
    """The scenario text with the properties the scenario checks refuse left out (an ``observing``
    list naming what the attacker cannot see at its place, say); every other error is the
    generator's and is raised."""
    while True:
        text = draft.text(props)
        try:
            parse_scenario(text, source="<generated>")
            return text
        except ModelError as exc:
            first = len(draft.lines) + 1  # the line of property 0
            bad = {d.position.line - first for d in exc.diagnostics if d.position.line is not None
                   and d.position.line >= first}
            if not bad:
                raise
            props = [p for i, p in enumerate(props) if i not in bad]


@st.composite
def scenarios(draw: st.DrawFn) -> str:
    """A whole scenario text (module docstring)."""
    draft = draw(drafts())
    values, rules = _values(draft)
    props = draw(properties(draft, values, rules))
    return _accepted(draft, props)


#: bundled scenarios small enough to check without reductions, with the constants that make them so
BUNDLED = (("moniteo", {}), ("moniteo_deadline", {}), ("moniteo_link_loss", {}), ("moniteo_rounds", {}),
           ("seed_model", {}), ("moniteo_swarm8", {"N": 3}), ("walker_family", {"N": 3}),
           ("moniteo_published", {"E": 2}))


def bundled_draft(name: str, defines: dict[str, int]) -> Draft:
    """A bundled scenario without its properties and attack steps, as a draft."""
    from dataclasses import replace

    from checker.app.load import resolve_scenario_path
    from flmodel.scenario import load_scenario

    s = load_scenario(resolve_scenario_path(name), defines=defines)
    bare = replace(s, properties=(), steps=(), defences=())
    rounds = next((int(b.value) for b in s.bounds if b.kind == "rounds"), 1)
    return Draft(bare.to_text().splitlines(), [c.actor for c in s.clients], [n.name for n in s.locations],
                 [n.name for n in s.neighbours], rounds, bool(s.contacts or s.losses or s.failures))


@st.composite
def bundled_variants(draw: st.DrawFn) -> str:
    """A bundled scenario with generated properties and attack steps in place of its own."""
    name, defines = draw(st.sampled_from(BUNDLED))
    draft = bundled_draft(name, dict(defines))
    values, rules = _values(draft)
    props = draw(properties(draft, values, rules))
    return _accepted(draft, props)
