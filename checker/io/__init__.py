"""Model files: PRISM/Storm explicit models, JSON Kripke structures, DOT."""
