"""Time of ``flcheck export isabelle`` per scenario and of the syntax check of the result.

Prints, for every scenario of the committed ``theories/`` set (bundled scenario files and flmodel
examples): the median wall time of generating its theory (exploration and model checking included), the
size of the theory, and the median time of syntax-checking the base theory plus that theory. Figures on a
shared, loaded machine are indicative only.

Run: ``python bench/bench_isabelle_export.py [REPEATS]``
"""

from __future__ import annotations

import statistics
import sys
import time

from checker.app.isabelle.export_files import export_texts, proof_summary
from checker.app.isabelle.sources import golden_specs, load_export
from checker.app.isabelle.syntax import check_export_texts
from checker.app.isabelle.terms import theory_name


def main(repeats: int = 3) -> None:
    print(f"{'scenario':28} {'export s':>9} {'check s':>8} {'lines':>6} {'lemmas':>7} {'oops':>5}")
    for spec in golden_specs():
        t_exp, t_chk = [], []
        files: dict[str, str] = {}
        for _ in range(repeats):
            t0 = time.perf_counter()
            exp = load_export(spec)
            files = export_texts([exp])
            t1 = time.perf_counter()
            issues = check_export_texts(files)
            t2 = time.perf_counter()
            assert not issues, issues
            t_exp.append(t1 - t0)
            t_chk.append(t2 - t1)
        text = files[f"{theory_name(exp.name)}.thy"]
        stated, left_open = proof_summary(text)
        print(f"{spec:28} {statistics.median(t_exp):9.2f} {statistics.median(t_chk):8.2f} "
              f"{text.count(chr(10)):6d} {stated:7d} {left_open:5d}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
