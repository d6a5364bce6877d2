"""Model checking: the model/checker seam, Kripke structures, exploration, atoms, fixpoints, CTL syntax,
parser and checker, evidence (witnesses, counterexamples) and vacuity."""
