"""The smallest cases found on which d2ts disagrees with the expected output, written as a case set.

Each reproducer below is a list of input messages; its expected output is
computed the way ``generate`` computes every case's (final's answer, checked
against the from-scratch answer at every version), so these files are
ordinary cases. REPORT.md beside this file explains each one.

    python -m final.conformance.d2ts.findings          # rewrites final/conformance/d2ts/findings/
    python -m final.conformance check --engine d2ts --cases final/conformance/d2ts/findings
"""

from __future__ import annotations

from pathlib import Path

from ..cases import Case, Message, file_name
from ..catalog import program_named
from ..generate import answer, tags_of

OUT = Path(__file__).resolve().parent / "findings"


def data(input_name: str, *updates: list) -> dict:
    return {"input": input_name, "data": [list(update) for update in updates]}


def frontier(input_name: str, *versions: object) -> dict:
    return {"input": input_name, "frontier": list(versions)}


# name -> (program, dimensions, what it shows, messages)
REPRODUCERS: dict[str, tuple[str, int, str, list[dict]]] = {
    "distinct/compaction-drops-key": (
        "distinct", 1,
        "d2ts finding 1: compacting a key whose older updates cancel drops the key's later updates too",
        [
            data("records", ["a", 5, 1]),
            data("records", ["a", 0, 1], ["a", 1, -1]),
            frontier("records", 2),
            frontier("records"),
        ],
    ),
    "join/compaction-drops-key": (
        "join", 1,
        "d2ts finding 1, in join's index",
        [
            data("left", [[0, "a"], 5, 1]),
            data("left", [[0, "b"], 0, 1], [[0, "b"], 1, -1]),
            frontier("left", 2),
            frontier("right", 2),
            data("right", [[0, "x"], 5, 1]),
            frontier("left"),
            frontier("right"),
        ],
    ),
    "geometric_series/compaction-drops-key": (
        "geometric_series", 1,
        "d2ts finding 1, inside a loop (the shrinker's case)",
        [
            data("numbers", [16, 1, 2]),
            frontier("numbers", 4),
            data("numbers", [16, 4, 1]),
            frontier("numbers"),
        ],
    ),
    "noop_loop/consolidate-never-quiet": (
        "noop_loop", 1,
        "d2ts finding 2: consolidate writes empty messages, which the loop feeds back for ever",
        [data("numbers", [1, 0, 1]), frontier("numbers")],
    ),
    "reachability/consolidate-never-quiet": (
        "reachability", 1,
        "d2ts finding 2, in reachability as the adapter writes it (one root, no edges)",
        [frontier("edges"), data("roots", [1, 0, 1]), frontier("roots")],
    ),
    "count_by_key/count-of-nothing": (
        "count_by_key", 1,
        "d2ts finding 3: count gives [key, 0] for a key whose records cancel",
        [data("records", [[1, 1], 0, 1], [[1, 1], 0, -1]), frontier("records")],
    ),
    "left_outer_join/two-matches": (
        "left_outer_join", 1,
        "d2ts finding 4: leftJoin subtracts a left record once per matching right record",
        [
            data("right", [[0, "x"], 0, 1], [[0, "y"], 0, 1]),
            frontier("right"),
            data("left", [[0, 3], 0, 1]),
            frontier("left"),
        ],
    ),
    "semijoin/filterby-value": (
        "semijoin", 1,
        "d2ts finding 5: filterBy gives [key, null] instead of the record",
        [data("keys", [1, 0, 1]), frontier("keys"), data("left", [[1, 4], 0, 1]), frontier("left")],
    ),
    "distinct/reduce-order": (
        "distinct", 2,
        "d2ts finding 6: reduce works through incomparable versions in an order that puts (0, 2) before (0, 1)",
        [
            data("records", ["a", [0, 2], -1]),
            data("records", ["b", [1, 0], 1]),
            data("records", ["a", [0, 1], 1]),
            frontier("records"),
        ],
    ),
    "geometric_series/loop-closed-early": (
        "geometric_series", 1,
        "d2ts finding 7: the loop's feedback closes version 1 after four quiet rounds; the correction at round 5 "
        "then throws 'Invalid version'",
        [data("numbers", [1, 0, 1]), frontier("numbers", 1), data("numbers", [32, 1, 1]), frontier("numbers")],
    ),
    "distinct/past-2-53": (
        "distinct", 1,
        "d2ts finding 8: records hold JavaScript numbers, so 2^53 + 1 arrives as 2^53 and the two are one record",
        [data("records", [2**53, 0, 1], [2**53 + 1, 0, 1]), frontier("records")],
    ),
}


def reproducer(name: str) -> Case:
    program_name, dimensions, source, raw = REPRODUCERS[name]
    program = program_named(program_name)
    messages = tuple(Message.from_json(message) for message in raw)
    bare = Case(name, program_name, program.inputs, dimensions, messages, (), f"d2ts/REPORT.md: {source}")
    tags = tags_of(program, dimensions, bare.histories(), messages)
    return answer(Case(name, program_name, program.inputs, dimensions, messages, (), bare.source, ("d2ts", *tags)))


def main() -> None:
    for stale in OUT.rglob("*.json") if OUT.exists() else ():
        stale.unlink()
    for name in REPRODUCERS:
        case = reproducer(name)
        path = OUT / file_name(case.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case.text())
    print(f"{len(REPRODUCERS)} cases written under {OUT}")


if __name__ == "__main__":
    main()
