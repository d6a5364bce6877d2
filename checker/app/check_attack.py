"""The ``attack`` property of ``check``: a :func:`checker.app.attacks.run_attack` experiment. It measures,
it does not decide: its verdict is ``unknown`` unless a ``max_<metric>`` option states what must hold."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from checker.app.check_context import CheckContext
from checker.app.check_results import PropertyResult
from checker.render import json_value
from checker.verdict import Verdict
from flmodel.scenario_properties import AttackProperty

__all__ = ["check_attack"]


def check_attack(ctx: CheckContext, p: AttackProperty) -> PropertyResult:
    from checker.app.attacks import run_attack  # lazy: the FL training simulations import scipy and sklearn

    opts: dict[str, Any] = {}
    limits: dict[str, float] = {}
    for o in p.options:
        v: Any = o.value
        if isinstance(v, Fraction):
            v = int(v) if v.denominator == 1 else float(v)
        if o.key.startswith("max_"):
            limits[o.key[4:]] = float(v)
        else:
            opts[o.key] = v
    out = run_attack(p.attack, **opts)
    found = _find_metrics(out)
    figures = ", ".join(f"{k} = {v:.4g}" for k, v in list(found.items())[:4])
    if not limits:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                              f"experiment ran ({figures}); no max_<metric> option states what must hold",
                              {"result": json_value(out)})
    bad = []
    for metric, lim in limits.items():
        vals = [v for k, v in found.items() if k.split(".")[-1] == metric]
        if not vals:
            return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                                  f"the attack reports no metric {metric!r} (has: {', '.join(found)})")
        if max(vals) > lim:
            bad.append(f"{metric} = {max(vals):.4g} > {lim}")
    worst = max(v for k, v in found.items() if k.split(".")[-1] in limits)
    verdict = Verdict.VIOLATED if bad else Verdict.HOLDS
    return PropertyResult(p.name, p.kind, verdict, worst, f"{worst:.4g}",
                          "; ".join(bad) if bad else f"all within bounds ({figures})",
                          {"result": json_value(out)})


def _find_metrics(obj: Any, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_find_metrics(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_find_metrics(v, f"{prefix}{i}."))
    elif isinstance(obj, int | float) and not isinstance(obj, bool) and math.isfinite(obj):
        out[prefix.rstrip(".")] = float(obj)
    return out

