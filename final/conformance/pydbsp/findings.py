"""The smallest cases found on which pydbsp disagrees with the expected output, written as a case set.

REPORT.md beside this file explains each one (D1).

    python -m final.conformance.pydbsp.findings          # rewrites final/conformance/pydbsp/findings/
    python -m final.conformance check --engine pydbsp --cases final/conformance/pydbsp/findings
"""

from __future__ import annotations

from pathlib import Path

from ..reproducers import Reproducer, data, frontier, write_findings

OUT = Path(__file__).resolve().parent / "findings"

REPRODUCERS: dict[str, Reproducer] = {
    "difference/true-and-1": (
        "difference", 1,
        "pydbsp finding D1: a Z-set keys its elements by Python equality, so true and 1 are one element",
        [data("a", [True, 0, 1]), frontier("a"), data("b", [1, 0, 1]), frontier("b")],
    ),
}

FAILS_BY: dict[str, str] = {"count_by_key": "D1", "difference": "D1"}
"""The finding behind each program's failures on the committed set (the REPORT's results table shows it)."""


def main() -> None:
    count = write_findings("pydbsp", REPRODUCERS, OUT)
    print(f"{count} cases written under {OUT}")


if __name__ == "__main__":
    main()
