"""The smallest cases found on which pathway disagrees with the expected output, written as a case set.

REPORT.md beside this file explains each one.

    python -m final.conformance.pathway.findings          # rewrites final/conformance/pathway/findings/
    python -m final.conformance check --engine pathway --cases final/conformance/pathway/findings
"""

from __future__ import annotations

from pathlib import Path

from ..reproducers import Reproducer, data, frontier, write_findings

OUT = Path(__file__).resolve().parent / "findings"

REPRODUCERS: dict[str, Reproducer] = {
    "sum_by_key/past-64-bits": (
        "sum_by_key", 1,
        "pathway finding P1: a sum past 2^63 - 1 wraps around to a negative number, with no error",
        [data("records", [[1, 2**62], 0, 1], [[1, 2**62], 0, 1]), frontier("records")],
    ),
    "distinct/integer-past-64-bits": (
        "distinct", 1,
        "pathway finding P1: an input integer past 2^63 - 1 stops the run with a worker panic",
        [data("records", [2**64, 0, 1]), frontier("records")],
    ),
}

FAILS_BY: dict[str, str] = {}
"""The finding behind each program's failures on the committed set (the REPORT's results table shows it):
none, since pathway fails no case of it."""


def main() -> None:
    count = write_findings("pathway", REPRODUCERS, OUT)
    print(f"{count} cases written under {OUT}")


if __name__ == "__main__":
    main()
