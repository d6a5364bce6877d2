"""``flcheck export isabelle SCENARIO... -o DIR``: write Isabelle/HOL theories of scenarios.

``SCENARIO`` is a scenario file (``.fl``), the name of a bundled scenario (``flcheck_spec``), or
``example:NAME[:key=value,...]`` for an flmodel example system (``example:seed``, ``example:moniteo``,
``example:moniteo_rr``: the same systems as in ``flcheck privacy``, see ``checker.app.load.EXAMPLES``);
``--bundled`` adds all of those (the set committed under ``theories/``:
``flcheck export isabelle --bundled --clean -o theories/`` regenerates it; ``--clean`` removes stale
theories, but only once the whole export has been generated). The command writes
``FL_Infrastructure.thy``, one ``Scenario_<name>.thy`` per scenario and ``ROOT`` into ``DIR``
(as one set with the manifest ``SHA256SUMS``: an interrupted export leaves the old files or the new;
the ROOT lists every theory in ``DIR``; two scenarios whose theories would share a name are refused),
then syntax-checks the whole directory with the Isabelle-subset grammar. Exit 0 when the export passes
the syntax check, 1 when it does not (the issues are printed), 2 on bad input. ``--json`` prints
``{"output", "syntax_ok", "issues", "written": [{"path", "lemmas", "with_proof", "oops"}]}`` instead of
the "wrote" lines (the issues still go to stderr too).

The theories are generated and syntax-checked here, NOT proof-checked by Isabelle; check them with an
Isabelle installation: ``isabelle build -D DIR``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checker.cli.options import add_limit_options, limits_of, output_directory
from checker.errors import InputError
from checker.verdict import EXIT_HOLDS


def run_isabelle(args: argparse.Namespace) -> int:
    # lazy: the exporter imports the model layer and the check pipeline
    from checker.app.isabelle.base import BASE_THEORY_NAME
    from checker.app.isabelle.export_files import (  # lazy: as the import above
        MANIFEST_NAME,
        distinct_theories,
        export_texts,
        proof_summary,
        write_export,
    )
    from checker.app.isabelle.sources import export_source, golden_specs, load_export  # lazy: as above
    from checker.app.isabelle.syntax import check_export_dir  # lazy: as the import above
    from checker.cli.json_output import emit_json  # lazy: as the import above
    from checker.io.files import check_output_path  # lazy: as the import above

    limits = limits_of(args)
    specs = list(args.scenario)
    if args.bundled:
        specs += [s for s in golden_specs() if s not in specs]
    if not specs:
        raise InputError("give a SCENARIO or --bundled")
    for name in (f"{BASE_THEORY_NAME}.thy", "ROOT", MANIFEST_NAME):  # before the scenarios are checked
        check_output_path(Path(args.output) / name)
    specs = [specs[i] for i in distinct_theories([export_source(spec) for spec in specs])]
    exports = [load_export(spec, limits=limits) for spec in specs]
    files = export_texts(exports)
    # --clean: the stale theories go with the commit, after every theory was generated and written
    written = write_export(files, args.output, inputs=[e.path for e in exports if e.path is not None],
                           clean=args.clean)
    issues = check_export_dir(args.output)
    if args.json:
        emit_json(args.flcheck_command, {
            "output": str(args.output), "syntax_ok": not issues, "issues": [str(i) for i in issues],
            "written": [_written_json(path, files) for path in written]})
    for path in [] if args.json else written:
        if path.suffix == ".thy":
            stated, left_open = proof_summary(files[path.name])
            print(f"wrote {path}: {stated} lemmas, {stated - left_open} with proof scripts, "
                  f"{left_open} stated with oops" + _unstated_text(files[path.name]))
        else:
            print(f"wrote {path}")
    if issues:
        for issue in issues:
            print(f"syntax check: {issue}", file=sys.stderr)
        print(f"flcheck: the export in {args.output} FAILS the syntax check ({len(issues)} issues)",
              file=sys.stderr)
        return 1
    if not args.json:
        print(f"syntax check passed ({len(written)} files); not proof-checked: run `isabelle build -D "
              f"{args.output}` with an Isabelle installation")
    return EXIT_HOLDS


def _unstated_text(text: str) -> str:
    """``; 8 of 11 properties not stated in Isabelle (only a comment): a, b, …`` for a scenario theory,
    ``""`` for one without properties or with every property stated."""
    from checker.app.isabelle.export_files import unstated_properties  # lazy: with run_isabelle

    total, unstated = unstated_properties(text)
    if not unstated:
        return "" if not total else f"; all {total} properties stated"
    return (f"; {len(unstated)} of {total} properties not stated in Isabelle (a comment with flcheck's "
            f"verdict only): {', '.join(unstated)}")


def _written_json(path: Path, files: Mapping[str, str]) -> dict[str, Any]:
    """One written file for ``--json``: its path and, for a theory, its lemmas (with proof scripts,
    stated with ``oops``), its properties and those not stated as lemmas (``not_stated``)."""
    from checker.app.isabelle.export_files import proof_summary, unstated_properties  # lazy: see run

    if path.suffix != ".thy":
        return {"path": str(path)}
    stated, left_open = proof_summary(files[path.name])
    total, unstated = unstated_properties(files[path.name])
    return {"path": str(path), "lemmas": stated, "with_proof": stated - left_open, "oops": left_open,
            "properties": total, "not_stated": unstated}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``flcheck export isabelle``."""
    p = sub.add_parser("export", description="Export scenarios to other tools.")
    fmt = p.add_subparsers(dest="format", metavar="FORMAT")
    isa = fmt.add_parser(
        "isabelle",
        help="Isabelle/HOL theories (syntax-checked here, not proof-checked)",
        description=(
            "Write FL_Infrastructure.thy, one theory per scenario and ROOT into DIR, then syntax-check "
            "them. The theories are NOT proof-checked by Isabelle here; run `isabelle build -D DIR`."
        ),
    )
    isa.add_argument("scenario", nargs="*", metavar="SCENARIO",
                     help="scenario file (.fl), bundled scenario name, or example:NAME")
    isa.add_argument("--bundled", action="store_true",
                     help="also export every bundled scenario and flmodel example (the theories/ set)")
    isa.add_argument("-o", "--output", required=True, metavar="DIR", type=output_directory,
                     help="output directory (created when missing)")
    isa.add_argument("--clean", action="store_true",
                     help="remove .thy files in DIR that this export does not write (after it succeeded)")
    add_limit_options(isa, scope="of the whole export (every scenario's exploration and check)",
                      max_states=None)
    isa.add_argument("--json", action="store_true",
                     help="print what was written and the syntax check's issues as JSON")
    isa.set_defaults(func=run_isabelle)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
