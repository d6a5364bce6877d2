"""Privacy engines over pairs of Markov models: NI-FL-DP (ε, δ(ε)) and attacker advantage."""
