r"""The base theory ``FL_Infrastructure.thy`` that every export starts with, shipped as the data file
``spec/isabelle/FL_Infrastructure.thy`` (package ``flcheck_spec.isabelle``).

It re-states, self-contained on Isabelle/HOL's ``Complex_Main`` (``Main`` plus the reals and ``exp``,
both in the HOL session; HOL-Probability is not needed because every probability there is a finite sum),
the FL instance of the IIIf framework of [IIIf-FL], Section III:

* Kripke structures and the CTL operators as fixpoints over an arbitrary relation (IIIf ``MC``), the
  attack-tree datatype and its validity (IIIf ``AT``);
* the ``igraph`` datatype with its nine components, the protocol and its events, the infrastructure with
  local policies ([IIIf-FL] III-B);
* the three rules ``put_part``, ``get_grad``, ``eval_server`` as one ``inductive`` definition with their
  premises as published, and the readings of the ill-formed spots (cited in the theory's comments; the
  same readings as ``spec/SPEC.md`` and ``flmodel``); the clauses of this relation, of the gated and
  noisy one and of the round-based one are derived from the rules' declarations
  (:mod:`checker.app.isabelle.rule_clauses`), filled in where the shipped file has a marker;
* the path notions ``F s`` and ``M \<turnstile>F s`` and the probability of a path set (``pmap``), the
  first-passage path set, the neighbour relations and the definition ``NI_FL_DP`` ([IIIf-FL] III-C), and
  the statement of ``NI_Decomposition`` (left open with ``oops``).

The text is a constant: the export of every scenario writes the same bytes.
"""

from __future__ import annotations

import functools

import flcheck_spec

from checker.app.isabelle.rule_clauses import fill_rules

#: Name of the base theory (file ``FL_Infrastructure.thy``).
BASE_THEORY_NAME = "FL_Infrastructure"


@functools.cache
def base_theory_text() -> str:
    """The text of ``FL_Infrastructure.thy`` (ends with a newline), read once per process."""
    path = flcheck_spec.resource("isabelle", f"{BASE_THEORY_NAME}.thy")
    with open(path, encoding="utf-8", newline="") as handle:
        return fill_rules(handle.read())
