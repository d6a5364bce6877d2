"""checker: generic engines (Kripke structures, CTL, attack trees, Markov, privacy, cross-validation).

The engines never import ``flmodel``; a model plugs in through ``checker.mc.ts.TransitionSystem``. Only the
application layer (``checker.cli``, ``checker.app``) joins the two.
"""

__version__ = "0.1.0"
