"""The named properties of a scenario: one typed record per kind, each with only its own fields.

The scenario parser's transformer (:mod:`flmodel.scenario`) produces them; ``PropertyDecl`` is their
union, discriminated by the class constant ``kind`` (``p.kind == "budget"`` narrows ``p`` to
:class:`BudgetProperty` for a type checker), so the check pipeline dispatches on the type:

* ``ctl`` (:class:`CtlProperty`): a state formula;
* ``attack_tree`` (:class:`AttackTreeProperty`): ``expect`` (``exists``/``absent``), the goal and
  ``reduced`` (``attack_tree reduced``: the tree may be built on the structure the symmetry and the cone
  of influence reduce);
* ``probability`` (:class:`ProbabilityProperty`): ``scheduler`` (``min``/``max``/``uniform``, ``None``:
  ``min``), ``compare``, ``bound`` and the target set, reached eventually (first-passage probability);
* ``dp`` (:class:`DpProperty`): a ``D{ε,δ}[ψ]`` query of [dpCTL], ``neighbour``, ``scheduler``
  (``uniform``/``memoryless``/``adaptive``/``blind``, ``worst`` = ``adaptive``), ``observing``;
* ``privacy`` (:class:`PrivacyProperty`): ``eps`` (NI-FL-DP ε), ``neighbour``, ``observing``,
  ``scheduler`` (``None`` or ``uniform``: the uniform scheduler; ``memoryless``/``adaptive`` (alias
  ``worst``)/``blind``: the worst case over that class);
* ``advantage`` (:class:`AdvantageProperty`): ``bound_kind`` (``number``; ``theorem1``: ``1 − e^{−ε}``;
  ``tight``: ``tanh(ε/2)``) and ``bound`` (the number, or the ε of the formula), ``neighbour``,
  ``observing``;
* ``crossval`` (:class:`CrossvalProperty`): ``neighbour`` and ``options``;
* ``attack`` (:class:`AttackProperty`): ``attack`` (its name) and ``options``;
* ``budget`` (:class:`BudgetProperty`): ``eps`` (ε_B), ``delta`` (δ_B), ``budget_scope`` (``round``: each
  round's release alone; ``sequence``: the releases through each round; ``client``: each client's
  reports through each round), ``neighbour``.

:func:`formula_of`, :func:`neighbour_of` and :func:`observing_of` read the parts several kinds share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Literal

from flcheck_spec import unquote
from flcheck_spec.vocab import Position
from lark import Token, v_args

from flmodel.scenario_values import NOPOS, EpsSpec, Named, num_text

__all__ = [
    "AdvantageProperty", "AttackProperty", "AttackTreeProperty", "BudgetProperty", "CrossvalProperty",
    "CtlProperty", "DpProperty", "EpsSpec", "FormulaProperty", "FormulaText", "Option", "PrivacyProperty",
    "ProbabilityProperty", "Property", "PropertyDecl", "PropertyRules", "SchedulerWord", "formula_of",
    "fraction", "neighbour_of", "observing_of",
]

#: The scheduler classes a ``privacy`` or ``dp`` property names (``spec/grammar/scenario.lark``,
#: ``DPSCHEDULER``; ``worst`` is ``adaptive``).
SchedulerWord = Literal["uniform", "memoryless", "adaptive", "blind", "worst"]
#: The words of a budget's scope, by scope.
SCOPE_TEXT = {"round": "per round", "sequence": "over rounds", "client": "per client over rounds"}


@dataclass(frozen=True)
class FormulaText:
    """A formula of the property language as written, with the position of its first character."""

    text: str
    pos: Position = field(default=NOPOS, compare=False, repr=False)


@dataclass(frozen=True)
class Option:
    """``key = value`` of the optional property kinds (value: a Fraction, a name or a string)."""

    key: str
    value: Fraction | str
    quoted: bool = False
    pos: Position = field(default=NOPOS, compare=False, repr=False)

    def text(self) -> str:
        if isinstance(self.value, Fraction):
            v = num_text(self.value)
        elif self.quoted:
            v = '"' + self.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        else:
            v = self.value
        return f"{self.key} = {v}"


@dataclass(frozen=True)
class Property:
    """What every property has: its name and where it was declared."""

    name: str
    pos: Position = field(default=NOPOS, compare=False, repr=False, kw_only=True)

    def text(self) -> str:
        """The declaration as the scenario language writes it."""
        return f"property {self.name}: {self.body()}"

    def body(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class FormulaProperty(Property):
    """A property decided on a formula of the property language."""

    formula: FormulaText


def _observing_text(observing: tuple[Named, ...]) -> str:
    return (" observing " + ", ".join(o.name for o in observing)) if observing else ""


@dataclass(frozen=True)
class CtlProperty(FormulaProperty):
    """``ctl FORMULA``."""

    kind: ClassVar[Literal["ctl"]] = "ctl"

    def body(self) -> str:
        return f"ctl {self.formula.text};"


@dataclass(frozen=True)
class AttackTreeProperty(FormulaProperty):
    """``attack_tree [reduced] exists|absent GOAL``."""

    kind: ClassVar[Literal["attack_tree"]] = "attack_tree"
    expect: Literal["exists", "absent"]
    reduced: bool = False

    def body(self) -> str:
        red = "reduced " if self.reduced else ""
        return f"attack_tree {red}{self.expect} {self.formula.text};"


@dataclass(frozen=True)
class ProbabilityProperty(FormulaProperty):
    """``probability [min|max|uniform] OP BOUND reach TARGET``."""

    kind: ClassVar[Literal["probability"]] = "probability"
    compare: Literal["<=", ">=", "<", ">", "=="]
    bound: Fraction
    scheduler: Literal["min", "max", "uniform"] | None = None

    def body(self) -> str:
        sch = f"{self.scheduler} " if self.scheduler else ""
        return f"probability {sch}{self.compare} {num_text(self.bound)} reach {self.formula.text};"


@dataclass(frozen=True)
class DpProperty(FormulaProperty):
    """``dp D{ε,δ}[ψ] between NEIGHBOUR scheduler CLASS [observing …]``."""

    kind: ClassVar[Literal["dp"]] = "dp"
    neighbour: str
    scheduler: SchedulerWord = "worst"
    observing: tuple[Named, ...] = ()

    def body(self) -> str:
        return (f"dp {self.formula.text} between {self.neighbour} scheduler {self.scheduler}"
                f"{_observing_text(self.observing)};")


@dataclass(frozen=True)
class PrivacyProperty(Property):
    """``privacy epsilon <= ε between NEIGHBOUR [scheduler CLASS] [observing …]``."""

    kind: ClassVar[Literal["privacy"]] = "privacy"
    eps: EpsSpec
    neighbour: str
    observing: tuple[Named, ...] = ()
    scheduler: SchedulerWord | None = None

    def body(self) -> str:
        sch = f" scheduler {self.scheduler}" if self.scheduler else ""
        return f"privacy epsilon <= {self.eps.text()} between {self.neighbour}{sch}" \
               f"{_observing_text(self.observing)}"


@dataclass(frozen=True)
class AdvantageProperty(Property):
    """``advantage <= NUMBER|theorem1(ε)|tight(ε) between NEIGHBOUR [observing …]``."""

    kind: ClassVar[Literal["advantage"]] = "advantage"
    bound_kind: Literal["number", "theorem1", "tight"]
    bound: Fraction | EpsSpec
    neighbour: str
    observing: tuple[Named, ...] = ()

    def body(self) -> str:
        b = self.bound.text() if isinstance(self.bound, EpsSpec) else num_text(self.bound)
        if self.bound_kind != "number":
            b = f"{self.bound_kind}({b})"
        return f"advantage <= {b} between {self.neighbour}{_observing_text(self.observing)}"


@dataclass(frozen=True)
class CrossvalProperty(Property):
    """``crossval between NEIGHBOUR [KEY = VALUE …]``."""

    kind: ClassVar[Literal["crossval"]] = "crossval"
    neighbour: str
    options: tuple[Option, ...] = ()

    def body(self) -> str:
        return f"crossval between {self.neighbour}" + "".join(" " + o.text() for o in self.options)


@dataclass(frozen=True)
class AttackProperty(Property):
    """``attack NAME [KEY = VALUE …]``."""

    kind: ClassVar[Literal["attack"]] = "attack"
    attack: str
    options: tuple[Option, ...] = ()

    def body(self) -> str:
        return f"attack {self.attack}" + "".join(" " + o.text() for o in self.options)


@dataclass(frozen=True)
class BudgetProperty(Property):
    """``budget epsilon <= ε_B [delta δ_B] [per round|over rounds|per client over rounds] between
    NEIGHBOUR``."""

    kind: ClassVar[Literal["budget"]] = "budget"
    eps: EpsSpec
    neighbour: str
    delta: Fraction = Fraction(0)
    budget_scope: Literal["round", "sequence", "client"] = "sequence"

    def body(self) -> str:
        return (f"budget epsilon <= {self.eps.text()} delta {num_text(self.delta)} "
                f"{SCOPE_TEXT[self.budget_scope]} between {self.neighbour};")


PropertyDecl = (CtlProperty | AttackTreeProperty | ProbabilityProperty | DpProperty | PrivacyProperty
                | AdvantageProperty | CrossvalProperty | AttackProperty | BudgetProperty)


def formula_of(p: PropertyDecl) -> FormulaText | None:
    """The property's formula (``ctl``, ``attack_tree``, ``probability``, ``dp``), else ``None``."""
    return p.formula if isinstance(p, FormulaProperty) else None


def neighbour_of(p: PropertyDecl) -> str | None:
    """The neighbouring dataset the property compares ``D0`` with, ``None`` for the kinds without one."""
    if isinstance(p, DpProperty | PrivacyProperty | AdvantageProperty | CrossvalProperty | BudgetProperty):
        return p.neighbour
    return None


def observing_of(p: PropertyDecl) -> tuple[Named, ...]:
    """What the property says the attacker observes (``()``: not said)."""
    if isinstance(p, DpProperty | PrivacyProperty | AdvantageProperty):
        return p.observing
    return ()


def fraction(tok: Token | str) -> Fraction:
    """The exact number a numeral token writes (``0.25`` is ``1/4``)."""
    return Fraction(str(tok))


#: A property's body as the transformer reads it: its record class and the fields (``_``-prefixed
#: keys: positions of parts, for messages).
_Body = tuple[type[Property], dict[str, Any]]


class PropertyRules:
    """The scenario transformer's rules of the property statements (``spec/grammar/scenario.lark``,
    ``property``): each kind's record made from its parse. Mixed into
    :class:`flmodel.scenario_transform.Build`, which gives the positions of tokens."""

    def _p(self, tok: Token) -> Position:
        raise NotImplementedError

    def _at(self, meta: Any) -> Position:
        raise NotImplementedError

    def _named(self, tok: Token) -> Named:
        raise NotImplementedError

    def observing(self, items: list[Token]) -> tuple[str, Any]:
        return ("observing", tuple(self._named(t) for t in items))

    def eps_value(self, items: list[Fraction]) -> EpsSpec:
        return EpsSpec(items[0], False)

    def eps_log(self, items: list[Fraction]) -> EpsSpec:
        return EpsSpec(items[0], True)

    def adv_number(self, items: list[Fraction]) -> tuple[str, Any]:
        return ("number", items[0])

    def adv_theorem1(self, items: list[EpsSpec]) -> tuple[str, Any]:
        return ("theorem1", items[0])

    def adv_tight(self, items: list[EpsSpec]) -> tuple[str, Any]:
        return ("tight", items[0])

    def option(self, items: list[Any]) -> Option:
        key, value = items
        pos = self._p(key)
        if isinstance(value, Fraction):
            return Option(str(key), value, pos=pos)
        if value.type == "STRING":
            return Option(str(key), unquote(str(value)), True, pos=pos)
        return Option(str(key), str(value), pos=pos)

    def _formula(self, tok: Token) -> FormulaText:
        return FormulaText(str(tok).rstrip(), self._p(tok))

    def prop_ctl(self, items: list[Token]) -> _Body:
        return CtlProperty, {"formula": self._formula(items[0])}

    def prop_attack_tree(self, items: list[Token]) -> _Body:
        reduced = items[0].type == "REDUCED"
        expect, goal = items[1:] if reduced else items
        return AttackTreeProperty, {"expect": str(expect), "formula": self._formula(goal), "reduced": reduced}

    def _obs(self, rest: list[Any]) -> tuple[Named, ...]:
        for r in rest:
            if isinstance(r, tuple) and r and r[0] == "observing":
                return r[1]
        return ()

    def prop_privacy(self, items: list[Any]) -> _Body:
        eps, nb, *rest = items
        sched = next((r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "scheduler"), None)
        return PrivacyProperty, {"eps": eps, "neighbour": str(nb), "observing": self._obs(rest),
                                 "scheduler": sched, "_nbpos": self._p(nb)}

    def prop_advantage(self, items: list[Any]) -> _Body:
        (bkind, bval), nb, *rest = items
        return AdvantageProperty, {"bound_kind": bkind, "bound": bval, "neighbour": str(nb),
                                   "observing": self._obs(rest), "_nbpos": self._p(nb)}

    def prop_probability(self, items: list[Any]) -> _Body:
        sched = None
        if isinstance(items[0], Token) and items[0].type == "SCHEDULER":
            sched = str(items[0])
            items = items[1:]
        cmp_tok, bound, formula = items
        return ProbabilityProperty, {"scheduler": sched, "compare": str(cmp_tok), "bound": bound,
                                     "formula": self._formula(formula), "_boundpos": self._p(cmp_tok)}

    def prop_dp(self, items: list[Any]) -> _Body:
        formula, nb, *rest = items
        sched = next((r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "scheduler"), "worst")
        return DpProperty, {"formula": self._formula(formula), "neighbour": str(nb), "scheduler": sched,
                            "observing": self._obs(rest), "_nbpos": self._p(nb)}

    def dp_scheduler(self, items: list[Token]) -> tuple[str, str]:
        return ("scheduler", str(items[0]))

    def prop_crossval(self, items: list[Any]) -> _Body:
        nb, *opts = items
        return CrossvalProperty, {"neighbour": str(nb), "options": tuple(opts), "_nbpos": self._p(nb)}

    def prop_attack(self, items: list[Any]) -> _Body:
        name, *opts = items
        return AttackProperty, {"attack": str(name), "options": tuple(opts)}

    def prop_budget(self, items: list[Any]) -> _Body:
        eps, *rest = items
        nb = rest[-1]
        out: dict[str, Any] = {"eps": eps, "neighbour": str(nb), "_nbpos": self._p(nb)}
        for r in rest[:-1]:
            out[r[0]] = r[1]
            if r[0] == "delta":
                out["_deltapos"] = r[2]
        return BudgetProperty, out

    @v_args(meta=True)
    def budget_delta(self, meta: Any, items: list[Any]) -> tuple[str, Fraction, Position]:
        (value,) = items
        return ("delta", fraction(value) if isinstance(value, Token) else value, self._at(meta))

    def scope_round(self, items: list[Any]) -> tuple[str, str]:
        return ("budget_scope", "round")

    def scope_sequence(self, items: list[Any]) -> tuple[str, str]:
        return ("budget_scope", "sequence")

    def scope_client(self, items: list[Any]) -> tuple[str, str]:
        return ("budget_scope", "client")

    def property(self, items: list[Any]) -> tuple[str, Any]:
        """The typed record of the property's kind (:mod:`flmodel.scenario_properties`), and the
        positions of its parts for the semantic checks' messages."""
        name, (record, body) = items
        extra = {k: v for k, v in body.items() if k.startswith("_")}
        fields = {k: v for k, v in body.items() if not k.startswith("_")}
        return ("property", (record(str(name), pos=self._p(name), **fields), extra))
