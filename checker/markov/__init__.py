"""Markov chains and MDPs: first-passage probabilities, linear solves (exact and float), min/max."""
