"""Reproduction tables of [FL-MI] (MINE vs H-MINE) and [SRATTA]: the ``mine`` and ``sratta`` sections of
``bench/bench_attacks.py`` (the paper's claims next to our figures, medians over seeds with 95 %
intervals; that script's docstring describes the settings). Run:

``/work/venv/bin/python bench/bench_attack_repro.py [mine|sratta] [--seeds 0,1,2,3,4] [--batches 1,2,4,8]
[--max-steps 12000]``
"""

from __future__ import annotations

import sys

from bench_attacks import main  # a sibling script: bench/ is on the path when run as a script

if __name__ == "__main__":
    main(sys.argv[1:] or ["mine", "sratta"])
