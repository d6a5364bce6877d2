r"""Declaration and use of names in an exported theory: what a theory declares (its interface), and
the checks that every constant, type, fact and proof method is declared (by the theory, an imported
exported theory, or Isabelle's ``Main`` in the explicit lists below) before it is used, never twice, and
never silently shadowing ``Main``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import lark
from lark import Token, Tree

from checker.app.isabelle.syntax_parse import SyntaxIssue, parse, term_references, type_references

#: Constants of Isabelle/HOL ``Main`` / ``Complex_Main`` that exported terms may use.
MAIN_CONSTANTS: frozenset[str] = frozenset(
    {
        "True", "False", "Suc", "map", "map2", "set", "hd", "last", "length", "insert", "card",
        "of_nat", "lfp", "gfp", "mono", "fst", "snd", "exp", "fun_upd", "Pair", "finite", "distinct",
        "sorted", "sum", "prod", "id", "sum_list", "undefined", "UNIV",
    }
)

#: Type constructors of ``Main`` / ``Complex_Main`` that exported types may use.
MAIN_TYPES: frozenset[str] = frozenset({"bool", "nat", "int", "rat", "real", "string", "set", "list", "char"})

#: Facts of ``Main`` cited by exported proofs.
MAIN_FACTS: frozenset[str] = frozenset(
    {
        "lfp_unfold", "gfp_upperbound", "converse_rtranclp_induct", "mono_def", "rtranclp.rtrancl_refl",
        "rtranclp.rtrancl_into_rtrancl", "converse_rtranclp_into_rtranclp", "rtranclp_trans",
        "r_into_rtranclp", "insert_iff", "singleton_iff", "fun_upd_apply", "fun_upd_def", "Let_def",
        "empty_iff", "refl", "conjI", "ext", "assms", "gfp_unfold", "rtranclp_induct", "lfp_lowerbound",
        "fun_eq_iff", "subset_refl",
    }
)

#: Proof methods cited by exported proofs (all in ``Pure`` / ``HOL``).
MAIN_METHODS: frozenset[str] = frozenset(
    {
        "rule", "erule", "simp", "simp_all", "auto", "blast", "force", "fastforce", "metis", "induction",
        "subst", "intro", "unfold", "standard", "clarsimp", "fact", "assumption", "eval", "meson",
        "cases", "linarith", "arith",
    }
)

#: Main constants the base theory shadows on purpose: the seed names the igraph component
#: ``partition`` (HOL's ``List.partition`` remains accessible by its qualified name).
INTENDED_SHADOWS: frozenset[str] = frozenset({"partition"})

#: Symbols declared by mixfix annotations in the exported theories -> the constant they denote.

_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_']*\Z")


@dataclass
class TheoryInterface:
    """What a checked theory declares (visible to theories importing it)."""

    name: str
    constants: set[str] = field(default_factory=set)
    types: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    notations: dict[str, str] = field(default_factory=dict)
    locales: dict[str, set[str]] = field(default_factory=dict)
    locale_facts: dict[str, set[str]] = field(default_factory=dict)




class TheoryChecker:
    def __init__(self, text: str, file: str, imported: Iterable[TheoryInterface]) -> None:
        self.text = text
        self.file = file
        self.issues: list[SyntaxIssue] = []
        self.constants: set[str] = set()
        self.types: set[str] = set()
        self.facts: set[str] = set()
        self.notations: dict[str, str] = {}
        self.locales: dict[str, set[str]] = {}
        self.locale_facts: dict[str, set[str]] = {}
        self.own_constants: set[str] = set()
        self.own_types: set[str] = set()
        self.own_facts: set[str] = set()
        for th in imported:
            self.constants |= th.constants
            self.types |= th.types
            self.facts |= th.facts
            self.notations.update(th.notations)
            self.locales.update(th.locales)
            self.locale_facts.update(th.locale_facts)

    # -- reporting ---------------------------------------------------------------------------------
    def err(self, node: Tree | Token | None, message: str, offset: tuple[int, int] | None = None) -> None:
        line, col = 1, 1
        if isinstance(node, Token) and node.line is not None:
            line, col = node.line, node.column or 1
        elif isinstance(node, Tree) and getattr(node.meta, "line", None) is not None:
            line, col = node.meta.line, node.meta.column
        if offset is not None:
            # offset: position inside a quoted string whose token is `node`
            dl, dc = offset
            if dl == 1:
                col = col + dc  # +1 for the quote, -1 for 1-based column
            else:
                line, col = line + dl - 1, dc
        self.issues.append(SyntaxIssue(self.file, line, col, message))

    # -- declarations --------------------------------------------------------------------------------
    def declare_const(self, name: str, node: Tree | Token) -> None:
        if not _IDENT.match(name):
            self.err(node, f"ill-formed constant name {name!r}")
        if name in self.own_constants:
            self.err(node, f"constant {name!r} declared twice")
        if name in MAIN_CONSTANTS and name not in INTENDED_SHADOWS:
            self.err(node, f"constant {name!r} shadows the Main constant of the same name")
        self.own_constants.add(name)
        self.constants.add(name)

    def declare_type(self, name: str, node: Tree | Token) -> None:
        if not _IDENT.match(name):
            self.err(node, f"ill-formed type name {name!r}")
        if name in self.own_types or name in MAIN_TYPES:
            self.err(node, f"type {name!r} declared twice (or shadows a Main type)")
        self.own_types.add(name)
        self.types.add(name)

    def declare_fact(self, name: str, node: Tree | Token, scope: set[str] | None = None) -> None:
        if not re.match(r"[A-Za-z][A-Za-z0-9_'.]*\Z", name):
            self.err(node, f"ill-formed fact name {name!r}")
        if name in self.own_facts or (scope is not None and name in scope):
            self.err(node, f"fact {name!r} declared twice")
        if scope is not None:
            scope.add(name)
        else:
            self.own_facts.add(name)
            self.facts.add(name)

    # -- inner syntax -------------------------------------------------------------------------------
    def parse_inner(self, tok: Token, start: str) -> Tree | None:
        content = str(tok)[1:-1]
        try:
            return parse(content, start)
        except lark.exceptions.UnexpectedInput as exc:
            line = getattr(exc, "line", 1) or 1
            col = getattr(exc, "column", 1) or 1
            self.err(tok, f"inner syntax error in {start}: {str(exc).splitlines()[0]}", (line, col))
        except lark.exceptions.LarkError as exc:
            self.err(tok, f"inner syntax error in {start}: {exc}")
        return None

    def check_type_tok(self, tok: Token | None, tparams: frozenset[str] = frozenset()) -> None:
        if tok is None:
            return
        if tok.type == "NAME":
            if str(tok) not in self.types and str(tok) not in MAIN_TYPES:
                self.err(tok, f"type {tok!s} used before it is defined")
            return
        tree = self.parse_inner(tok, "type")
        if tree is not None:
            self.check_type_tree(tree, tok, tparams)

    def check_type_tree(self, tree: Tree, tok: Token, tparams: frozenset[str] = frozenset()) -> None:
        for ref, _node in type_references(tree):
            name = ref[5:]
            if name not in self.types and name not in MAIN_TYPES:
                self.err(tok, f"type {name!r} used before it is defined")

    def check_refs(
        self,
        tree: Tree,
        tok: Token,
        scope: set[str],
        free_allowed: bool,
        counts: Counter[str] | None = None,
    ) -> list[str]:
        """Check the free names of a parsed term; returns the free variables (names that are neither
        constants nor in ``scope``) when ``free_allowed``, and reports them otherwise."""
        free: list[str] = []
        for ref, _node in term_references(tree):
            if ref.startswith("type:"):
                name = ref[5:]
                if name not in self.types and name not in MAIN_TYPES:
                    self.err(tok, f"type {name!r} used before it is defined")
                continue
            if ref.startswith("op:"):
                sym = ref[3:]
                if sym not in self.notations:
                    self.err(tok, f"operator {sym} used before a constant declares it")
                continue
            if ref in scope or ref in self.constants or ref in MAIN_CONSTANTS:
                continue
            if "." in ref:
                self.err(tok, f"qualified name {ref!r} is not defined")
                continue
            if free_allowed:
                free.append(ref)
                if counts is not None:
                    counts[ref] += 1
            else:
                self.err(tok, f"constant {ref!r} used before it is defined")
        return free

    def term(self, tok: Token, scope: set[str], free_allowed: bool = False,
             counts: Counter[str] | None = None) -> Tree | None:
        tree = self.parse_inner(tok, "term")
        if tree is not None:
            self.check_refs(tree, tok, scope, free_allowed, counts)
        return tree

    # -- outer syntax ---------------------------------------------------------------------------------
    def run(self, tree: Tree, expected_name: str) -> TheoryInterface:
        name_tok = tree.children[0]
        name = str(name_tok)
        if name != expected_name:
            self.err(name_tok, f"theory name {name!r} differs from the file name {expected_name!r}")
        if not re.match(r"[A-Za-z][A-Za-z0-9_]*\Z", name):
            self.err(name_tok, f"ill-formed theory name {name!r}")
        for cmd in tree.children[1:]:
            if isinstance(cmd, Tree) and cmd.data != "import_name":
                self.command(cmd, set(), None)
        return TheoryInterface(
            name,
            set(self.own_constants),
            set(self.own_types),
            set(self.own_facts),
            {k: v for k, v in self.notations.items()},
            dict(self.locales),
            dict(self.locale_facts),
        )

    def command(self, cmd: Tree, scope: set[str], local_facts: set[str] | None) -> None:
        handler = getattr(self, "cmd_" + cmd.data, None)
        if handler is not None:
            handler(cmd, scope, local_facts)

    def _tparams(self, kids: list) -> tuple[frozenset[str], list]:
        if kids and isinstance(kids[0], Tree) and kids[0].data == "type_params":
            return frozenset(str(t) for t in kids[0].children), kids[1:]
        return frozenset(), kids

    def cmd_type_synonym(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        tparams, kids = self._tparams(list(cmd.children))
        self.check_type_tok(kids[1], tparams)
        self.declare_type(str(kids[0]), kids[0])

    def cmd_datatype(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        tparams, kids = self._tparams(list(cmd.children))
        tname = kids[0]
        self.declare_type(str(tname), tname)
        for ctor in kids[1:]:
            cname = ctor.children[0]
            self.declare_const(str(cname), cname)
            for arg in ctor.children[1:]:
                if arg.data == "ctor_arg_sel":
                    sel, ty = arg.children
                    self.check_type_tok(ty, tparams)
                    self.declare_const(str(sel), sel)
                else:
                    self.check_type_tok(arg.children[0], tparams)
        self.declare_fact(f"{tname}.simps", tname, lf)

    def _mixfix(self, kids: list, name: str) -> None:
        for k in kids:
            if isinstance(k, Tree) and k.data == "infix_mixfix":
                sym = str(k.children[1])[1:-1]
                self.notations[sym] = name

    def _definition(self, cmd: Tree, scope: set[str], lf: set[str] | None, fact: bool) -> None:
        kids = list(cmd.children)
        name_tok = kids[0]
        name = str(name_tok)
        body_tok = _token(kids[-1])
        for k in kids[1:-1]:
            if isinstance(k, Tree) and k.data == "type_decl":
                self.check_type_tok(_token(k.children[0]))
        thm = next((k for k in kids if isinstance(k, Tree) and k.data == "thm_decl"), None)
        tree = self.parse_inner(body_tok, "term")
        if tree is not None:
            if tree.data not in ("eq_meta", "rel"):
                self.err(body_tok, f"definition of {name!r} is not an equation 'lhs \\<equiv> rhs'")
            else:
                lhs, rhs = tree.children[0], tree.children[-1]
                head, args = _spine(lhs)
                if not (isinstance(head, Tree) and head.data == "const" and str(head.children[0]) == name):
                    self.err(body_tok, f"the left-hand side of the definition must apply {name!r}")
                params: set[str] = set()
                for a in args:
                    if isinstance(a, Tree) and a.data == "const":
                        params.add(str(a.children[0]))
                    else:
                        self.err(body_tok, f"definition of {name!r}: arguments must be variables")
                self.check_refs(rhs, body_tok, scope | params, free_allowed=False)
        self._mixfix(kids, name)
        self.declare_const(name, name_tok)
        if fact:
            self.declare_fact(str(thm.children[0]) if thm else f"{name}_def", name_tok, lf)

    def cmd_definition(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        self._definition(cmd, scope, lf, fact=True)

    def cmd_abbreviation(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        self._definition(cmd, scope, lf, fact=False)

    def cmd_fun_def(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        kids = list(cmd.children)
        name_tok = kids[1]
        for k in kids:
            if isinstance(k, Tree) and k.data == "type_decl":
                self.check_type_tok(_token(k.children[0]))
        self._mixfix(kids, str(name_tok))
        self.declare_const(str(name_tok), name_tok)  # recursive: visible in its equations
        for eq in (k for k in kids if isinstance(k, Tree) and k.data == "equation"):
            tok = _token(eq.children[-1])
            tree = self.parse_inner(tok, "term")
            if tree is None:
                continue
            if tree.data != "rel":
                self.err(tok, "a function equation must be 'lhs = rhs'")
                continue
            lhs, rhs = tree.children
            pattern_vars = set(self.check_refs(lhs, tok, scope, free_allowed=True))
            self.check_refs(rhs, tok, scope | pattern_vars, free_allowed=False)
        self.declare_fact(f"{name_tok}.simps", name_tok, lf)

    def cmd_inductive_def(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        kids = list(cmd.children)
        name_tok = kids[0]
        fixed: set[str] = set()
        for k in kids[1:]:
            if isinstance(k, Tree) and k.data == "type_decl":
                self.check_type_tok(_token(k.children[0]))
            if isinstance(k, Tree) and k.data == "for_fixes":
                for f in k.children:
                    names, typ = _fixed(f)
                    self.check_type_tok(typ)
                    fixed |= {str(n) for n in names}
        self._mixfix(kids, str(name_tok))
        self.declare_const(str(name_tok), name_tok)
        for rule in (k for k in kids if isinstance(k, Tree) and k.data == "intro_rule"):
            tok = _token(rule.children[-1])
            counts: Counter[str] = Counter()
            self.term(tok, scope | fixed, free_allowed=True, counts=counts)
            self._check_counts(counts, tok)
            if len(rule.children) > 1:
                rname = str(rule.children[0].children[0])
                self.declare_fact(rname, rule.children[0], lf)
                self.declare_fact(f"{name_tok}.{rname}", rule.children[0], lf)
        for suffix in ("cases", "induct", "intros", "simps"):
            self.declare_fact(f"{name_tok}.{suffix}", name_tok, lf)

    def _check_counts(self, counts: Counter[str], tok: Tree | Token) -> None:
        for var, n in sorted(counts.items()):
            if n < 2:
                self.err(tok, f"name {var!r} is neither a defined constant nor a variable used twice "
                              "(a misspelt constant?)")

    def cmd_statement(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        kids = list(cmd.children)
        thm = next((k for k in kids if isinstance(k, Tree) and k.data == "thm_decl"), None)
        proof = kids[-1]
        stmt = kids[-2]
        local = set(scope)
        counts: Counter[str] = Counter()
        if isinstance(stmt, Token):
            self.term(stmt, local, free_allowed=True, counts=counts)
        else:
            for part in stmt.children:
                if isinstance(part, Tree) and part.data == "fixed":
                    names, typ = _fixed(part)
                    self.check_type_tok(typ)
                    local |= {str(n) for n in names}
            for part in stmt.children:
                if isinstance(part, Tree) and part.data == "prop_decl":
                    for t in part.children:
                        if isinstance(t, Token) and t.type == "QUOTED":
                            self.term(t, local, free_allowed=True, counts=counts)
        tok = stmt if isinstance(stmt, Token) else stmt.children[-1]
        self._check_counts(counts, tok if isinstance(tok, Token) else kids[0])
        proof_scope = local | set(counts)
        self.proof(proof, proof_scope, lf)
        if thm is not None and not _ends_with_oops(proof):
            self.declare_fact(str(thm.children[0]), thm, lf)

    def facts_known(self, lf: set[str] | None) -> set[str]:
        return self.facts | (lf or set())

    def check_fact(self, tok: Token, lf: set[str] | None, extra: AbstractSet[str] = frozenset()) -> None:
        name = str(tok)
        if name in self.facts_known(lf) or name in MAIN_FACTS or name in extra:
            return
        self.err(tok, f"fact {name!r} cited before it is proved or defined")

    def proof(self, proof: Tree, scope: set[str], lf: set[str] | None, local: set[str] | None = None) -> None:
        local_facts = set() if local is None else local
        for node in proof.iter_subtrees_topdown():
            if node.data == "fact":
                self.check_fact(node.children[0], lf, local_facts)
            elif node.data in ("method_call", "method_name"):
                m = node.children[0]
                if str(m) not in MAIN_METHODS:
                    self.err(m, f"unknown proof method {m!s}")
            elif node.data == "marg_name":
                self.check_fact(node.children[0], lf, local_facts)
            elif node.data in ("have_item", "assume_item"):
                for k in node.children:
                    if isinstance(k, Tree) and k.data == "claim":
                        for t in k.children:
                            if isinstance(t, Token) and t.type == "QUOTED":
                                self.term(t, scope)
                    elif isinstance(k, Token) and k.type == "QUOTED":
                        self.term(k, scope)
                    elif isinstance(k, Tree) and k.data == "thm_decl":
                        local_facts.add(str(k.children[0]))
            elif node.data == "case_item":
                spec = node.children[0]
                scope |= {str(t) for t in spec.children[1:]}
            elif node.data == "fix_item":
                scope |= {str(t) for t in node.children}
            elif node.data == "attr_item":
                # [OF a b], [where x = "t"], [of "t"]: facts and terms
                head_node = node.children[0]
                head = str(head_node.children[0]) if head_node.children else "where"
                for t in node.children[1:]:
                    if isinstance(t, Token) and t.type == "QUOTED":
                        self.term(t, scope)
                    elif head == "OF" and isinstance(t, Token) and t.type == "NAME":
                        self.check_fact(t, lf, local_facts)
            elif node.data == "marg_term":
                self.term(node.children[0], scope)

    def cmd_locale_def(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        kids = list(cmd.children)
        name_tok = kids[0]
        params: set[str] = set()
        facts: set[str] = set()
        body: list[Tree] = []
        for el in kids[1:]:
            if not isinstance(el, Tree):
                continue
            if el.data == "locale_fixes":
                for f in el.children:
                    names, typ = _fixed(f)
                    self.check_type_tok(typ)
                    for n in names:
                        if str(n) in params or str(n) in self.constants:
                            self.err(n, f"locale parameter {n!s} declared twice or shadows a constant")
                        if str(n) in MAIN_CONSTANTS:
                            self.err(n, f"locale parameter {n!s} shadows a Main constant")
                        params.add(str(n))
            elif el.data == "locale_defines":
                tok = _token(el.children[-1])
                tree = self.parse_inner(tok, "term")
                if tree is not None:
                    if tree.data != "eq_meta":
                        self.err(tok, "a locale definition must be 'x \\<equiv> t'")
                    else:
                        lhs = tree.children[0]
                        if not (isinstance(lhs, Tree) and lhs.data == "const"
                                and str(lhs.children[0]) in params):
                            self.err(tok, "a locale definition must define a fixed parameter")
                        self.check_refs(tree.children[1], tok, scope | params, free_allowed=False)
                if len(el.children) > 1:
                    self.declare_fact(str(el.children[0].children[0]), el.children[0], facts)
            elif el.data == "locale_assumes":
                self.term(_token(el.children[-1]), scope | params)
                if len(el.children) > 1:
                    self.declare_fact(str(el.children[0].children[0]), el.children[0], facts)
            else:
                body.append(el)
        lname = str(name_tok)
        if lname in self.locales:
            self.err(name_tok, f"locale {lname!r} declared twice")
        self.locales[lname] = params
        self.locale_facts[lname] = facts
        for c in body:
            self.command(c, scope | params, facts)

    def cmd_context_block(self, cmd: Tree, scope: set[str], lf: set[str] | None) -> None:
        name_tok = cmd.children[0]
        lname = str(name_tok)
        if lname not in self.locales:
            self.err(name_tok, f"context {lname!r}: no such locale")
            return
        facts = self.locale_facts[lname]
        for c in cmd.children[1:]:
            if isinstance(c, Tree):
                self.command(c, scope | self.locales[lname], facts)


def _token(node: Tree | Token) -> Token:
    """``node`` as a token: the grammar puts a token (a name or a quoted string) there."""
    if not isinstance(node, Token):
        raise TypeError(f"expected a token of the Isabelle-subset grammar, got the rule {node.data!r}")
    return node


def _fixed(node: Tree) -> tuple[list[Token], Token | None]:
    """The names and the (optional) type token of a ``fixed`` node (``x y :: "t"``)."""
    names = [c for c in node.children if isinstance(c, Token)]
    typ = next((_token(c.children[0]) for c in node.children if isinstance(c, Tree)), None)
    return names, typ


def _spine(t: Tree | Token) -> tuple[Tree | Token, list[Tree | Token]]:
    args: list[Tree | Token] = []
    while isinstance(t, Tree) and t.data == "app":
        args.append(t.children[1])
        t = t.children[0]
    return t, list(reversed(args))


def _ends_with_oops(proof: Tree) -> bool:
    tail = proof.children[-1]
    if isinstance(tail, Tree) and tail.data == "oops_proof":
        return True
    if isinstance(tail, Tree) and tail.data == "apply_script":
        end = tail.children[-1]
        return isinstance(end, Tree) and not end.children and "oops" in str(end)
    return False


