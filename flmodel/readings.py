"""The ill-formed spots of the published rules ([IIIf-FL] III-B, ``put_part``, ``get_grad``,
``eval_server``) and the reading flcheck takes at each: the one home of this list.

``spec/SPEC.md`` section 2 argues each reading under the same number (R1–R14; R6 is well-formed and
not listed), the Isabelle base theory ``spec/isabelle/FL_Infrastructure.thy`` cites the numbers at its
rules, and ``flcheck check``, ``privacy`` and ``ctl`` report the list (``--json``: ``readings``) and one
line pointing to SPEC.md whenever they run the published rules (:func:`readings_of`); never for
flcheck's own rule sets (``fedavg_rounds``), which are well-formed.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PUBLISHED_READINGS", "Reading", "readings_line", "readings_of"]


@dataclass(frozen=True)
class Reading:
    """One ill-formed spot: its number in ``spec/SPEC.md`` (``R1``…), the rule, what is wrong in the
    published text, and the reading flcheck takes."""

    id: str
    rule: str
    spot: str
    reading: str

    def json(self) -> dict[str, str]:
        return {"id": self.id, "rule": self.rule, "spot": self.spot, "reading": self.reading}


PUBLISHED_READINGS: tuple[Reading, ...] = (
    Reading("R1", "put_part", "G' = Lgraph … has 8 arguments; Lgraph takes 9 (ready is missing)",
            "ready G, unchanged"),
    Reading("R2", "put_part", "(curmodpar) is not applied to G", "curmodpar G, unchanged"),
    Reading("R3", "put_part", "Part is bound by no premise",
            "every partition of the dataset over the clients is one step; Part c = ∅ for a non-client"),
    Reading("R4", "put_part", "⋃• is not defined", "the disjoint union: parts pairwise disjoint, their "
            "union the dataset, empty parts allowed"),
    Reading("R5", "put_part", "Put [Part] applies Put to a one-element list",
            "the event Put carries the list (Part), in a fresh one-event trace"),
    Reading("R7", "get_grad", "no ⟹ after Gradc = (curmodpar G) − η * ∇L(curmodpar G, partition c)",
            "a premise separator: the equation defines Gradc"),
    Reading("R8", "get_grad", "partition c is not applied to G", "partition G c"),
    Reading("R9", "get_grad", "∇L(w, P) is not defined in III-B",
            "the gradient in w of the part's mean loss F_k(w) of III-A"),
    Reading("R10", "get_grad", "∇L over an empty part is 0/0", "0, so Gradc = curmodpar G"),
    Reading("R11", "eval_server", "l ∈ evs G: G is an igraph and has no evs", "l ∈ evs P"),
    Reading("R12", "eval_server", "no ⟹ after n = card(dataset G) nor after Newmodel = …",
            "premise separators"),
    Reading("R13", "eval_server", "card (partition G c) / n with n = 0", "x / 0 = 0 (Isabelle/HOL's field "
            "convention): Newmodel = 0"),
    Reading("R14", "eval_server", "(card …/n) * gradient G c multiplies a number by a vector",
            "scalar times vector, Σ the vector sum (0 for no clients)"),
)


def readings_of(rule_set: str) -> tuple[Reading, ...]:
    """The readings a system with the rule set named ``rule_set`` relies on: :data:`PUBLISHED_READINGS`
    for ``published`` and its transformations (``published+network``), none for any other."""
    return PUBLISHED_READINGS if rule_set.split("+")[0] == "published" else ()


def readings_line(readings: tuple[Reading, ...]) -> str:
    """One line for a report that ran the published rules (empty when ``readings`` is)."""
    if not readings:
        return ""
    return (f"note: the published rules are ill-formed at {len(readings)} spots (put_part's G' with 8 of "
            f"Lgraph's 9 arguments, get_grad's missing ⟹, eval_server's l ∈ evs G and {len(readings) - 3} "
            f"more); flcheck reads them as spec/SPEC.md {readings[0].id}–{readings[-1].id} says")
