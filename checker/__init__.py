"""checker: generic engines (Kripke structures, CTL, attack trees, Markov, privacy, cross-validation),
and flcheck's Python API.

The engines never import ``flmodel``; a model plugs in through ``checker.mc.ts.TransitionSystem``. Only the
application layer (``checker.cli``, ``checker.app``, and the API :mod:`checker.api` built on it) joins the
two.

The API (:mod:`checker.api`; its names are loaded on first use, so ``import checker`` stays cheap):

>>> import checker
>>> model = checker.load("seed_model")           # a scenario file, bundled name, .tra/.lab, example:NAME
>>> model.explore().complete
True
>>> model.check("EF true").verdict
'holds'

``checker.check_all("moniteo")`` decides every property of a scenario (``flcheck check``);
``model.privacy()``, ``model.attack_tree(goal)`` and ``model.export(out, format)`` follow the commands
of the same names. Every result has ``to_json()`` and ``_repr_html_()`` (notebooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["AttackTreeResult", "CheckRun", "CtlResult", "DPResult", "Exploration", "ExportResult", "Model",
           "PrivacyResult", "ProbabilityResult", "PropertyOutcome", "__version__", "check", "check_all",
           "export_isabelle", "load"]

#: The names :mod:`checker.api` exports through this package.
API_NAMES = tuple(name for name in __all__ if name != "__version__")

if TYPE_CHECKING:
    from checker.api import (
        AttackTreeResult,
        CheckRun,
        CtlResult,
        DPResult,
        Exploration,
        ExportResult,
        Model,
        PrivacyResult,
        ProbabilityResult,
        PropertyOutcome,
        check,
        check_all,
        export_isabelle,
        load,
    )


def __getattr__(name: str) -> Any:
    """The API's names, imported from :mod:`checker.api` on first use (PEP 562)."""
    if name in API_NAMES:
        # lazy: the API reaches every pipeline; plain `import checker` (e.g. for __version__) stays cheap
        from checker import api

        return getattr(api, name)
    raise AttributeError(f"module 'checker' has no attribute {name!r}")
