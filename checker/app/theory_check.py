"""Step-by-step symbolic check (sympy, symbolic ε) of [IIIf-FL]'s Lemma II.2 and Theorem 1.

Every step of the published proofs is restated as an equation or claim between sympy expressions and
checked; a step's :class:`StepCheck` says whether it holds unconditionally, holds only under stated
assumptions, or is violated (with a counterexample or the simplified difference). Every verdict is
computed from sympy facts (an identity by ``simplify``, a root set by ``solve``/``solveset``, a sign by
sympy's assumptions system); the expressions the paper prints are the functions
:func:`printed_advantage`, :func:`proof_privacy_term`, :func:`proof_advantage` and
:func:`printed_probability`, so a different reading of the paper changes the verdicts it implies.

Symbols (probabilities of one attacker ``A``, [IIIf-FL] II-D):

* ``a = P_{x∈D1}(A(x) = 1)``, ``b = P_{x∈D0}(A(x) = 1)``, ``c = P_{x∈D0}(A(x) = 0)``, all in ``[0, 1]``;
* ``ε ≥ 0`` the privacy parameter, ``δ ∈ [0, 1]``.

Findings (each one a checked step below):

* Lemma II.2: the "Bayes rule" step is the complement rule ``b = 1 − c`` (true for an attacker that
  answers 0 or 1); the substitution steps need the symmetry assumption ``c = a``; but the conclusion
  ``Adv = 2·P(A(x) = b) − 1`` holds WITHOUT it when ``P(A(x) = b)`` is the success probability of the
  balanced game, ``(a + c)/2``.
* Theorem 1: the proof's ``Adv = 1 − 1/e^ε`` is not derived from anything; it is an upper bound under pure
  ε-DP but not an equality (the largest advantage under ε-DP is ``(e^ε − 1)/(e^ε + 1) < 1 − e^{−ε}`` for
  ε > 0).  Solving ``2P − 1 = 1 − 1/e^ε`` gives ``P = 1 − 1/(2e^ε)``, not the stated ``1 − 1/(2e^{-1})``
  (= ``1 − e/2 ≈ −0.359``, a negative constant): the two agree only at ε = −1.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from checker.verdict import Verdict

__all__ = [
    "StepCheck",
    "check_all",
    "check_lemma_ii2",
    "check_theorem1",
    "printed_advantage",
    "printed_probability",
    "proof_advantage",
    "proof_privacy_term",
    "symbols",
]


@dataclass(frozen=True)
class StepCheck:
    """One checked proof step: ``source`` (where in [IIIf-FL]), ``claim`` (as printed, in words),
    ``lhs``/``rhs`` (the sympy expressions compared, as strings), ``verdict`` (``holds`` /
    ``violated``), ``assumptions`` under which it holds (empty: unconditionally), ``detail``."""

    id: str
    source: str
    claim: str
    lhs: str
    rhs: str
    verdict: Verdict
    assumptions: tuple[str, ...]
    detail: str

    def json(self) -> dict[str, object]:
        return {"id": self.id, "source": self.source, "claim": self.claim, "lhs": self.lhs, "rhs": self.rhs,
                "verdict": str(self.verdict), "assumptions": list(self.assumptions), "detail": self.detail}


def symbols() -> dict[str, sympy.Symbol]:
    """The symbols used: ``a, b, c`` (probabilities), ``eps`` (ε ≥ 0), ``delta``, ``P``."""
    return {
        "a": sympy.Symbol("a", nonnegative=True),
        "b": sympy.Symbol("b", nonnegative=True),
        "c": sympy.Symbol("c", nonnegative=True),
        "eps": sympy.Symbol("epsilon", nonnegative=True),
        "delta": sympy.Symbol("delta", nonnegative=True),
        "P": sympy.Symbol("P", real=True),
    }


def printed_advantage(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """[IIIf-FL] II-D, the definition as printed: ``Adv(A) = P_D1(A=1) − P_D0(A=1) = a − b``."""
    return a - b


def proof_privacy_term(eps: sympy.Expr) -> sympy.Expr:
    """[IIIf-FL] III-D, Theorem 1 proof: the term ``1/e^ε`` of both equivalences."""
    return 1 / sympy.exp(eps)


def proof_advantage(eps: sympy.Expr) -> sympy.Expr:
    """[IIIf-FL] III-D, Theorem 1 proof, 'Summarizing': ``Adv = 1 − 1/e^ε``."""
    return 1 - proof_privacy_term(eps)


def printed_probability() -> sympy.Expr:
    """[IIIf-FL] III-D, Theorem 1 statement and last proof line: ``P(A(x) = b) = 1 − 1/(2e^{−1})``."""
    return 1 - 1 / (2 * sympy.exp(-1))


def _verdict(holds: bool) -> Verdict:
    return Verdict.HOLDS if holds else Verdict.VIOLATED


def _identical(lhs: sympy.Expr, rhs: sympy.Expr) -> bool:
    diff = sympy.simplify((lhs - rhs).rewrite(sympy.exp))
    return bool(diff == 0 or sympy.simplify(sympy.together(sympy.expand(diff))) == 0)


def _step(id_: str, source: str, claim: str, lhs: sympy.Expr, rhs: sympy.Expr,
          assumptions: dict[sympy.Symbol, sympy.Expr] | None = None, assumption_text: tuple[str, ...] = (),
          detail: str = "") -> StepCheck:
    """``holds`` when ``lhs = rhs`` identically; ``holds`` under ``assumption_text`` when it needs the
    substitution ``assumptions``; ``violated`` otherwise (the difference is reported)."""
    if _identical(lhs, rhs):
        return StepCheck(id_, source, claim, str(lhs), str(rhs), Verdict.HOLDS, (), detail or "identity")
    if assumptions:
        sub_l, sub_r = lhs.subs(assumptions), rhs.subs(assumptions)
        if _identical(sub_l, sub_r):
            diff = sympy.simplify(lhs - rhs)
            return StepCheck(id_, source, claim, str(lhs), str(rhs), Verdict.HOLDS, assumption_text,
                             (detail + "; " if detail else "") + f"without the assumption lhs - rhs = {diff}")
    diff = sympy.simplify(lhs - rhs)
    return StepCheck(id_, source, claim, str(lhs), str(rhs), Verdict.VIOLATED, assumption_text,
                     (detail + "; " if detail else "") + f"lhs - rhs = {diff}")


def check_lemma_ii2() -> list[StepCheck]:
    """[IIIf-FL], Section II-D, Lemma II.2 and its proof, step by step."""
    table = symbols()
    a, b, c = table["a"], table["b"], table["c"]
    adv = printed_advantage(a, b)
    sym = {c: a}
    sym_text = ("symmetry: P_D0(A=0) = P_D1(A=1)",)
    # the distinguishing advantage of the balanced game: 2 P(win) - 1, P(win) = (P_D1(A=1) + P_D0(A=0))/2
    distinguishing = 2 * ((a + (1 - b)) / 2) - 1
    steps = [
        _step("II.2-0", "Section II-D, definition", "Adv(A) = P_D1(A=1) - P_D0(A=1)", adv, distinguishing,
              detail="the definition is the distinguishing advantage 2 P(win) - 1 of the balanced game "
                     "(P(win) = (P_D1(A=1) + 1 - P_D0(A=1))/2)"),
    ]
    # "By Bayes rule P(A|B) = 1 - P(not A|B)": P_D0(A=1) = 1 - P_D0(A=0)
    after_complement = a - (1 - c)
    steps.append(_step(
        "II.2-1", "Lemma II.2 proof, 'By Bayes rule'", "P_D1(A=1) - P_D0(A=1) = P_D1(A=1) - (1 - P_D0(A=0))",
        adv, after_complement, {b: 1 - c}, ("the attacker answers 0 or 1: P_D0(A=1) = 1 - P_D0(A=0)",),
        "this is the complement rule P(A|B) = 1 - P(not A|B), not Bayes' rule"))
    steps.append(_step("II.2-2", "Lemma II.2 proof, 'which is the same as'",
                       "P_D1(A=1) - (1 - P_D0(A=0)) = P_D1(A=1) - 1 + P_D0(A=0)",
                       after_complement, a - 1 + c))
    steps.append(_step("II.2-3", "Lemma II.2 proof, 'replacing the symmetry assumption on the right'",
                       "P_D1(A=1) - 1 + P_D0(A=0) = 2 P_D1(A=1) - 1", a - 1 + c, 2 * a - 1, sym, sym_text,
                       "counterexample without symmetry: D0 = {0:1}, D1 = {0:1/2, 1:1/2}, A(x) = [x = 1] "
                       "gives a = 1/2, c = 1, Adv = 1/2 but 2a - 1 = 0"))
    steps.append(_step("II.2-4", "Lemma II.2 proof, 'replacing on the left instead'",
                       "P_D1(A=1) - 1 + P_D0(A=0) = 2 P_D0(A=0) - 1", a - 1 + c, 2 * c - 1, {a: c}, sym_text))
    balanced = (a + c) / 2
    steps.append(_step(
        "II.2-5", "Lemma II.2 statement, balanced reading",
        "Adv = 2 P_{x in D_b, b uniform in {0,1}}(A(x) = b) - 1 with P(A(x)=b) = (P_D1(A=1) + P_D0(A=0))/2",
        a - 1 + c, 2 * balanced - 1,
        detail="the lemma's conclusion holds for every attacker in the balanced game: the symmetry "
               "assumption is not needed"))
    steps.append(_step(
        "II.2-6", "Lemma II.2 statement, per-b reading",
        "Adv = 2 P_D1(A=1) - 1 and Adv = 2 P_D0(A=0) - 1 (the 'generalisation' to each b)",
        a - 1 + c, 2 * a - 1, sym, sym_text,
        "for each fixed b the statement needs symmetry (see II.2-3)"))
    return steps


def check_theorem1() -> list[StepCheck]:
    """[IIIf-FL], Section III-D, Theorem 1 (Adv-FL-DP-Eq) and its proof, step by step."""
    table = symbols()
    a, b, eps, delta, p = table["a"], table["b"], table["eps"], table["delta"], table["P"]
    eps_pos = sympy.Symbol("epsilon", positive=True)  # "for every ε > 0"
    eps_real = sympy.Symbol("epsilon", real=True)  # roots outside the admissible range are reported too
    exp_eps = sympy.exp(eps)
    term = proof_privacy_term(eps)
    steps: list[StepCheck] = []
    # (1) equivalence at ε = 0
    steps.append(_step("T1-1", "Theorem 1 proof, first equivalence", "1/e^ε = 1 if ε = 0",
                       term.subs(eps, 0), sympy.Integer(1),
                       detail="at ε = 0 pure DP forces D0 = D1, so every attacker has Adv = 0; the converse "
                              "holds for the best attacker (TV = 0 iff D0 = D1) but not for every attacker "
                              "(one that always answers 0 has Adv = 0 whatever ε)"))
    # (2) "0 < Adv <= 1 ≡ 1/e^ε → 0 if ε > 0": a statement about a fixed ε > 0 only when the term equals its
    # limit at every ε > 0
    lim = sympy.limit(term, eps, sympy.oo)
    positive_eps = sympy.Interval.open(0, sympy.oo)
    where_at_limit = sympy.solveset(sympy.Eq(term.subs(eps, eps_pos), lim), eps_pos, positive_eps)
    at1 = term.subs(eps, 1)
    at_limit_text = "at no ε > 0" if where_at_limit == sympy.S.EmptySet else f"on {where_at_limit}"
    steps.append(StepCheck(
        "T1-2", "Theorem 1 proof, second equivalence", "0 < Adv <= 1  ≡  1/e^ε → 0, if ε > 0",
        "limit(1/e^ε, ε→∞)", str(lim), _verdict(where_at_limit == positive_eps), (),
        f"not a well-formed equivalence: 1/e^ε → 0 only as ε → ∞ (limit {lim}); it equals its limit "
        f"{at_limit_text}; for a fixed ε > 0 it is a number, e.g. {at1} ≈ {float(at1):.4f} at ε = 1"))
    # (3) the tight bound under pure ε-DP, derived: apply DP to the events {A=1} and {A=0}
    dp_on_one = a - exp_eps * b              # a <= e^ε b            (event A = 1)
    dp_on_zero = exp_eps * a - b - (exp_eps - 1)    # 1 - b <= e^ε (1 - a)  (event A = 0), rearranged
    tight = (exp_eps - 1) / (exp_eps + 1)
    steps.append(_step("T1-3", "derived (not in [IIIf-FL]): pure ε-DP bound",
                       "(a - e^ε b) + (e^ε a - b - (e^ε - 1)) = (1 + e^ε)(Adv - (e^ε-1)/(e^ε+1))",
                       dp_on_one + dp_on_zero, (1 + exp_eps) * ((a - b) - tight),
                       detail="both brackets are <= 0 under ε-DP, hence Adv <= (e^ε-1)/(e^ε+1) = tanh(ε/2); "
                              "randomized response attains it, so it is the largest advantage"))
    vertex = sympy.solve([sympy.Eq(a, exp_eps * b), sympy.Eq(1 - b, exp_eps * (1 - a))], [a, b], dict=True)[0]
    steps.append(_step("T1-4", "derived: the bound is attained (both DP constraints tight)",
                       "a - b at a = e^ε b, 1 - b = e^ε (1 - a)", vertex[a] - vertex[b], tight))
    # (4) "Summarizing, Adv = 1 - 1/e^ε": an equality with the largest advantage, or only a bound?
    proof_adv = proof_advantage(eps)
    gap = sympy.simplify(proof_adv - tight)
    gap_positive = bool(sympy.simplify(gap.subs(eps, eps_pos)).is_positive)
    gap_at_1 = float(gap.subs(eps, 1))
    equal = _identical(proof_adv, tight)
    if equal:
        t5_detail = "identical to the largest advantage under ε-DP"
    elif gap_positive:
        t5_detail = (f"not derived from the preceding equivalences; as an equality it is false for "
                     f"every ε > 0: (1 - 1/e^ε) - (e^ε-1)/(e^ε+1) = {gap} > 0 (e.g. {gap_at_1:.4f} at "
                     f"ε = 1), so no attacker of an ε-DP pair reaches it; as an upper bound "
                     f"Adv <= 1 - 1/e^ε it holds (see T1-6)")
    else:
        t5_detail = f"not derived from the preceding equivalences; lhs - rhs = {gap} is not identically 0"
    steps.append(StepCheck(
        "T1-5", "Theorem 1 proof, 'Summarizing'", "Adv = 1 - 1/e^ε", str(proof_adv),
        "largest advantage under ε-DP = (e^ε-1)/(e^ε+1)", _verdict(equal), (), t5_detail))
    steps.append(_step("T1-6", "derived: the proof's value read as an upper bound",
                       "(1 - 1/e^ε) - (e^ε-1)/(e^ε+1) = (e^ε-1)/(e^ε(e^ε+1)) >= 0",
                       gap, (exp_eps - 1) / (exp_eps * (exp_eps + 1)),
                       detail="non-negative for ε >= 0, zero only at ε = 0: a valid but loose bound"))
    # (5) Lemma II.2 + (4): 2P - 1 = 1 - 1/e^ε  =>  P = 1 - 1/(2e^ε)
    sol = sympy.solve(sympy.Eq(2 * p - 1, proof_adv), p)[0]
    steps.append(_step("T1-7", "Theorem 1 proof, 'Transforming the equation' (done correctly)",
                       "2P - 1 = 1 - 1/e^ε  ⟹  P = 1 - 1/(2 e^ε)", sol, 1 - 1 / (2 * exp_eps)))
    # (6) the printed conclusion against the proof's own solution
    stated = sympy.simplify(printed_probability())
    agree_at = sympy.solve(sympy.Eq(sol.subs(eps, eps_real), stated), eps_real)
    admissible = [r for r in agree_at if r.is_nonnegative]
    constant = eps not in stated.free_symbols
    kinds = [text for fact, text in ((bool(stated.is_negative), "negative, so not a probability"),
                                     (constant, "independent of ε")) if fact]
    roots = ", ".join(f"ε = {r}" for r in agree_at) or "no ε"
    excluded = ", which is excluded (ε >= 0)" if agree_at and not admissible else ""
    steps.append(StepCheck(
        "T1-8", "Theorem 1 statement and last proof line", "P(A(x)=b) = 1 - 1/(2e^{-1})",
        str(stated), str(sol), _verdict(_identical(stated, sol)), (),
        f"the printed right-hand side is {'the constant ' if constant else ''}{stated} = "
        f"{float(stated.subs(eps, 1)):.6f}{'' if constant else ' at ε = 1'}"
        + (": " + " and ".join(kinds) if kinds else "")
        + f"; it equals the proof's {sol} at {roots}{excluded}. Probably a typo for 1 - 1/(2e^ε)"))
    # (7) corrected statements
    steps.append(_step("T1-9", "corrected Theorem 1 (pure ε-DP)",
                       "P(A(x)=b) <= (1 + (e^ε-1)/(e^ε+1))/2 = e^ε/(1+e^ε)",
                       (1 + tight) / 2, exp_eps / (1 + exp_eps),
                       detail="balanced game, best attacker; equality for randomized response"))
    tight_d = (exp_eps - 1 + 2 * delta) / (exp_eps + 1)
    steps.append(_step("T1-10", "corrected Theorem 1 ((ε, δ)-DP)",
                       "P(A(x)=b) <= (1 + (e^ε-1+2δ)/(e^ε+1))/2 = (e^ε+δ)/(1+e^ε)", (1 + tight_d) / 2,
                       (exp_eps + delta) / (1 + exp_eps), detail="Humphries et al., CSF 2023; tight"))
    return steps


def check_all() -> list[StepCheck]:
    """Lemma II.2 then Theorem 1."""
    return check_lemma_ii2() + check_theorem1()
