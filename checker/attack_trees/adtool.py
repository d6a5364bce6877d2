"""ADTool 2 attribute domains for the XML export of attack trees, and a reader of that XML.

ADTool's XML declares each domain after the root node as ``<domain id="MinCost1"><class>...</class>
<tool>ADTool2</tool></domain>`` (the id is the class's simple name and its number) and gives each node its
values as ``<parameter domainId="MinCost1" category="basic|derived">5</parameter>``: ``basic`` on a leaf
(the value ADTool reads back), ``derived`` on an inner node (the value computed by the domain, which
ADTool recomputes itself). The domains used, with their ADTool semantics:

* ``<adtree>`` (IIIf's and-attacks written ``conjunctive``): ``MinCost`` (or = min, and = sum),
  ``ProbSucc`` (or = x + y − xy, and = xy) and ``MinTimeSeq`` (or = min, and = sum: sequential time, as
  IIIf's and-attacks are sequential);
* ``<sandtree>`` (and-attacks written ``sequential``): ``MinTime`` (or = min, sequential and = sum), the one
  predefined SAND domain of ADTool; cost and probability are not written there.

``ProbSucc`` is ADTool's probability domain: it combines alternatives as if the attacker tried them all
independently (x + y − xy), whereas :mod:`checker.attack_trees.attributes` takes the best single
alternative (max). The basic values are the same; the derived values written here are ADTool's, so the
file agrees with what ADTool shows.

Numbers are written as decimals (what ADTool parses); a fraction without a finite decimal expansion is
written as its nearest float with the exact value in an ``exact="p/q"`` attribute, so
:func:`read_adtool` gets back exactly what was written.
"""

from __future__ import annotations

import operator
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from xml.sax.saxutils import escape, quoteattr

from checker.attack_trees.attributes import NEUTRAL, AttributeName, Number, StepTable
from checker.attack_trees.tree import AttackTree, BaseAttack

ADTREE_PACKAGE = "lu.uni.adtool.domains.adtpredefined"
SANDTREE_PACKAGE = "lu.uni.adtool.domains.sandpredefined"


def _at_least_one_of(a: Number, b: Number) -> Number:
    return a + b - a * b


def _min(a: Number, b: Number) -> Number:
    return a if a <= b else b


@dataclass(frozen=True)
class AdtoolDomain:
    """An ADTool domain: its Java class, the flcheck attribute it carries, and how ADTool combines
    the children of a disjunctive (``choose``) and of a conjunctive or sequential (``combine``) node."""

    class_name: str
    attribute: AttributeName
    choose: Callable[[Number, Number], Number]
    combine: Callable[[Number, Number], Number]

    @property
    def short_name(self) -> str:
        return self.class_name.rsplit(".", 1)[1]


MIN_COST = AdtoolDomain(f"{ADTREE_PACKAGE}.MinCost", "cost", _min, operator.add)
PROB_SUCC = AdtoolDomain(f"{ADTREE_PACKAGE}.ProbSucc", "probability", _at_least_one_of, operator.mul)
MIN_TIME_SEQ = AdtoolDomain(f"{ADTREE_PACKAGE}.MinTimeSeq", "time", _min, operator.add)
SAND_MIN_TIME = AdtoolDomain(f"{SANDTREE_PACKAGE}.MinTime", "time", _min, operator.add)
ADTREE_DOMAINS: tuple[AdtoolDomain, ...] = (MIN_COST, PROB_SUCC, MIN_TIME_SEQ)
SANDTREE_DOMAINS: tuple[AdtoolDomain, ...] = (SAND_MIN_TIME,)


def domain_ids(domains: Sequence[AdtoolDomain]) -> list[str]:
    """ADTool's ids: the class's simple name and the domain's number (``MinCost1``)."""
    return [f"{d.short_name}{i}" for i, d in enumerate(domains, 1)]


def node_values(tree: AttackTree, table: StepTable, domains: Sequence[AdtoolDomain],
                children: Callable[[AttackTree], Sequence[AttackTree]]) -> dict[int, tuple[Number, ...]]:
    """The value of every node (by identity) in each domain, over the children as displayed
    (``children``): a base attack's step attributes, an empty node's neutral values, an inner node's
    combination of its children."""
    values: dict[int, tuple[Number, ...]] = {}
    stack: list[tuple[AttackTree, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in values:
            continue
        kids = children(node)
        if not expanded and kids:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in values)
            continue
        if isinstance(node, BaseAttack):
            vector = table.step(node)
            values[id(node)] = tuple(getattr(vector, d.attribute) for d in domains)
        elif not kids:
            values[id(node)] = tuple(getattr(NEUTRAL, d.attribute) for d in domains)
        else:
            combined: list[Number] = []
            for i, domain in enumerate(domains):
                join = domain.choose if node.kind == "or" else domain.combine
                value = values[id(kids[0])][i]
                for kid in kids[1:]:
                    value = join(value, values[id(kid)][i])
                combined.append(value)
            values[id(node)] = tuple(combined)
    return values


def number_text(value: Number) -> tuple[str, str | None]:
    """``(decimal text, exact p/q or None)``: the exact decimal of a fraction whose denominator has no
    prime factor but 2 and 5, else the nearest float and the exact fraction; a float as its shortest
    repr."""
    if isinstance(value, float):
        return repr(value), None
    digits, denominator = 0, value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return repr(float(value)), f"{value.numerator}/{value.denominator}"
    while (value * 10 ** digits).denominator != 1:
        digits += 1
    scaled = abs(value.numerator * 10 ** digits // value.denominator)
    sign = "-" if value < 0 else ""
    if digits == 0:
        return f"{sign}{scaled}", None
    text = str(scaled).rjust(digits + 1, "0")
    return f"{sign}{text[:-digits]}.{text[-digits:]}", None


def parameter_lines(values: Sequence[Number], ids: Sequence[str], category: str, pad: str) -> list[str]:
    """One ``<parameter>`` element per domain."""
    lines = []
    for value, domain_id in zip(values, ids, strict=True):
        text, exact = number_text(value)
        extra = "" if exact is None else f" exact={quoteattr(exact)}"
        lines.append(f"{pad}<parameter domainId={quoteattr(domain_id)} category={quoteattr(category)}"
                     f"{extra}>{escape(text)}</parameter>")
    return lines


def domain_lines(domains: Sequence[AdtoolDomain], pad: str) -> list[str]:
    """The ``<domain>`` declarations that follow the root node."""
    lines = []
    for domain, domain_id in zip(domains, domain_ids(domains), strict=True):
        lines += [f"{pad}<domain id={quoteattr(domain_id)}>", f"{pad}  <class>{domain.class_name}</class>",
                  f"{pad}  <tool>ADTool2</tool>", f"{pad}</domain>"]
    return lines


# =============================================================================== reader
@dataclass
class AdtoolNode:
    """A node of an ADTool XML tree: its refinement, label, values by domain id (``basic`` and
    ``derived``) and children."""

    refinement: str
    label: str
    basic: dict[str, Number] = field(default_factory=dict)
    derived: dict[str, Number] = field(default_factory=dict)
    children: list[AdtoolNode] = field(default_factory=list)

    def walk(self) -> list[AdtoolNode]:
        """This node and its descendants in document order."""
        out: list[AdtoolNode] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


@dataclass(frozen=True)
class AdtoolDocument:
    """An ADTool XML document: ``kind`` (``adtree`` or ``sandtree``), the root node and the domain
    classes by domain id."""

    kind: str
    root: AdtoolNode
    domains: dict[str, str]


def _number(element: ElementTree.Element) -> Number:
    text = (element.text or "").strip()
    exact = element.get("exact")
    if text in ("Infinity", "∞"):
        return float("inf")
    try:
        value = Fraction(text)
        if exact is None:
            return value
        exact_value = Fraction(exact)
    except ValueError:
        raise ValueError(f"parameter {element.get('domainId')!r}: {text!r} (exact {exact!r}) is not a "
                         "number") from None
    if float(exact_value) != float(value):
        raise ValueError(f"parameter {element.get('domainId')!r}: exact value {exact} does not match {text}")
    return exact_value


def _read_node(element: ElementTree.Element) -> AdtoolNode:
    label = element.find("label")
    text = (label.text or "") if label is not None else ""
    node = AdtoolNode(element.get("refinement", "disjunctive"), text)
    for parameter in element.findall("parameter"):
        domain_id = parameter.get("domainId")
        if domain_id is None:
            raise ValueError(f"node {node.label!r}: a parameter has no domainId")
        target = node.derived if parameter.get("category") == "derived" else node.basic
        target[domain_id] = _number(parameter)
    node.children = [_read_node(child) for child in element.findall("node")]
    return node


def read_adtool(text: str) -> AdtoolDocument:
    """Read ADTool 2 XML (``<adtree>`` or ``<sandtree>``); ``ValueError`` on anything else, on a
    parameter of an undeclared domain or on a value that is not a number."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ValueError(f"not XML: {exc}") from None
    if root.tag not in ("adtree", "sandtree"):
        raise ValueError(f"not an ADTool tree (root element <{root.tag}>, expected <adtree> or <sandtree>)")
    nodes = root.findall("node")
    if len(nodes) != 1:
        raise ValueError(f"an ADTool tree has one root node, this one has {len(nodes)}")
    domains: dict[str, str] = {}
    for domain in root.findall("domain"):
        class_name = domain.findtext("class")
        domain_id = domain.get("id")
        if domain_id is None or class_name is None:
            raise ValueError("a <domain> needs an id and a <class>")
        domains[domain_id] = class_name.strip()
    tree = _read_node(nodes[0])
    for node in tree.walk():
        unknown = sorted((set(node.basic) | set(node.derived)) - set(domains))
        if unknown:
            raise ValueError(f"node {node.label!r}: parameters of undeclared domain(s) {', '.join(unknown)}")
    return AdtoolDocument(root.tag, tree, domains)
