"""Proof scripts built from the checker's evidence: a chain of step lemmas for a witness or
counterexample path (with the attack tree of an ``EF`` witness), an explicit invariant for an ``AG`` that
holds on a complete exploration, and the goal set as its own invariant for properties of unchanging
components."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from checker.app.isabelle.terms import (
    EQUIV,
    IN,
    INTER,
    NOTIN,
    RTC,
    SUBSETEQ,
    TIMES,
    TheoryLines,
    Untranslatable,
    actor,
    comment_safe,
    quoted,
    set_term,
    vec,
)
from checker.app.isabelle.vocabulary import ScenarioVocabulary
from flmodel.infrastructure import Eval, Get, Igraph, Put
from flmodel.learning import mean_gradient
from flmodel.system import FLState
from flmodel.view import FLView

#: An ``AG`` that holds is proved by an explicit invariant only up to this many reachable states.
MAX_INVARIANT_STATES = 24

#: Longest witness (number of steps) exported as a chain of step lemmas.
MAX_WITNESS_STEPS = 40


def replay_full_traces(system: FLView, path: Sequence[FLState]) -> list[FLState] | None:
    """The witness ``path`` of a system explored with the trace-history reduction, replayed in the
    full-trace system (same igraphs, literal trace sets); ``None`` if the initial traces are abstract."""
    if system.ctx.trace_mode == "full":
        return list(path)
    full = system.replace(trace_mode="full")
    (cur,) = full.initial_states()
    if cur.infra.igra != path[0].infra.igra or any(
        any(not isinstance(e, Put | Get | Eval) for e in t) for t in cur.infra.prot.evs
    ):
        return None
    out = [cur]
    for nxt in path[1:]:
        cands = [
            (str(a), t) for a, t, _p in full.successors(cur)
            if t.infra.igra == nxt.infra.igra and t.partitioned == nxt.partitioned
        ]
        if not cands:
            return None
        cands.sort(key=lambda x: x[0])
        cur = cands[0][1]
        out.append(cur)
    return out


def static_invariant_proof(body: TheoryLines, pname: str, goal: str, voc: ScenarioVocabulary, rel: str,
                           stmt: str) -> None:
    """``AG goal`` for a goal on unchanging components: the goal set itself is the invariant (the rules
    copy those components), so the lemma holds in the unbounded Kripke structure of the relation."""
    const = voc.const
    cases = ("state_transition_rounds.cases" if voc.rounds else
             "state_transition_FLx.cases" if (voc.noisy or voc.gated) else "state_transition_FL.cases")
    defs = " ".join(state_defs(voc))
    body.text("The property reads only components that no rule changes, so it is its own invariant: the "
              "lemma holds for the unbounded relation, whatever bounds the checker used.")
    body.add(f"lemma {pname}: {quoted(stmt)}")
    body.add(f"  unfolding {const('Kripke')}_def")
    body.add("proof (rule check_AG_inv)")
    body.add(f"  show {quoted(const('init') + ' ' + IN + ' ' + goal)}")
    body.add(f"    unfolding {const('init')}_def by (simp add: {defs})")
    body.add("next")
    body.add("  fix s t")
    body.add(f"  assume {quoted(f's {IN} {goal}')} and {quoted(f'{rel} s t')}")
    body.add(f"  then show {quoted(f't {IN} {goal}')}")
    body.add(f"    unfolding {rel}_def by (auto elim!: {cases})")
    body.add("next")
    body.add(f"  show {quoted(f'{goal} {SUBSETEQ} {goal}')}")
    body.add("    by (rule subset_refl)")
    body.add("qed", "")


def is_bounded(system: FLView) -> bool:
    """Whether the system's exploration is bounded (the bounded unfolding may cut the relation)."""
    return system.bounds.max_rounds is not None or system.bounds.max_events is not None


def state_defs(voc: ScenarioVocabulary) -> list[str]:
    const = voc.const
    names = [f"{voc.loc(x)}_def" for x in voc.locations] + [f"{voc.point(p)}_def" for p in voc.points]
    names += [f"{const(x)}_def" for x in ("gra", "aloc", "server", "clients", "dataset", "poli", "learner")]
    return names


def witness_chain(
    body: TheoryLines,
    pname: str,
    path: list[FLState],
    goal: str,
    voc: ScenarioVocabulary,
    rel: str,
    assumptions: list[str],
    stmt: str,
    *,
    ef: bool,
) -> None:
    const = voc.const
    if len(path) - 1 > MAX_WITNESS_STEPS:
        body.add(f"lemma {pname}: {quoted(stmt)}")
        body.add(f"  (* the witness has {len(path) - 1} steps; the export writes chains up to "
                 f"{MAX_WITNESS_STEPS} *)", "  oops", "")
        return
    full = replay_full_traces(voc.system, path)
    try:
        if full is None:
            raise Untranslatable("the witness could not be replayed with literal trace sets")
        terms = [voc.state(s) for s in full]
    except Untranslatable as exc:
        body.add(f"lemma {pname}: {quoted(stmt)}")
        body.add(f"  (* {comment_safe(str(exc))} *)", "  oops", "")
        return
    if ef:
        body.text(f"The checker's witness: a path of {_steps(len(path) - 1)} from the initial state, each "
                  "step a lemma, the last state in the goal set.")
    else:
        body.text(f"The checker's counterexample: a path of {_steps(len(path) - 1)} from the initial state, "
                  "each step a lemma, the last state outside the property.")
    names = [const("init")] + [f"{pname}_s{i}" for i in range(1, len(terms))]
    for i in range(1, len(terms)):
        body.add(f"definition {names[i]} :: {quoted(_state_type(voc))} where")
        body.add(f"  {quoted(f'{names[i]} {EQUIV} {terms[i]}')}", "")
    defs = " ".join(state_defs(voc))
    step_names = []
    sysm = voc.system
    for i in range(1, len(terms)):
        a, rule_fact, where, used = _step_rule(sysm, full[i - 1], full[i], voc, assumptions)
        sname = f"{pname}_step{i}"
        step_names.append(sname)
        body.add(f"lemma {sname}: {quoted(f'{rel} {names[i - 1]} {names[i]}')}")
        body.add(f"  (* {comment_safe(a)} *)")
        body.add(f"  unfolding {rel}_def {names[i - 1]}_def {names[i]}_def")
        inst = f" [where {where}]" if where else ""
        extra = " ".join(f"{const('support')}_{k}" for k in used)
        simps = " ".join(x for x in (defs, extra, _STEP_SIMPS) if x)
        body.add(f"  by (rule {rule_fact}{inst}) (simp_all add: {simps})")
        body.add("")
    reach = f"{pname}_reach"
    if len(terms) == 1:
        body.add(f"lemma {reach}: {quoted(f'{rel}{RTC} {names[0]} {names[-1]}')}")
        body.add("  by simp", "")
    else:
        body.add(f"lemma {reach}: {quoted(f'{rel}{RTC} {names[0]} {names[-1]}')}")
        body.add(f"  using {' '.join(step_names)}",
                 "  by (meson rtranclp.rtrancl_refl rtranclp.rtrancl_into_rtrancl)", "")
    last = names[-1]
    if ef:
        body.add(f"lemma {pname}_goal: {quoted(f'{last} {IN} {goal}')}")
        body.add(f"  unfolding {last}_def by (simp add: {defs})", "")
        body.add(f"lemma {pname}: {quoted(stmt)}")
        body.add(f"  unfolding {const('Kripke')}_def by (rule check_EF_reach [OF {reach} {pname}_goal])", "")
        # the concrete attack tree of the witness
        tree = _attack_tree_term(names, goal)
        body.text("The attack tree of the witness (IIIf AT): a sequential and-attack of one base attack per "
                  "step, valid by the step lemmas.")
        body.add(f"definition {pname}_tree :: {quoted('(' + _state_type(voc) + ') attree')} where")
        body.add(f"  {quoted(f'{pname}_tree {EQUIV} {tree}')}", "")
        body.add(f"lemma {pname}_tree_valid: {quoted(f'valid_attack {rel} {pname}_tree')}")
        body.add(f"  unfolding {pname}_tree_def")
        body.add(f"  by (intro att_and_cons att_and_one att_and_nil att_base)"
                 f" (auto intro: {' '.join(step_names) if step_names else 'refl'} {pname}_goal)", "")
    else:
        body.add(f"lemma {pname}_bad: {quoted(f'{last} {NOTIN} {goal}')}")
        body.add(f"  unfolding {last}_def by (simp add: {defs})", "")
        body.add(f"lemma {pname}: {quoted(stmt)}")
        body.add(f"  unfolding {const('Kripke')}_def",
                 f"  by (rule check_AG_counterexample [OF {reach} {pname}_bad])", "")


_STEP_SIMPS = ("insertp_def dunion_def partition_of_def enables_def exact_update_def vsub_def vscale_def "
               "mean_grad_def squared_grad_def hinge_grad_def design_def dot_def weighted_sum_def fun_eq_iff")


def _state_type(voc: ScenarioVocabulary) -> str:
    return f"infrastructure {TIMES} bool" if voc.rounds else "infrastructure"


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _attack_tree_term(names: list[str], goal: str) -> str:
    start = f"{{{names[0]}}}"
    if len(names) == 1:
        return f"AndAttack [] ({start}, {goal})"
    bases = []
    for i in range(1, len(names)):
        target = f"{{{names[i]}}}" if i < len(names) - 1 else goal
        bases.append(f"BaseAttack ({{{names[i - 1]}}}, {target})")
    return f"AndAttack [{', '.join(bases)}] ({start}, {goal})"


def _step_rule(
    sysm: FLView, src: FLState, dst: FLState, voc: ScenarioVocabulary, assumptions: list[str]
) -> tuple[str, str, str, list[int]]:
    """The action text, the base-theory rule (equational form), its instantiation, and the indices of
    the locale's noise-support assumptions the step uses (appended to ``assumptions`` when new)."""
    used: list[int] = []
    steps = [(a, t) for a, t, _p in sysm.replace(trace_mode="full").successors(src) if t == dst]
    if not steps:
        raise Untranslatable("a witness step could not be re-derived from the model")
    steps.sort(key=lambda x: str(x[0]))
    action = steps[0][0]
    rule = action.rule
    base = {"put_part": "put_part", "put_part_once": "put_part_once",
            "get_grad": "get_grad", "get_grad_noisy": "get_grad", "get_grad_round": "get_grad_round",
            "get_grad_round_noisy": "get_grad_round",
            "eval_server": "eval_server", "eval_round": "eval_round"}.get(rule)
    if base is None:
        raise Untranslatable(f"rule {rule} has no Isabelle counterpart")
    if voc.rounds:
        fact = f"{base}_eq"
    elif voc.noisy or voc.gated:
        fact = f"{base}_x_eq"
    else:
        fact = f"{base}_eq"
    where: list[str] = []
    g = src.infra.igra
    if base.startswith("put_part"):
        where.append(f'Part = "{voc.partition_term(dst.infra.igra.partition.items_tuple)}"')
    else:
        new = set(dst.infra.prot.evs) - set(src.infra.prot.evs)
        if len(new) == 1:
            (t,) = new
            where.append(f'l = "{voc.trace(t[1:])}"')
        if base.startswith("get_grad"):
            cl = action.actor
            if cl is None:
                raise ValueError(f"a get_grad step without its client: {action}")
            where.append(f'c = "{actor(cl)}"')
            v = dst.infra.igra.gradient[cl]
            where.append(f'Gradc = "{vec(v)}"')
            if voc.noisy:
                w = vec(g.curmodpar)
                sup = voc.const("support")
                claim = quoted(f"{vec(v)} {IN} {sup} ({actor(cl)}) {w} {vec(mean_gradient_at(sysm, g, cl))}")
                if claim not in assumptions:
                    assumptions.append(claim)
                used.append(assumptions.index(claim))
        else:
            where.append(f'Newmodel = "{vec(dst.infra.igra.curmodpar)}"')
    return str(action), fact, " and ".join(where), used


def mean_gradient_at(sysm: FLView, igraph: Igraph, client: str) -> tuple[Fraction, ...]:
    """The exact mean gradient of ``client``'s part at the igraph's current model."""
    return mean_gradient(sysm.ctx.loss, igraph.curmodpar, igraph.part(client))


def invariant_proof(
    body: TheoryLines, pname: str, reach: list[FLState], goal: str, voc: ScenarioVocabulary, rel: str,
    stmt: str,
    *, refutes_ef: bool = False,
) -> None:
    """An explicit invariant (the reachable states): ``check_AG_inv`` for an ``AG goal`` that holds, or
    ``check_not_EF_inv`` for an ``EF goal`` that is violated (the invariant avoids the goal)."""
    const = voc.const
    try:
        terms = sorted({voc.state(s) for s in reach})
    except Untranslatable as exc:
        body.add(f"lemma {pname}: {quoted(stmt)}")
        body.add(f"  (* {comment_safe(str(exc))} *)", "  oops", "")
        return
    typ = "(infrastructure \\<times> bool) set" if voc.rounds else "infrastructure set"
    inv = f"{pname}_inv"
    body.text(f"The invariant: the {len(terms)} reachable states the checker found (complete, unbounded "
              "exploration), closed under the relation and inside the property.")
    body.add(f"definition {inv} :: {quoted(typ)} where")
    body.add(f"  {quoted(f'{inv} {EQUIV} {set_term(terms)}')}", "")
    defs = " ".join(state_defs(voc))
    rule_cases = ("state_transition_rounds.cases" if voc.rounds else
                  "state_transition_FLx.cases" if (voc.noisy or voc.gated) else "state_transition_FL.cases")
    body.add(f"lemma {pname}: {quoted(stmt)}")
    body.add(f"  unfolding {const('Kripke')}_def")
    body.add(f"proof (rule {'check_not_EF_inv' if refutes_ef else 'check_AG_inv'})")
    init_in = quoted(f"{const('init')} {IN} {inv}")
    body.add(f"  show {init_in}")
    body.add(f"    unfolding {inv}_def {const('init')}_def by simp")
    body.add("next")
    body.add("  fix s t")
    body.add(f"  assume {quoted(f's {IN} {inv}')} and {quoted(f'{rel} s t')}")
    body.add(f"  then show {quoted(f't {IN} {inv}')}")
    body.add(f"    unfolding {inv}_def {rel}_def by (auto elim!: {rule_cases} simp: {defs} insertp_def)")
    body.add("next")
    if refutes_ef:
        body.add(f"  show {quoted(f'{inv} {INTER} {goal} = {{}}')}")
    else:
        body.add(f"  show {quoted(f'{inv} {SUBSETEQ} {goal}')}")
    body.add(f"    unfolding {inv}_def by (auto simp: {defs})")
    body.add("qed", "")


