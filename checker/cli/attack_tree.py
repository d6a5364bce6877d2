"""``flcheck attack-tree MODEL --goal PREDICATE``: generate a valid IIIf attack tree for ``EF goal`` from the
initial states, or print the invariant ``AG ¬goal`` that proves none exists.

When the scenario declares ``attack_step`` attributes, the tree is evaluated under them
(:mod:`checker.app.step_attributes`: min cost, max probability of success, min time, the Pareto front
over the tree's alternatives, the cheapest, most probable and fastest attack over every path, the
undeclared steps); ``--json`` adds them under ``attributes`` and ``--format adtool``/``adtool-sand``
writes ADTool's domains with every node's values. ``--defence NAME [--budget C]`` says whether the
scenario's ``defence NAME`` blocks every attack (of cost ``<= C``, by default the statement's budget):
removed steps are cut from the structure, removed links make the scenario be explored again without them
(:func:`checker.app.step_attributes.judge_defence`).

Exit codes: 0 an attack exists (a valid tree was generated and re-checked), 1 none exists (or unknown on an
incomplete exploration), 2 bad input (model, predicate or option). With ``--defence`` the exit code is the
defence's verdict: 0 it blocks every attack (of cost ``<=`` the budget), 1 an attack remains (or the
exploration is incomplete, so nothing is proved).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from checker.attack_trees.export import (
    FORMATS,
    render,
    result_to_json,
    tree_from_json,
    tree_to_adtool,
    tree_to_text,
)
from checker.attack_trees.generation import AttackFound, NoAttack, generate_attack_tree
from checker.attack_trees.validity import check_validity
from checker.cli.defines import add_define_option, defines_of
from checker.cli.explore import MODEL_HELP, clear_progress, model_files
from checker.cli.json_output import json_text
from checker.cli.options import Exact, Integer, add_limit_options, limits_of, output_file
from checker.errors import InputError, Position
from checker.io.files import check_output_path, write_atomic
from checker.mc.explore import stderr_progress
from checker.verdict import EXIT_HOLDS, EXIT_VIOLATED

if TYPE_CHECKING:
    from checker.app.step_attributes import AttributeSummary
    from checker.mc.kripke import Kripke
    from flmodel.scenario_ast import Scenario


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "attack-tree",
        description=(
            "Generate a valid IIIf attack tree whose attack is (initial states, goal): an or-tree over "
            "genuinely different ways to reach the goal (action sequences up to commuting independent "
            "steps), each a sequence of base attacks labelled with the model's actions and the observables "
            "they change. When the goal is unreachable, print the invariant AG ¬goal that proves no tree "
            "exists. When the scenario declares attack_step attributes, also print the tree's min cost, "
            "max probability of success, min time, the Pareto front over its alternatives and the "
            "cheapest, most probable and fastest attack over every path; --defence NAME says whether a "
            "declared defence (removed steps, or removed links: the model is explored again without "
            "them) blocks every attack."),
        epilog="Exit codes: 0 an attack exists, 1 none exists (or unknown), 2 bad input; with --defence: 0 "
               "the defence blocks every attack (within the budget), 1 an attack remains (or unknown).",
    )
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--goal", metavar="PREDICATE",
                   help="the attack goal: a state formula of the property language, e.g. '\"sat2\" in ready'")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="output format (adtool = ADTool 2 <adtree>, adtool-sand = <sandtree> with "
                        "sequential and-nodes; both carry ADTool's domains and every node's values when "
                        "the scenario declares attack_step attributes)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--check", metavar="TREE.json",
                   help="instead of generating, re-check a tree exported with --format json against the "
                        "model (with --goal: also that its attack is (initial states, goal))")
    p.add_argument("-o", "--output", metavar="FILE", type=output_file,
                   help="write the tree to FILE (atomically)")
    p.add_argument("--max-depth", type=Integer(0, 10**6), default=None, metavar="N",
                   help="longest attack considered for alternatives (default: shortest + 2)")
    p.add_argument("--max-attacks", type=Integer(1, 10**6), default=5, metavar="N",
                   help="alternatives per initial state (default 5)")
    p.add_argument("--all-attacks", action="store_true",
                   help="also list non-minimal attacks (by default an attack whose action set strictly "
                        "contains another's, i.e. a way padded with irrelevant steps, is left out)")
    add_limit_options(p)
    p.add_argument("--distinguish", choices=("auto", "actions", "steps", "paths"), default="auto",
                   help="what makes two attacks different: action words up to commuting independent steps "
                        "(actions), the same ignoring action details such as noisy values (steps), or "
                        "paths; auto = actions when the model has more than one action, else paths")
    p.add_argument("--observables", metavar="NAMES", default=None,
                   help="comma-separated observables shown in step labels (default: all but step "
                        "counters)")
    p.add_argument("--defence", metavar="NAME",
                   help="a defence declared in the scenario ('defence NAME: remove RULE by ACTOR at "
                        "LOCATION' or 'defence NAME: remove link A -- B'): say whether it blocks every "
                        "attack on the model; the exit code is then the defence's: 0 it blocks every "
                        "attack (of cost <= the budget), 1 an attack remains or nothing is proved")
    p.add_argument("--budget", type=Exact(0, what="a cost"), metavar="C",
                   help="with --defence: only attacks of cost <= C (the attack_step costs) count "
                        "(default: the budget the defence statement declares, else any cost)")
    add_define_option(p)
    p.set_defaults(func=run)


def _load(paths: list[str], args: argparse.Namespace) -> tuple[Kripke, Scenario | None]:
    """The model through the application layer's loader (scenario files and explicit formats), explored
    under the exploration limits (progress on stderr when it is a terminal), and the scenario it was
    built from (``None`` for explicit and JSON models: they declare no attributes or defences)."""
    from checker.app.load import load_model  # lazy: the loader imports the model layer
    from checker.app.step_attributes import scenario_of

    progress = None if args.progress else stderr_progress()
    with args.watchdog.exploring():  # the exploration stops itself at the limits: a partial structure
        kripke = load_model(paths[0] if len(paths) == 1 else paths, limits=limits_of(args),
                            progress=progress or args.watchdog.explored, probabilities=False,
                            defines=defines_of(args))
    args.keep.append(kripke)
    if progress:
        clear_progress()
    return kripke, scenario_of(paths, defines_of(args))


def run(args: argparse.Namespace) -> int:
    # lazy: the step attributes and defences import the model layer
    from checker.app.step_attributes import attack_goal, defence_decl, judge_defence, step_table, summarise

    fmt = "json" if args.json else args.format
    if args.output:  # refused before exploring: the tree must never replace the model
        check_output_path(args.output, model_files(args.model))
    if args.check:
        return _check_file(args)
    if args.goal is None:
        raise InputError("--goal is required (unless --check is given)", Position("attack-tree"),
                         "--goal PREDICATE")
    if args.budget is not None and args.defence is None:
        raise InputError("--budget needs --defence", Position("--budget"), "--defence NAME --budget C")
    kripke, scenario = _load(args.model, args)
    table = step_table(scenario)
    if args.defence is not None:
        defence_decl(scenario, args.defence)  # an unknown name is refused before any search
    goal, mentioned = attack_goal(kripke, args.goal)
    shown = None
    if args.observables is not None:
        shown = [n.strip() for n in args.observables.split(",") if n.strip()]
        known = set(kripke.observables) | set(kripke.labels)
        unknown = [n for n in shown if n not in known]
        if unknown:
            raise InputError(f"unknown observable {unknown[0]!r}", Position("--observables"),
                             "one of " + (", ".join(sorted(known)) or "none"))
    args.watchdog.phase(f"generating the attack tree of {args.goal}")
    result = generate_attack_tree(kripke, goal, max_depth=args.max_depth, max_attacks=args.max_attacks,
                                  minimal_only=not args.all_attacks, distinguish=args.distinguish,
                                  label_observables=shown, goal_observables=mentioned, limits=limits_of(args))
    summary = (summarise(result.tree, table, kripke, goal)
               if table is not None and isinstance(result, AttackFound) else None)
    verdict = None
    if args.defence is not None:
        args.watchdog.phase(f"judging the defence {args.defence}")
        progress = stderr_progress()
        verdict = judge_defence(scenario, args.defence, kripke, lambda k: attack_goal(k, args.goal)[0], table,
                                args.budget, limits=limits_of(args), progress=progress)
        if progress:
            clear_progress()
    defence_text = None if verdict is None else verdict.text()
    if fmt == "json":
        payload = result_to_json(result, kripke, goal_text=args.goal, model=" ".join(args.model))
        if summary is not None:
            payload["attributes"] = summary.to_json()
        if verdict is not None:
            payload["defence"] = verdict.to_json()
        _emit(json_text(args.flcheck_command, payload) + "\n", args)
    elif isinstance(result, AttackFound):
        if fmt == "text":
            _emit(_text_report(result, kripke, args.goal, summary, defence_text), args)
        elif fmt in ("adtool", "adtool-sand"):
            _emit(tree_to_adtool(result.tree, kripke, goal_text=args.goal, sequential=fmt == "adtool-sand",
                                 attributes=table), args)
        else:
            _emit(render(result.tree, kripke, fmt, goal_text=args.goal), args)
    else:
        print(_no_attack_text(result, kripke, args.goal))
        if defence_text is not None:
            print(defence_text)
    if isinstance(result, AttackFound) and args.output:
        valid = check_validity(result.tree, kripke).valid
        print(f"attack tree ({'valid' if valid else 'INVALID'}) written to {args.output}")
    if verdict is not None:  # --defence: the exit code says whether it blocks every attack
        return EXIT_HOLDS if verdict.cut.blocks and verdict.cut.conclusive else EXIT_VIOLATED
    if isinstance(result, AttackFound):
        return EXIT_HOLDS if check_validity(result.tree, kripke).valid else EXIT_VIOLATED
    return EXIT_VIOLATED


_WAYS = {"actions": "action sequences up to commuting independent steps",
         "steps": "action sequences without details, up to commuting independent steps",
         "paths": "distinct paths"}


def _check_file(args: argparse.Namespace) -> int:
    """``--check``: ⊢ A for a tree read back from JSON, and optionally its pair against the goal."""
    from checker.app.step_attributes import attack_goal  # lazy: it imports the model layer

    path = Path(args.check)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", Position(str(path), exc.lineno, exc.colno),
                         "an attack tree written by flcheck attack-tree --json") from None
    if isinstance(doc, dict) and "tree" in doc and "format" not in doc:
        doc = doc["tree"]
    try:
        tree = tree_from_json(doc)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"malformed attack tree: {exc}", Position(str(path)),
                         "an attack tree written by flcheck attack-tree --json") from None
    kripke, _ = _load(args.model, args)
    bad = [s for s in tree.pre | tree.post if not 0 <= s < kripke.num_states]
    v = check_validity(tree, kripke)
    ok = v.valid and not bad
    lines = [f"attack tree {path}: {'valid' if ok else 'INVALID'} (⊢ A re-checked on {kripke.num_states} "
             f"states)"]
    if not v.valid:
        lines.append(f"  {v.reason}")
    if args.goal is not None:
        goal, _ = attack_goal(kripke, args.goal)
        want = (frozenset(kripke.initial.tolist()), frozenset(int(i) for i in goal.nonzero()[0]))
        same = tree.pair == want
        lines.append(f"  attack = (initial states, {args.goal}): {'yes' if same else 'no'}")
        ok = ok and same
    print("\n".join(lines))
    return EXIT_HOLDS if ok else EXIT_VIOLATED


def _emit(text: str, args: argparse.Namespace) -> None:
    """``text`` to ``-o FILE`` (atomically, never over the model's files), else to stdout."""
    if args.output:
        write_atomic(args.output, text, inputs=model_files(args.model))
    else:
        sys.stdout.write(text)


def _text_report(result: AttackFound, kripke: Kripke, goal: str, summary: AttributeSummary | None = None,
                 defence: str | None = None) -> str:
    v = check_validity(result.tree, kripke)
    n_init = len(result.initial)
    ways = sum(len(p) for p in result.paths.values())
    lines = [
        f"attack exists: EF ({goal}) holds from all {n_init} initial state(s)",
        f"attack tree: {'valid' if v.valid else 'INVALID: ' + v.reason} (re-checked ⊢ A); "
        f"attack = ({n_init} initial, {len(result.goal)} goal states); {ways} way(s) "
        f"[{_WAYS[result.distinguish]}]"
        + ("; search bounded, more ways may exist" if result.truncated else ""),
    ]
    lines += [f"warning: {w}" for w in result.warnings]
    lines.append("")
    lines.append(tree_to_text(result.tree, kripke, goal_text=goal))
    if summary is not None:
        lines += ["", *summary.lines()]
    if defence is not None:
        lines += ["", defence]
    return "\n".join(lines) + "\n"


def _no_attack_text(result: NoAttack, kripke: Kripke, goal: str) -> str:
    failing = ", ".join(kripke.state_name(s) for s in sorted(result.failing)[:10])
    if len(result.failing) > 10:
        failing += f", ... ({len(result.failing)} states)"
    if not result.conclusive:
        head = (f"unknown: no attack found, but the exploration is incomplete "
                f"({result.limit_reason or 'limit hit'}); nothing is proved")
    else:
        head = f"no attack: EF ({goal}) fails from initial state(s) {failing}"
    lines = [
        head,
        f"blocking invariant: AG ¬({goal}) holds on the {result.invariant_size} state(s) reachable from "
        f"them (closed under successors, no goal state: certificate "
        f"{'checked' if result.certificate_ok else 'FAILED'}); "
        f"{int(result.cannot_reach.sum())} state(s) of the model cannot reach the goal",
    ]
    lines += [f"  - {f}" for f in result.facts]
    if result.partial is not None:
        lines.append(f"(the other {len(result.partial.initial)} initial state(s) can reach the goal; "
                     "use --json to see their tree)")
    return "\n".join(lines)
