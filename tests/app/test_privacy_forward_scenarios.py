"""The privacy properties of the bundled scenarios decided by the forward pass equal those of the
enumerated observation distributions (the pipeline of :func:`checker.app.privacy_fl.privacy_report`):
verdict, ε*, the worst outcome and its probabilities, the number of outcomes."""

from __future__ import annotations

from typing import Any

import flcheck_spec
import pytest

from checker.app import check_pairs as check_module
from checker.app import privacy_rounds
from checker.app.check import check_file

QUICK = ["moniteo.fl", "moniteo_deadline.fl", "moniteo_rounds.fl"]
HEAVY = ["moniteo_link_loss.fl", "seed_model.fl", "moniteo_swarm8.fl", "moniteo_gaussian.fl",
         "walker12_relay.fl"]


def _privacy(path: Any) -> list[tuple[object, ...]]:
    report = check_file(path)
    return [(r.name, str(r.verdict), r.value_text, r.evidence, r.details.get("outcomes"))
            for r in report.results if r.kind == "privacy"]


@pytest.mark.parametrize("name", [*QUICK, *(pytest.param(n, marks=pytest.mark.slow) for n in HEAVY)])
def test_forward_pass_equals_enumeration(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = flcheck_spec.resource("scenarios", name)
    monkeypatch.setattr(privacy_rounds, "ENUMERATED_OUTCOMES", 0)  # the forward pass wherever it applies
    forward = _privacy(path)
    monkeypatch.setattr(check_module, "_privacy_forward", lambda _ctx, _p: None)
    enumerated = _privacy(path)
    assert forward == enumerated
