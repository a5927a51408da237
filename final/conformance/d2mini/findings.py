"""The smallest cases found on which d2mini disagrees with the expected output, written as a case set.

REPORT.md beside this file explains each one (M1 to M6).

    python -m final.conformance.d2mini.findings          # rewrites final/conformance/d2mini/findings/
    python -m final.conformance check --engine d2mini --cases final/conformance/d2mini/findings
"""

from __future__ import annotations

from pathlib import Path

from ..reproducers import Reproducer, data, frontier, write_findings

OUT = Path(__file__).resolve().parent / "findings"

REPRODUCERS: dict[str, Reproducer] = {
    "count_by_key/count-of-nothing": (
        "count_by_key", 1,
        "d2mini finding M1: count gives [key, 0] for a key whose records cancel",
        [data("records", [[1, 1], 0, 1], [[1, 1], 0, -1]), frontier("records")],
    ),
    "antijoin/key-twice": (
        "antijoin", 1,
        "d2mini finding M2: antiJoin subtracts a left record once per record of the other side with its key",
        [data("keys", [1, 0, 2]), frontier("keys"), data("left", [[1, 4], 0, 1]), frontier("left")],
    ),
    "left_outer_join/two-matches": (
        "left_outer_join", 1,
        "d2mini finding M2, in leftJoin (innerJoin plus antiJoin): a left record with two matches is subtracted twice",
        [
            data("right", [[0, "x"], 0, 1], [[0, "y"], 0, 1]),
            frontier("right"),
            data("left", [[0, 3], 0, 1]),
            frontier("left"),
        ],
    ),
    "semijoin/key-twice": (
        "semijoin", 1,
        "d2mini finding M3: filterBy keeps a record once per record of the other side with its key",
        [data("keys", [1, 0, 2]), frontier("keys"), data("left", [[1, 4], 0, 1]), frontier("left")],
    ),
    "semijoin/number-and-string": (
        "semijoin", 1,
        'd2mini finding M4: consolidate (inside filterBy) takes the values 1 and "1" for one value',
        [data("keys", [1, 0, 1]), frontier("keys"), data("left", [[1, 1], 0, 1], [[1, "1"], 0, 1]), frontier("left")],
    ),
    "distinct/hash-collision": (
        "distinct", 1,
        "d2mini finding M5: distinct tells records apart by a 32-bit murmur3 hash of their JSON text, and "
        '["user", 18519] and ["user", 68576] have the same one',
        [data("records", [["user", 18519], 0, 1], [["user", 68576], 0, 1]), frontier("records")],
    ),
    "distinct/past-2-53": (
        "distinct", 1,
        "d2mini finding M6: records hold JavaScript numbers, so 2^53 + 1 arrives as 2^53 and the two are one record",
        [data("records", [2**53, 0, 1], [2**53 + 1, 0, 1]), frontier("records")],
    ),
}

FAILS_BY: dict[str, str] = {
    "count_by_key": "M1, M6", "word_count": "M1",
    "antijoin": "M2", "left_outer_join": "M2", "enrichment": "M2",
    "semijoin": "M3", "distinct": "M5",
}
"""The finding behind each program's failures on the committed set (the REPORT's results table shows it):
with --workarounds, which replaces the operators of M1 to M5, every supported case passes but those of M6
(integers past 2^53, which no operator can keep)."""


def main() -> None:
    count = write_findings("d2mini", REPRODUCERS, OUT)
    print(f"{count} cases written under {OUT}")


if __name__ == "__main__":
    main()
