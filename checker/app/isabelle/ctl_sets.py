"""CTL formulas of the property language as Isabelle state sets over a scenario's relation (the CTL
operators of the base theory, IIIf ``MC``), and the test for formulas that read only components no rule
changes."""

from __future__ import annotations

from fractions import Fraction

from checker.app.isabelle.terms import IN, INTER, NEQ, NOT, NOTIN, Untranslatable, actor, set_term, vec
from checker.app.isabelle.vocabulary import ScenarioVocabulary
from checker.mc import ctl_ast
from flmodel.data import DataPoint

#: The base theory's CTL operators (IIIf ``MC``; ``EX'`` because ``EX`` is HOL's existential quantifier).
UNARY_OPERATORS: dict[type[ctl_ast.Unary], str] = {
    ctl_ast.EX: "EX'", ctl_ast.AX: "AX", ctl_ast.EF: "EF", ctl_ast.AF: "AF", ctl_ast.EG: "EG",
    ctl_ast.AG: "AG",
}
BINARY_OPERATORS: dict[type[ctl_ast.Binary], str] = {
    ctl_ast.EU: "EU", ctl_ast.AU: "AU", ctl_ast.ER: "ER", ctl_ast.AR: "AR",
}

#: The sort of the elements of a set-valued observable.
ELEMENT_SORTS = {"actorset": "actor", "dataset": "data"}

_BOOKKEEPING = ("round", "events", "last", "last_kind", "bound_reached", "secret_in_dataset")


class CtlSetTranslator:
    """Translates CTL formulas of the property language into state-set terms over the scenario's
    relation ``rel``; raises :class:`Untranslatable` for what has no counterpart in the Isabelle state."""

    def __init__(self, voc: ScenarioVocabulary, rel: str,
                 secrets: tuple[DataPoint, ...] | None = None) -> None:
        self.voc = voc
        self.rel = rel
        self.s = "fst s" if voc.rounds else "s"
        self.clients = set(voc.system.clients)
        #: the scenario's secret data points (``secret_in_dataset``, ``holds_x``), when known
        self.secrets: tuple[DataPoint, ...] | None = secrets

    def igraph_term(self) -> str:
        """The term of the igraph of the state ``s``."""
        return f"igra ({self.s})" if self.voc.rounds else "igra s"

    def observable(self, name: str) -> tuple[str, str]:
        """(term, sort) of an observable; sort in vector/actor-set/data-set/actor/nat/bool."""
        g = self.igraph_term()
        simple = {
            "curmodpar": (f"curmodpar ({g})", "vector"),
            "ready": (f"ready ({g})", "actorset"),
            "clients": (f"clients ({g})", "actorset"),
            "dataset": (f"dataset ({g})", "dataset"),
            "server": (f"server ({g})", "actor"),
            "n": (f"card (dataset ({g}))", "nat"),
        }
        if name in simple:
            return simple[name]
        if name == "trace_count":
            if self.voc.system.ctx.trace_mode != "full":
                raise Untranslatable("trace_count was observed on abstracted traces (trace mode 'drop')")
            return f"card (evs (prot ({self.s})))", "nat"
        if name == "partitioned" and self.voc.rounds:
            return "snd s", "bool"
        if name == "secret_in_dataset" and self.secrets is not None:
            pts = set_term(self.voc.point(p) for p in self.secrets)
            return f"dataset ({g}) {INTER} {pts} {NEQ} {{}}", "bool"
        if name.startswith("holds_") and self.secrets is not None:
            for p in self.secrets:
                if name == f"holds_{p.name}":
                    return self.voc.point(p), "holder"
        kind, _, arg = name.partition(":")
        if not arg:  # the scenario language's aliases: gradient_sat1 for gradient:sat1
            for k in ("gradient", "partition", "ready"):
                if name.startswith(k + "_") and name[len(k) + 1:] in self.clients:
                    kind, arg = k, name[len(k) + 1:]
        if arg in self.clients:
            if kind == "gradient":
                return f"gradient ({g}) ({actor(arg)})", "vector"
            if kind == "partition":
                return f"partition ({g}) ({actor(arg)})", "dataset"
            if kind == "ready":
                return f"{actor(arg)} \\<in> ready ({g})", "bool"
        raise Untranslatable(
            f"observable {name!r} is flcheck bookkeeping (or unknown) with no counterpart in the "
            "Isabelle state"
        )

    def value(self, t: ctl_ast.Term, sort: str) -> str:
        if isinstance(t, ctl_ast.Ref):
            try:
                term, s2 = self.observable(t.name)
                if sort == s2:
                    return term
            except Untranslatable:
                pass
            return self.symbol(t.name, sort)
        if isinstance(t, ctl_ast.Const):
            v = t.value
            if isinstance(v, bool):
                return "True" if v else "False"
            if isinstance(v, Fraction):
                if sort == "vector":
                    return vec((v,))
                if sort == "nat":
                    if v.denominator != 1 or v < 0:
                        raise Untranslatable(f"{v} is not a natural number")
                    return str(v.numerator)
                raise Untranslatable(f"number {v} compared with a value of sort {sort}")
            return self.symbol(str(v), sort)
        if isinstance(t, ctl_ast.VectorLit):
            if sort != "vector":
                raise Untranslatable(f"vector {t} compared with a value of sort {sort}")
            vals = []
            for it in t.items:
                if not (isinstance(it, ctl_ast.Const) and isinstance(it.value, Fraction)):
                    raise Untranslatable(f"vector {t} has a non-numeric item")
                vals.append(it.value)
            return vec(vals)
        if isinstance(t, ctl_ast.SetLit):
            elem = ELEMENT_SORTS.get(sort)
            if elem is None:
                raise Untranslatable(f"set {t} compared with a value of sort {sort}")
            return set_term(self.value(i, elem) for i in t.items)
        raise Untranslatable(f"term {t}")

    def symbol(self, name: str, sort: str) -> str:
        if sort == "actor":
            return actor(name)
        if sort == "data":
            for p, n in self.voc.point_names.items():
                if p.name == name:
                    return n
            raise Untranslatable(f"no data point named {name!r}")
        raise Untranslatable(f"symbol {name!r} where a value of sort {sort} is expected")

    def atom(self, f: ctl_ast.Atom) -> str:
        if isinstance(f, ctl_ast.Label):
            term, sort = self.observable(f.name)
            if sort != "bool":
                raise Untranslatable(f"label {f.name!r} is not a boolean observable")
            return f"{{s. {term}}}"
        if isinstance(f, ctl_ast.Enabled):
            raise Untranslatable("enabled(...) asks for the rule of an outgoing step, which the exported "
                                 "relation does not name")
        if isinstance(f, ctl_ast.Member):
            coll_term, coll_sort = self._side(f.collection, None)
            elem_sort = ELEMENT_SORTS.get(coll_sort or "")
            if elem_sort is None:
                raise Untranslatable(f"{f.collection} is not a set of actors or data points")
            elem = self.value(f.element, elem_sort)
            op = "\\<notin>" if f.negated else "\\<in>"
            return f"{{s. {elem} {op} {coll_term}}}"
        if isinstance(f, ctl_ast.Compare) and f.op in ("==", "!="):
            holder = self._holder(f)
            if holder is not None:
                return holder
        if isinstance(f, ctl_ast.Compare):
            left, right, op = f.left, f.right, f.op
            if op in (">", ">="):
                left, right, op = right, left, {">": "<", ">=": "<="}[op]
            lt, ls = self._side(left, None)
            rt = self.value(right, ls) if ls is not None else None
            if rt is None:
                rt, rs = self._side(right, None)
                if rs is None:
                    raise Untranslatable(f"neither side of {f} is an observable")
                lt = self.value(left, rs)
                ls = rs
            if op in ("<", "<=") and ls != "nat":
                raise Untranslatable(f"order comparison on a value of sort {ls}")
            isa_op = {"==": "=", "!=": "\\<noteq>", "<": "<", "<=": "\\<le>"}[op]
            return f"{{s. {lt} {isa_op} {rt}}}"
        raise Untranslatable(f"atom {f}")

    def _holder(self, f: ctl_ast.Compare) -> str | None:
        """``holds_x == c`` (the client whose part holds the secret point x): membership of x in that
        client's part (parts are disjoint, so the holder is unique); ``"none"``: in no client's part."""
        for x, y in ((f.left, f.right), (f.right, f.left)):
            if not (isinstance(x, ctl_ast.Ref) and x.name.startswith("holds_")):
                continue
            pt, _sort = self.observable(x.name)
            if isinstance(y, ctl_ast.Ref):
                who = y.name
            elif isinstance(y, ctl_ast.Const) and isinstance(y.value, str):
                who = y.value
            else:
                raise Untranslatable(f"{f}: the holder of a point is compared with a non-name")
            g = self.igraph_term()
            if who == "none":
                inner = f"(\\<forall>a\\<in>clients ({g}). {pt} {NOTIN} partition ({g}) a)"
            elif who in self.clients:
                inner = f"{pt} {IN} partition ({g}) ({actor(who)})"
            else:
                raise Untranslatable(f"{f}: {who!r} is not a client")
            return f"{{s. {inner}}}" if f.op == "==" else f"{{s. {NOT} ({inner})}}"
        return None

    def _side(self, t: ctl_ast.Term, sort: str | None) -> tuple[str, str | None]:
        if isinstance(t, ctl_ast.Ref):
            try:
                return self.observable(t.name)
            except Untranslatable:
                if sort is None:
                    if t.name in _BOOKKEEPING or ":" in t.name or t.name.startswith(("enabled_", "holds_")):
                        raise
                    return "", None
                raise
        return "", None

    def formula(self, f: ctl_ast.Formula) -> str:
        r = self.rel
        if isinstance(f, ctl_ast.TrueF):
            return "UNIV"
        if isinstance(f, ctl_ast.FalseF):
            return "{}"
        if isinstance(f, ctl_ast.Atom):
            return self.atom(f)
        if isinstance(f, ctl_ast.Not):
            return f"(- {self.formula(f.arg)})"
        if isinstance(f, ctl_ast.And):
            return "(" + " \\<inter> ".join(self.formula(a) for a in f.args) + ")"
        if isinstance(f, ctl_ast.Or):
            return "(" + " \\<union> ".join(self.formula(a) for a in f.args) + ")"
        if isinstance(f, ctl_ast.Implies):
            return f"((- {self.formula(f.left)}) \\<union> {self.formula(f.right)})"
        if isinstance(f, ctl_ast.Iff):
            a, b = self.formula(f.left), self.formula(f.right)
            return f"(((- {a}) \\<union> {b}) \\<inter> ((- {b}) \\<union> {a}))"
        if isinstance(f, ctl_ast.Unary) and type(f) in UNARY_OPERATORS:
            return f"({UNARY_OPERATORS[type(f)]} {r} {self.formula(f.arg)})"
        if isinstance(f, ctl_ast.Binary) and type(f) in BINARY_OPERATORS:
            return f"({BINARY_OPERATORS[type(f)]} {r} {self.formula(f.left)} {self.formula(f.right)})"
        raise Untranslatable(f"formula {f}")


_CHANGING = frozenset({"ready", "curmodpar", "round", "events", "last", "last_kind", "bound_reached",
                       "trace_count", "partitioned", "secret_in_dataset"})
_CHANGING_PREFIXES = ("gradient", "partition", "ready_", "enabled", "holds_")

#: Observables of components that no rule changes (gra, aloc, server, clients and dataset are copied
#: unchanged by put_part, get_grad and eval_server in every variant).
STATIC_OBSERVABLES = frozenset({"dataset", "clients", "server", "n"})


def reads_only_static(f: ctl_ast.Formula) -> bool:
    """Whether ``f`` is a boolean combination of atoms that read only components no rule changes (then
    ``AG f`` holds in the unbounded structure iff ``f`` holds initially, whatever the bounds)."""
    if isinstance(f, ctl_ast.TrueF | ctl_ast.FalseF):
        return True
    if isinstance(f, ctl_ast.Not | ctl_ast.And | ctl_ast.Or | ctl_ast.Implies | ctl_ast.Iff):
        return all(reads_only_static(g) for g in f.children())
    if isinstance(f, ctl_ast.Compare | ctl_ast.Member):
        terms = (f.left, f.right) if isinstance(f, ctl_ast.Compare) else (f.element, f.collection)
        refs = [t.name for t in terms if isinstance(t, ctl_ast.Ref)]
        # at least one side is a static observable; any other reference must be a symbol (a name that
        # is no observable of the model), never a changing component or flcheck's bookkeeping
        return any(r in STATIC_OBSERVABLES for r in refs) and all(
            r in STATIC_OBSERVABLES or r not in _CHANGING for r in refs
        ) and not any(r.startswith(_CHANGING_PREFIXES) for r in refs)
    return False


