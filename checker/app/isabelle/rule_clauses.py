r"""The ``inductive`` clauses of the base theory's three relations, derived from the rules' declarations
(:mod:`flmodel.rule_data`): ``state_transition_FL`` (the rules as published, [IIIf-FL] III-B),
``state_transition_FLx`` (with the IIIf policy gate and the noise support ``Sup``) and
``state_transition_rounds`` (``fedavg_rounds``, states paired with the deployment flag).

A clause reads ``name: "G = igra I ⟹ P = prot I ⟹ <premises> ⟹ P' = <trace set> ⟹ G' = Lgraph … ⟹
<relation> <parameters> <state> (Infrastructure G' P' (poli I))"``: the premises are the rule's own
(:meth:`flmodel.rule_data.Rule.isabelle`), ``G'`` has the written components' terms in their places and
the others kept. The base theory ``spec/isabelle/FL_Infrastructure.thy`` holds a marker ``(*@rules
DIALECT*)`` where each relation's clauses go (:func:`fill_rules`), so the exported theory states the rules
flcheck explores, from the one place they are declared.

    >>> print(clauses("published").splitlines()[0])
      put_part: "G = igra I \<Longrightarrow> P = prot I \<Longrightarrow> [] \<in> evs P \<Longrightarrow>
"""

from __future__ import annotations

import re

from flmodel.rule_data import IGRAPH, Dialect, Rule
from flmodel.rule_parts import Deployed
from flmodel.rules import FEDAVG_ROUNDS, PUBLISHED, RuleSet

__all__ = ["RELATIONS", "clauses", "fill_rules"]

#: Per dialect: the rule set printed, the relation's name, its parameters and the clause names' suffix.
RELATIONS: dict[Dialect, tuple[RuleSet, str, str, str]] = {
    "published": (PUBLISHED, "state_transition_FL", "Lr", ""),
    "extended": (PUBLISHED, "state_transition_FLx", "Lr Sup gate", "_x"),
    "rounds": (FEDAVG_ROUNDS, "state_transition_rounds", "Lr Sup gate", ""),
}
WIDTH = 104
IMPLIES = " \\<Longrightarrow>"
_MARKER = re.compile(r"^\(\*@rules (published|extended|rounds)\*\)\n", re.MULTILINE)


def _wrap(items: list[str], first: str, indent: str) -> list[str]:
    """``items`` (each ending with ``⟹``) filled into lines of at most :data:`WIDTH` characters, the
    first starting with ``first``, the others with ``indent``."""
    lines: list[str] = []
    line = first
    for item in items:
        if line.strip() and len(line) + 1 + len(item) > WIDTH and line not in (first, indent):
            lines.append(line)
            line = indent + item
        else:
            line = line + ("" if line in (first, indent) else " ") + item
    lines.append(line)
    return lines


def _states(rule: Rule, dialect: Dialect) -> tuple[str, str]:
    """The source and target states of a clause (the round-based relation pairs them with the
    deployment flag: what the rule requires of it, and ``True`` after a deployment)."""
    if dialect != "rounds":
        return "I", "(Infrastructure G' P' (poli I))"
    flags = [p.value for p in rule.premises if isinstance(p, Deployed)]
    before = ("True" if flags[0] else "False") if flags else "p"
    after = "True" if rule.deploys else before
    return f"(I, {before})", f"(Infrastructure G' P' (poli I), {after})"


def clause(rule: Rule, dialect: Dialect, first: bool = False) -> str:
    """The clause of one rule (module docstring)."""
    _, relation, params, suffix = RELATIONS[dialect]
    premises, terms, prot = rule.isabelle(dialect)
    head = f"  {rule.name}{suffix}: \"" if first else f"| {rule.name}{suffix}: \""
    lines = _wrap(["G = igra I" + IMPLIES, "P = prot I" + IMPLIES, *(p + IMPLIES for p in premises)], head,
                  "      ")
    lines.append(f"      P' = {prot}{IMPLIES}")
    components = [terms.get(comp, f"({comp} G)") for comp in IGRAPH]
    lines += _wrap(["G' = Lgraph", *components[:-1], components[-1] + IMPLIES], "      ", "             ")
    source, target = _states(rule, dialect)
    lines.append(f"      {relation} {params} {source} {target}\"")
    return "\n".join(lines)


def clauses(dialect: Dialect) -> str:
    """Every clause of the relation of ``dialect``, one rule after the other."""
    rules = RELATIONS[dialect][0].rules
    return "\n".join(clause(r, dialect, i == 0) for i, r in enumerate(rules)) + "\n"


def fill_rules(text: str) -> str:
    """``text`` (the base theory) with each marker ``(*@rules DIALECT*)`` replaced by its clauses."""
    return _MARKER.sub(lambda m: clauses(m.group(1)), text)  # type: ignore[arg-type]
