"""Markov chains and MDPs of probabilistic Kripke structures. Import from the module that holds a name
(no re-exports):

* :mod:`~checker.markov.models` — ``Dtmc``, ``Mdp``, schedulers, construction from a Kripke structure;
* :mod:`~checker.markov.solve` — exact (``Fraction``) and sparse float linear solves;
* :mod:`~checker.markov.graph` — reachability, ``Prob1``, bottom strongly connected components;
* :mod:`~checker.markov.first_passage` — ``Pr[◇ s]``;
* :mod:`~checker.markov.pathsum` — the literal path sum ``P(M ⊢F s)`` of [IIIf-FL];
* :mod:`~checker.markov.distributions` — transient and eventual distributions, absorption;
* :mod:`~checker.markov.mdp` — ``Pmin``/``Pmax`` and optimal memoryless schedulers.
"""
