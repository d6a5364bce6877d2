"""Numerical engines that cross-validate the formal verdicts (DP curves, audits, attacks)."""
