"""Comparison with Google's dp_accounting (the ``crossval`` extra, part of the documented test install:
``pip install '.[test,crossval]'``), so a missing package is an error, not a silent skip."""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution

from checker.crossval.gaussian import gaussian_delta, gaussian_grid, gaussian_loss_tails, laplace_delta


def test_gaussian_composition_agrees_with_dp_accounting() -> None:
    mu1, d, h = 0.3, 20, 1e-3
    eps = np.linspace(0.0, 5.0, 26)
    ours = gaussian_loss_tails(mu1, gaussian_grid(mu1, h)).to_grid(h, True).self_compose(d).delta(eps)
    one = privacy_loss_distribution.from_gaussian_mechanism(1.0 / mu1, value_discretization_interval=h)
    theirs = one.self_compose(d)
    ref = np.asarray(theirs.get_delta_for_epsilon(eps.tolist()), dtype=float)
    exact = gaussian_delta(mu1 * math.sqrt(d), eps)
    np.testing.assert_allclose(ours, ref, atol=1e-5)
    assert np.max(np.abs(ours - exact)) <= np.max(np.abs(ref - exact)) + 1e-9


def test_laplace_agrees_with_dp_accounting() -> None:
    eps = np.linspace(0.0, 1.0, 11)
    theirs = privacy_loss_distribution.from_laplace_mechanism(1.0, value_discretization_interval=1e-4)
    np.testing.assert_allclose(laplace_delta(1.0, eps), theirs.get_delta_for_epsilon(eps.tolist()), atol=1e-3)
