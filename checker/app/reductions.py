"""The state-space reductions of ``flcheck check``, derived from the scenario and the properties it
checks (the one place that joins the model's reduction hooks and the choice of reductions).

Dead values (issue item 1): a client's gradient is *dead* outside ``ready`` when the rules state the
footprint ``gradients="ready"`` (:attr:`flmodel.rules.Rule.gradients`; the model derives the clients,
:meth:`flmodel.system.FLSystem.dead_gradient_clients`); it may be reset to its initial value unless
something the check reads names it: a property formula, a property's ``observing`` list or the
attacker's observation that mentions ``gradient_c`` (or ``gradient`` without a client: then every
client is kept). Neighbour relations replace data points, which no gradient of an unready client
depends on. The reset is a functional bisimulation (module docstring of :mod:`flmodel.system`), so every
verdict, ε, δ(ε), advantage and probability of the check is unchanged; tests compare reduced and
unreduced checks on the bundled and on generated scenarios.

Example::

    >>> from flmodel.scenario import load_scenario
    >>> from checker.app.load import resolve_scenario_path
    >>> s = load_scenario(resolve_scenario_path("moniteo_swarm8"), defines={"N": 3})
    >>> from flmodel.scenario_build import build_system
    >>> reduced, applied = reduce_system(build_system(s), s)
    >>> applied.names, applied.details["dead_values"]["clients"]
    (['dead_values'], ['sat1', 'sat2', 'sat3'])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem

__all__ = ["REDUCTIONS", "Applied", "Reductions", "gradient_readers", "reduce_system"]

#: The reductions ``flcheck check`` knows, in the order they are applied (``--no-<name>`` switches one
#: off with dashes for underscores; ``--no-reduce`` all).
REDUCTIONS = ("dead_values",)


@dataclass(frozen=True)
class Reductions:
    """Which reductions to apply (all on by default; :meth:`none` for the plain exploration)."""

    dead_values: bool = True

    @classmethod
    def none(cls) -> Reductions:
        """Every reduction off (``--no-reduce``)."""
        return cls(dead_values=False)

    def enabled(self) -> list[str]:
        """The names of the reductions switched on."""
        return [n for n in REDUCTIONS if getattr(self, n)]


@dataclass
class Applied:
    """What was applied: ``names`` (in order) and per reduction the JSON-able ``details`` (applied or
    not, and why; what it covers)."""

    names: list[str] = field(default_factory=list)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self, states: int | None = None) -> dict[str, Any]:
        """``{"applied", "states", "states_unreduced", <name>: details}``: ``states_unreduced`` is
        ``states`` when nothing was applied, else unknown (``None``: the check explores once)."""
        return {"applied": list(self.names), "states": states,
                "states_unreduced": states if not self.names else None,
                **{k: dict(v) for k, v in self.details.items()}}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*")


def _words(texts: Iterable[str]) -> set[str]:
    return {w for t in texts for w in _WORD.findall(t)}


def gradient_readers(scenario: Scenario, clients: Iterable[str]) -> tuple[set[str], bool]:
    """The clients whose gradient the check reads (named as ``gradient_c`` or ``gradient:c`` by a
    property formula, an ``observing`` list or the attacker's observation), and whether some text
    names ``gradient`` without a client of ``clients`` (then all of them are read)."""
    names = set(clients)
    texts: list[str] = []
    for p in scenario.properties:
        if p.formula is not None:
            texts.append(p.formula.text)
        texts.extend(o.name for o in p.observing)
    if scenario.attacker is not None:
        texts.extend(o.name for o in scenario.attacker.observes)
    read: set[str] = set()
    unnamed = False
    for w in _words(texts):
        if not w.startswith("gradient"):
            continue
        rest = w[len("gradient"):]
        client = rest[1:] if rest[:1] in ("_", ":") else None
        if client in names:
            read.add(client)
        else:
            unnamed = True
    return read, unnamed


def reduce_system(system: ScenarioSystem, scenario: Scenario,
                  choice: Reductions | None = None) -> tuple[ScenarioSystem, Applied]:
    """``system`` with the reductions of ``choice`` (default: all) that the scenario admits, and what
    was applied."""
    choice = choice or Reductions()
    applied = Applied()
    if choice.dead_values:
        candidates = system.fl.dead_gradient_clients()
        read, unnamed = gradient_readers(scenario, system.fl.clients)
        if not candidates:
            info: dict[str, Any] = {"applied": False,
                                    "reason": "the rules do not state that gradients are dead outside ready"}
        elif unnamed:
            info = {"applied": False, "reason": "a property or observation reads every gradient"}
        else:
            reset = [c for c in candidates if c not in read]
            info = {"applied": bool(reset), "clients": reset, "kept": sorted(read),
                    "what": "gradient of a client not in ready reset to its initial value"}
            if not reset:
                info["reason"] = "every client's gradient is read by a property or observation"
            else:
                system = ScenarioSystem(system.fl.replace(reset_unready=reset), system.secrets,
                                        system.scenario)
                applied.names.append("dead_values")
        applied.details["dead_values"] = info
    else:
        applied.details["dead_values"] = {"applied": False, "reason": "switched off"}
    return system, applied
