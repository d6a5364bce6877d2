"""IIIf attack trees ([IIIf], theory ``AT``). Import from the module that holds a name (no re-exports):

* :mod:`~checker.attack_trees.tree` — the tree type, hash-consing, refinement ``⊑``;
* :mod:`~checker.attack_trees.validity` — validity ``⊢`` and refinement-validity ``⊢V``;
* :mod:`~checker.attack_trees.generation` — generation from ``EF s`` (completeness) or the blocking
  invariant ``AG ¬s``;
* :mod:`~checker.attack_trees.traces` — independence of actions, Mazurkiewicz trace normal forms;
* :mod:`~checker.attack_trees.labels` — what a base attack does in the model's terms;
* :mod:`~checker.attack_trees.graph_search` — ``EF`` and distances by backward search;
* :mod:`~checker.attack_trees.attributes` — cost, probability and time of attacks, Pareto front;
* :mod:`~checker.attack_trees.defences` — removing transitions, and whether that cuts every attack
  within a cost budget;
* :mod:`~checker.attack_trees.export` — text, JSON, Graphviz DOT and ADTool;
* :mod:`~checker.attack_trees.adtool` — ADTool's attribute domains in the XML export, and its reader.
"""
