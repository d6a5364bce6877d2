r"""``flcheck export isabelle``: Isabelle/HOL theories of the FL model and of scenarios.

An export directory holds

* ``FL_Infrastructure.thy`` — the FL infrastructure of [IIIf-FL], Section III, on Isabelle/HOL's
  ``Complex_Main`` (the shipped file ``spec/isabelle/FL_Infrastructure.thy``, see :mod:`.base`);
* one theory per scenario (``Scenario_<name>.thy``, :mod:`.theory`): a locale in the style of the IIIf
  applications with the concrete locations, actors, graph, policies, data points, dataset, partitions,
  learner (loss and learning rate), initial state and Kripke structure, then one lemma per property the
  checker decided. Where the checker's evidence yields a proof script (:mod:`.proofs`), the lemma comes
  with it — a chain of single-step lemmas for a reachability witness (``EF``), ending in the base lemma
  ``check_EF_reach``, together with the concrete attack tree of the witness; a counterexample path for a
  violated ``AG`` (``check_AG_counterexample``); an explicit invariant (the reachable state set) for an
  ``AG`` that holds on a complete, unbounded exploration (``check_AG_inv``). Otherwise the statement ends
  in ``oops`` with a comment saying why;
* ``ROOT`` naming the session ``FLcheck`` and its theories (:mod:`.export_files`).

The modules: :mod:`.terms` (Isabelle text of values), :mod:`.vocabulary` (a scenario's constants and
terms), :mod:`.ctl_sets` (CTL formulas as state sets), :mod:`.proofs`, :mod:`.theory`,
:mod:`.export_files`, :mod:`.sources` (scenario files and examples to export), and the syntax check
:mod:`.syntax` (with :mod:`.syntax_parse` and :mod:`.syntax_declarations`).

The export is deterministic: the same scenario gives the same bytes (every set is printed sorted, names
are derived from the scenario, nothing depends on time or hash order). It is syntax-checked by
:mod:`.syntax`; it has NOT been proof-checked by Isabelle here (no Isabelle is available to flcheck): the
proof scripts are generated in good faith and may need repair in Isabelle.

Example::

    >>> from checker.app.isabelle.theory import ScenarioExport, scenario_theory_text
    >>> from flmodel.examples import seed_model
    >>> text = scenario_theory_text(ScenarioExport("seed", seed_model(), ()))
    >>> text.splitlines()[3]
    'theory Scenario_seed'
"""
