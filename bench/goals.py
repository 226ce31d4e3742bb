"""The goals of docs/benchmarks.md as checks, for every benchmark's ``--check``.

A benchmark prints its figures as it always has; with ``--check`` it then compares the ones its
section of docs/benchmarks.md sets a goal for, prints one line per goal (``met`` or
``MISSED``) and exits 1 when any was missed. A goal whose figure the run did not measure (a
mode left out, a size not run) counts as missed: a check that could not look passes nothing.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Goal:
    """A figure at most ``limit`` (or at least, with ``at_least``), in ``unit``."""

    what: str
    limit: float
    unit: str = ""
    at_least: bool = False

    def met(self, value: float | None) -> bool:
        if value is None or math.isnan(value):
            return False
        return value >= self.limit if self.at_least else value <= self.limit

    def verdict(self, value: float | None) -> str:
        shown = "not measured" if value is None or math.isnan(value) else _number(value, self.unit)
        bound = "at least" if self.at_least else "at most"
        state = "met" if self.met(value) else "MISSED"
        return f"{state}: {self.what}: {shown} (goal: {bound} {_number(self.limit, self.unit)})"


def _number(value: float, unit: str) -> str:
    return f"{value:.4g}{unit}"


Result = tuple[Goal, float | None]


def missed(results: Iterable[Result]) -> list[str]:
    """The verdicts of the goals ``results`` did not meet."""
    return [goal.verdict(value) for goal, value in results if not goal.met(value)]


def add_check_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="after the figures, compare them with the goals of docs/benchmarks.md; exit 1 "
        "when one is missed (or was not measured), naming it",
    )


def report(results: Iterable[Result], *, check: bool) -> int:
    """The exit status of a benchmark: without ``check`` 0 and nothing printed (the figures
    are the output); with it, every goal's verdict and 1 when one was missed."""
    if not check:
        return 0
    results = list(results)
    print("\ngoals (docs/benchmarks.md):")
    for goal, value in results:
        print("  " + goal.verdict(value))
    failed = missed(results)
    if failed:
        print(f"{len(failed)} of {len(results)} goals missed")
    return 1 if failed else 0
