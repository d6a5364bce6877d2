"""An independent, naive CTL reference checker: pure-Python sets and fixpoint iteration straight from
the definitions of IIIf MC (``spec/IIIF.md``), used to cross-check ``checker.mc.ctl``.

It shares nothing with the fast checker but the AST classes: no numpy fixpoints, no dualities, no
SCCs — ``lfp`` iterates from the empty set, ``gfp`` from the full set.
"""

from __future__ import annotations

from collections.abc import Callable

from checker.mc import ctl_ast
from checker.mc.kripke import Kripke

StateSet = frozenset[int]


class ReferenceChecker:
    def __init__(self, kripke: Kripke, semantics: str = "iiif"):
        self.n = kripke.num_states
        self.S: StateSet = frozenset(range(self.n))
        succ: dict[int, set[int]] = {s: set() for s in range(self.n)}
        ptr, idx = kripke.succ_ptr, kripke.succ_idx
        for s in range(self.n):
            for e in range(int(ptr[s]), int(ptr[s + 1])):
                succ[s].add(int(idx[e]))
        if semantics == "total":
            for s in range(self.n):
                if not succ[s]:
                    succ[s].add(s)
        self.succ = succ
        self.labels = {name: frozenset(int(i) for i in range(self.n) if arr[i])
                       for name, arr in kripke.labels.items()}
        self.initial = frozenset(int(i) for i in kripke.initial)

    def ex(self, z: StateSet) -> StateSet:
        return frozenset(s for s in self.S if any(t in z for t in self.succ[s]))

    def ax(self, z: StateSet) -> StateSet:
        return frozenset(s for s in self.S if all(t in z for t in self.succ[s]))

    def lfp(self, f: Callable[[StateSet], StateSet]) -> StateSet:
        z: StateSet = frozenset()
        while True:
            nxt = f(z)
            if nxt == z:
                return z
            z = nxt

    def gfp(self, f: Callable[[StateSet], StateSet]) -> StateSet:
        z = self.S
        while True:
            nxt = f(z)
            if nxt == z:
                return z
            z = nxt

    def sat(self, f: ctl_ast.Formula) -> StateSet:
        S = self.S
        if isinstance(f, ctl_ast.TrueF):
            return S
        if isinstance(f, ctl_ast.FalseF):
            return frozenset()
        if isinstance(f, ctl_ast.Label):
            return self.labels[f.name]
        if isinstance(f, ctl_ast.Not):
            return S - self.sat(f.arg)
        if isinstance(f, ctl_ast.And):
            out = S
            for arg in f.args:
                out = out & self.sat(arg)
            return out
        if isinstance(f, ctl_ast.Or):
            out2: StateSet = frozenset()
            for arg in f.args:
                out2 = out2 | self.sat(arg)
            return out2
        if isinstance(f, ctl_ast.Implies):
            return (S - self.sat(f.left)) | self.sat(f.right)
        if isinstance(f, ctl_ast.Iff):
            a, b = self.sat(f.left), self.sat(f.right)
            return (a & b) | ((S - a) & (S - b))
        if isinstance(f, ctl_ast.EX):
            return self.ex(self.sat(f.arg))
        if isinstance(f, ctl_ast.AX):
            return self.ax(self.sat(f.arg))
        if isinstance(f, ctl_ast.EF):
            a = self.sat(f.arg)
            return self.lfp(lambda z: a | self.ex(z))
        if isinstance(f, ctl_ast.AF):
            a = self.sat(f.arg)
            return self.lfp(lambda z: a | self.ax(z))
        if isinstance(f, ctl_ast.EG):
            a = self.sat(f.arg)
            return self.gfp(lambda z: a & self.ex(z))
        if isinstance(f, ctl_ast.AG):
            a = self.sat(f.arg)
            return self.gfp(lambda z: a & self.ax(z))
        if isinstance(f, ctl_ast.EU):
            a, b = self.sat(f.left), self.sat(f.right)
            return self.lfp(lambda z: b | (a & self.ex(z)))
        if isinstance(f, ctl_ast.AU):
            a, b = self.sat(f.left), self.sat(f.right)
            return self.lfp(lambda z: b | (a & self.ax(z)))
        if isinstance(f, ctl_ast.ER):
            a, b = self.sat(f.left), self.sat(f.right)
            return self.gfp(lambda z: b & (a | self.ex(z)))
        if isinstance(f, ctl_ast.AR):
            a, b = self.sat(f.left), self.sat(f.right)
            return self.gfp(lambda z: b & (a | self.ax(z)))
        raise TypeError(f)

    def holds(self, f: ctl_ast.Formula) -> bool:
        return self.initial <= self.sat(f)
