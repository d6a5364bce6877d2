"""Command lines with odd option values (nan, inf, negative, 1e400, 1e-7, 30 digits, Unicode digits, not a
number) for every numeric option of every command (:func:`numeric_options` walks the parser), and odd
output destinations (a directory, a FIFO, an input file, an unknown image extension, a missing folder)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from tests.fuzz.scenario_mutations import scenario_path

#: Expectations: REJECT exit 2 with a one-line message; ACCEPT a verdict (exit 0/1); EITHER.
REJECT, ACCEPT, EITHER = "reject", "accept", "either"

#: The odd values every numeric option of every command is tried with (the kinds of value that found
#: option values that once gave exit 3: an overflowing float, a tiny step, a 30-digit integer,
#: Unicode digits).
VALUES: dict[str, str] = {
    "nan": "nan", "inf": "inf", "-inf": "-inf", "-1": "-1", "-5": "-5", "0": "0", "1e-7": "1e-7",
    "1e400": "1e400", "1e308": "1e308", "huge": "9" * 24, "30 digits": "9" * 30, "1e17": "100000000000000000",
    "1000": "1000", "not a number": "abc", "empty": "", "unicode digits": "\u0661\u0662",
    "fraction by zero": "1/0",
}

#: A cheap command line of each command with numeric options; ``{L}`` is the link-loss scenario copied
#: into the example's folder, ``{D}`` that folder. The option under test is appended (the last
#: occurrence of an option wins).
BASE: dict[str, str] = {
    "check": "check {L} --max-states 300 --max-seconds 20",
    "ctl": "ctl {L} 'EF round = 1' --max-states 300 --max-seconds 20",
    "explore": "explore {L} --max-states 300 --max-seconds 20",
    "attack-tree": "attack-tree {L} --goal seen_sat3 --max-states 300 --max-seconds 20",
    "privacy": "privacy {L} --max-states 300 --no-literal --no-decomposition --max-seconds 20",
    "dp gaussian": "dp gaussian --mu 1 --eps 1",
    "dp secagg": "dp secagg --entries uniform --n 10 --eps 1",
    "dp fig1": "dp fig1 --dims 1 --eps 1",
    "audit": "audit rr:p=3/4 --trials 200",
    "account": "account --noise-multiplier 1 --sampling-rate 0.01 --rounds 100 --delta 1e-5",
    "export isabelle": "export isabelle {L} -o {D}/theories --max-states 300 --max-seconds 20",
    "sweep": "sweep moniteo_swarm8 -D N=1 --jobs 1 --executor processes -o {D}/s.jsonl --no-plot "
             "--max-states 300 --max-seconds 20 --quiet",
    "contacts": "contacts --station toulouse",
    "attack sratta": "attack sratta --clients 2 --per-client 10 --hidden 20 --rounds 2 --n-updates 1",
    "attack leakage": "attack leakage --samples 200 --steps 50",
    "attack mia": "attack mia --clients 2 --per-client 40 --batch-size 8 --snps 50 --rounds 1 "
                  "--local-epochs 1 --hidden 4 --shadow-epochs 1 --challenge-nonmembers 10 --epsilons inf",
}

#: Commands without a time limit (the simulated trainings, the numerical curves): a value their option
#: type accepts is not run here (the size it asks for may take minutes by design); a refused one is.
UNTIMED = ("attack ", "dp ", "audit", "account", "contacts")

#: Type functions of options that are not numbers (paths, names, definitions).
_NOT_NUMERIC = ("output_file", "plot_file", "output_directory", "parse_define", "parse_define_values")


def numeric_options() -> list[tuple[str, str, Callable[[str], object]]]:
    """``(command, option, type)`` of every option of every command that reads a number (or a list or a
    matrix of numbers), found by walking the parser: a new option is fuzzed without being listed."""
    from checker.cli.main import build_parser

    found: list[tuple[str, str, Callable[[str], object]]] = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
                return
        command = " ".join(words)
        for action in parser._actions:
            kind = getattr(action.type, "__name__", "")
            if not action.option_strings or action.type is None or kind in _NOT_NUMERIC:
                continue
            found.append((command, action.option_strings[-1], action.type))

    walk(build_parser(), [])
    return found


@dataclass(frozen=True)
class OptionCase:
    command: str
    option: str
    value_kind: str
    expect: str

    @property
    def template(self) -> str:
        return BASE[self.command]

    @property
    def name(self) -> str:
        return f"{self.command} {self.option}={self.value_kind}"

    @property
    def runs(self) -> bool:
        """Whether the case is run: every refused value, and accepted ones of commands with a time limit."""
        return self.expect == REJECT or not self.command.startswith(UNTIMED)

    def argv(self, folder: Path) -> list[str]:
        return [*_split(self.template, folder), self.option, VALUES[self.value_kind]]


def option_case_list(excluded: frozenset[str] = frozenset()) -> list[OptionCase]:
    """Every numeric option of every command with every odd value: REJECT where the option's type
    refuses the value (exit 2, one line naming the option), else EITHER (a verdict, or exit 2 when the
    value does not fit the model; never exit 3 or a traceback)."""
    cases = []
    for command, option, parse in numeric_options():
        if command not in BASE:
            raise AssertionError(f"no cheap command line for {command!r} in tests/fuzz/cli_options.BASE")
        for kind, value in VALUES.items():
            try:
                parse(value)
                expect = EITHER
            except argparse.ArgumentTypeError:
                expect = REJECT
            case = OptionCase(command, option, kind, expect)
            if f"option: {case.name}" not in excluded:
                cases.append(case)
    return cases


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
    """The template's words (a quoted formula is one word), ``{L}`` replaced by the scenario copy and
    ``{D}`` by the folder."""
    words: list[str] = []
    quoted = template.split("'")
    for i, part in enumerate(quoted):
        words += [part] if i % 2 else part.split()
    return [w.replace("{L}", str(folder / "scenario.fl")).replace("{D}", str(folder)) for w in words]


def copy_scenario(folder: Path) -> Path:
    target = folder / "scenario.fl"
    target.write_bytes(scenario_path("moniteo_link_loss").read_bytes())
    return target


def option_cases(excluded: frozenset[str]) -> st.SearchStrategy[OptionCase]:
    return st.sampled_from([c for c in option_case_list(excluded) if c.runs])


def output_cases(excluded: frozenset[str]) -> st.SearchStrategy[OutputCase]:
    cases = [OutputCase(template, option, destination,
                        expect.get(destination, EITHER if destination == "missing folder" else REJECT))
             for (template, option), expect in OUTPUT_CASES.items() for destination in DESTINATIONS]
    return st.sampled_from([c for c in cases if f"output: {c.name}" not in excluded])
