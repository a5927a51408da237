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
    "count_by_key/false-1-and-0-true": (
        "count_by_key", 1,
        "pydbsp finding D1: [false, 1] and [0, true] are one element of a Z-set but two keys of its index, and "
        "retracting [0, true] raises KeyError",
        [
            data("records", [[False, 1], 0, 1]),
            frontier("records", 1),
            data("records", [[0, True], 1, 1], [[False, 1], 1, -1]),
            frontier("records", 2),
            data("records", [[0, True], 2, -1]),
            frontier("records"),
        ],
    ),
}

FAILS_BY: dict[str, str] = dict.fromkeys((
    "antijoin", "concat", "count_by_key", "difference", "distinct", "enrichment", "explode", "join",
    "left_outer_join", "min_max_count_distinct", "reachability", "semijoin", "sum_by_key", "three_hops",
), "D1")
"""The finding behind each program's failures on the committed set (the REPORT's results table shows it): D1,
in the booleans cases of every program of that family that the adapter writes."""


def main() -> None:
    count = write_findings("pydbsp", REPRODUCERS, OUT)
    print(f"{count} cases written under {OUT}")


if __name__ == "__main__":
    main()
