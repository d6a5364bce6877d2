"""Command lines with odd option values (nan, inf, negative, 1e400, huge, not a number) and odd output
destinations (a directory, a FIFO, an input file, an unknown image extension, a missing folder)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from tests.fuzz.scenario_mutations import scenario_path

#: Expectations: REJECT exit 2 with a one-line message; ACCEPT a verdict (exit 0/1); EITHER.
REJECT, ACCEPT, EITHER = "reject", "accept", "either"

VALUES: dict[str, str] = {
    "nan": "nan", "inf": "inf", "-inf": "-inf", "-1": "-1", "-5": "-5", "0": "0", "1e400": "1e400",
    "huge": "9" * 24, "1e17": "100000000000000000", "not a number": "abc", "empty": "",
}

#: (command template, option) -> the expectation for each value kind (missing: EITHER). ``{L}`` is
#: the link-loss scenario copied into the example's folder.
LIMITS = {"nan": REJECT, "-inf": REJECT, "-1": REJECT, "-5": REJECT, "not a number": REJECT,
          "empty": REJECT}
OPTION_CASES: dict[tuple[str, str], dict[str, str]] = {
    ("explore {L} --max-states 300", "--max-seconds"): LIMITS,
    ("explore {L} --max-states 300", "--max-memory"): LIMITS,
    ("explore {L} --max-seconds 10", "--max-states"): {**LIMITS, "huge": ACCEPT, "1e17": ACCEPT},
    ("ctl {L} 'EF round = 1' --max-states 300", "--max-seconds"): LIMITS,
    ("ctl {L} 'EF round = 1' --max-seconds 10", "--max-states"): {**LIMITS, "huge": ACCEPT},
    ("check {L} --max-states 300", "--max-seconds"): LIMITS,
    ("check {L} --max-seconds 10", "--max-states"): {**LIMITS, "huge": ACCEPT},
    ("privacy {L} --max-states 2000", "--eps"): {"nan": REJECT, "-inf": REJECT, "-1": REJECT, "-5": REJECT,
                                                 "not a number": REJECT, "empty": REJECT, "0": ACCEPT,
                                                 "inf": ACCEPT},
    ("audit rr:p=3/4 --seed 1", "--trials"): {"nan": REJECT, "inf": REJECT, "-inf": REJECT, "-1": REJECT,
                                              "-5": REJECT, "0": REJECT, "1e400": REJECT, "1e17": REJECT,
                                              "huge": REJECT, "not a number": REJECT, "empty": REJECT},
    ("audit rr:p=3/4 --trials 200", "--seed"): {"nan": REJECT, "inf": REJECT, "-inf": REJECT, "-1": REJECT,
                                                "-5": REJECT, "0": ACCEPT, "1e400": REJECT, "huge": ACCEPT,
                                                "1e17": ACCEPT, "not a number": REJECT, "empty": REJECT},
    ("dp gaussian --eps 0 1", "--mu"): {"nan": REJECT, "-inf": REJECT, "not a number": REJECT,
                                        "empty": REJECT},
    ("dp gaussian --mu 1 --eps", ""): {"nan": REJECT, "-inf": REJECT, "-1": REJECT, "-5": REJECT,
                                       "not a number": REJECT, "empty": REJECT, "0": ACCEPT},
}

#: Output options: (command template, option) -> expectation per destination kind (missing: REJECT,
#: EITHER for a missing folder, which may be created).
DESTINATIONS = ("a directory", "a FIFO", "an input file", "unknown extension", "missing folder",
                "a directory named like a file", "a write-protected file")
OUTPUT_CASES: dict[tuple[str, str], dict[str, str]] = {
    ("explore {L} --max-states 50", "--write-json"): {"unknown extension": ACCEPT},
    ("explore {L} --max-states 50", "--write-dot"): {"unknown extension": ACCEPT},
    ("explore {L} --max-states 50", "--write-explicit"): {"a directory": ACCEPT, "a FIFO": ACCEPT,
                                                          "unknown extension": ACCEPT,
                                                          "a directory named like a file": ACCEPT},
    ("check {L} --max-states 50", "--report"): {},
    ("dp gaussian --mu 1 --eps 0 1", "--plot"): {},
    ("attack-tree {L} --max-states 50 --goal ready_sat1 --format dot", "-o"): {"unknown extension": ACCEPT},
}


@dataclass(frozen=True)
class OptionCase:
    template: str
    option: str
    value_kind: str
    expect: str

    @property
    def name(self) -> str:
        return f"{self.template.split()[0]} {self.option or '--eps (list)'}={self.value_kind}"

    def argv(self, folder: Path) -> list[str]:
        return [*_split(self.template, folder), *([self.option] if self.option else []),
                VALUES[self.value_kind]]


@dataclass(frozen=True)
class OutputCase:
    template: str
    option: str
    destination: str
    expect: str

    @property
    def name(self) -> str:
        return f"{self.template.split()[0]} {self.option} to {self.destination}"

    def prepare(self, folder: Path) -> Path:
        """Create the destination in ``folder``; returns its path."""
        suffix = {"--report": ".md", "--plot": ".png", "-o": ".dot", "--write-json": ".json",
                  "--write-dot": ".dot"}.get(self.option, "")
        if self.destination == "a directory":
            out = folder / "outdir"
            out.mkdir()
        elif self.destination == "a directory named like a file":
            out = folder / f"outdir{suffix}"
            out.mkdir()
        elif self.destination == "a FIFO":
            out = folder / f"fifo{suffix}"
            os.mkfifo(out)
        elif self.destination == "an input file":
            out = folder / "scenario.fl"
        elif self.destination == "unknown extension":
            out = folder / "out.xyz"
        elif self.destination == "a write-protected file":
            out = folder / f"protected{suffix or '.tra'}"
            out.write_text("an older output, write-protected\n")
            out.chmod(0o444)
        else:
            out = folder / "missing" / f"out{suffix}"
        return out

    def argv(self, folder: Path, out: Path) -> list[str]:
        if self.option == "--write-explicit" and self.destination == "a write-protected file":
            out = out.with_suffix("")  # the prefix of the protected PREFIX.tra
        return [*_split(self.template, folder), self.option, str(out)]


def _split(template: str, folder: Path) -> list[str]:
    """The template's words (a quoted formula is one word), ``{L}`` replaced by the scenario copy."""
    words: list[str] = []
    quoted = template.split("'")
    for i, part in enumerate(quoted):
        words += [part] if i % 2 else part.split()
    return [w.replace("{L}", str(folder / "scenario.fl")) for w in words]


def copy_scenario(folder: Path) -> Path:
    target = folder / "scenario.fl"
    target.write_bytes(scenario_path("moniteo_link_loss").read_bytes())
    return target


def option_cases(excluded: frozenset[str]) -> st.SearchStrategy[OptionCase]:
    cases = [OptionCase(template, option, kind, expect.get(kind, EITHER))
             for (template, option), expect in OPTION_CASES.items() for kind in VALUES]
    return st.sampled_from([c for c in cases if f"option: {c.name}" not in excluded])


def output_cases(excluded: frozenset[str]) -> st.SearchStrategy[OutputCase]:
    cases = [OutputCase(template, option, destination,
                        expect.get(destination, EITHER if destination == "missing folder" else REJECT))
             for (template, option), expect in OUTPUT_CASES.items() for destination in DESTINATIONS]
    return st.sampled_from([c for c in cases if f"output: {c.name}" not in excluded])
