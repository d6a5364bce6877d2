"""``flcheck list``: the bundled scenarios, one line each (name and the title of its ``scenario "..."``
line), which every command accepts by name in place of a path; ``--json`` prints ``{"scenarios":
[{"name", "title", "path"}]}``. Exit 0.
"""

from __future__ import annotations

import argparse

import flcheck_spec

from checker.tables import table_text
from checker.verdict import EXIT_HOLDS


def run(args: argparse.Namespace) -> int:
    from checker.app.load import EXAMPLES, bundled_scenario_titles  # lazy: the loader imports the model layer
    from checker.cli.json_output import emit_json

    titles = bundled_scenario_titles()
    paths = flcheck_spec.bundled_scenarios()
    if args.json:
        emit_json(args.flcheck_command, {
            "scenarios": [{"name": name, "title": titles[name], "path": str(paths[name])}
                          for name in sorted(titles)],
            "examples": [{"name": f"example:{name}", "title": family.description}
                         for name, family in sorted(EXAMPLES.items())]})
        return EXIT_HOLDS
    print(table_text([(name, titles[name]) for name in sorted(titles)]))
    return EXIT_HOLDS


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``list``."""
    p = sub.add_parser("list", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run)
