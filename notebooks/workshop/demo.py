"""The workshop's opening demo: what incrementality buys, in five minutes, on one laptop.

``python -m workshop.demo`` (from ``notebooks/``, after ``source scripts/bootstrap.sh``) loads
``--rows`` trips, groups them by passenger count (a count and a sum of fares per group) and keeps
the answer up to date while single trips are corrected. Each correction is answered twice: by v0,
which recomputes the whole query from scratch on the whole table, and by ``final``, which updates
its answer from the change alone. The two answers are compared after every correction, and the
table printed shows each side's time: seconds against milliseconds, the gap growing with the table.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import final
import v0

Trip = tuple[int, int, int]
"""(trip id, passenger count, fare in cents)."""


@dataclass
class Correction:
    """One trip corrected: its row before and after, and each side's time to the new answer (seconds)."""

    before: Trip
    after: Trip
    from_scratch: float
    incremental: float


def trips(rows: int, seed: int = 7) -> list[Trip]:
    """``rows`` trips with 1 to 6 passengers and fares of 3 to 80 dollars, the same for the same seed."""
    chance = random.Random(seed)
    return [(trip, chance.randint(1, 6), chance.randint(300, 8_000)) for trip in range(rows)]


def from_scratch(table: list[Trip]) -> dict:
    """The query over the whole table, by v0: ``{(passengers, (trips, fares)): 1}``."""
    collection = v0.Collection([(trip, 1) for trip in table])
    counts = collection.map(lambda trip: (trip[1], ())).count()
    fares = collection.map(lambda trip: (trip[1], trip[2])).sum()
    return counts.join(fares).as_dict()


def timed(work: Callable[[], object]) -> tuple[object, float]:
    """What ``work`` returns, and the seconds it took."""
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def run(rows: int, corrections: int, seed: int = 7) -> tuple[float, float, list[Correction]]:
    """Load ``rows`` trips, then correct ``corrections`` of them one at a time, answering each both ways.

    Returns the seconds v0 and final take to answer the whole table first, and each correction; the two
    answers are compared after every correction, and a disagreement raises ``RuntimeError`` naming it.
    """
    table = trips(rows, seed)
    builder = final.GraphBuilder(0)
    stream, session = builder.new_session("trips")
    counts = stream.map(lambda trip: (trip[1], ())).count()
    fares = stream.map(lambda trip: (trip[1], trip[2])).sum()
    answer = counts.join(fares).output("by_passengers", history=False)
    graph = builder.finalize()

    def load() -> None:
        for trip in table:
            session.insert(trip)
        session.advance_to(1)
        graph.run()

    _, first_incremental = timed(load)
    _, first_from_scratch = timed(lambda: from_scratch(table))
    chance, done = random.Random(seed + 1), []
    for version in range(1, corrections + 1):
        position = chance.randrange(rows)
        before = table[position]
        after = (before[0], chance.randint(1, 6), chance.randint(300, 8_000))
        table[position] = after

        def update(before: Trip = before, after: Trip = after, version: int = version) -> dict:
            session.remove(before)
            session.insert(after)
            session.advance_to(version + 1)
            graph.run()
            return answer.snapshot()

        incremental, incremental_seconds = timed(update)
        expected, scratch_seconds = timed(lambda: from_scratch(table))
        if incremental != expected:
            raise RuntimeError(f"final and v0 disagree after correcting {before} to {after}")
        done.append(Correction(before, after, scratch_seconds, incremental_seconds))
    return first_from_scratch, first_incremental, done


def report(rows: int, first_from_scratch: float, first_incremental: float, done: list[Correction]) -> str:
    """The demo's table: the first answer, then each correction, both sides' times and the speed-up."""
    lines = [f"{rows:,} trips, GROUP BY passenger count: COUNT(*) and SUM(fare)",
             f"{'':<34}{'from scratch (v0)':>18}{'incremental (final)':>21}{'speed-up':>10}",
             f"{'first answer (the whole table)':<34}{first_from_scratch:>16.2f} s{first_incremental:>19.2f} s"]
    for number, correction in enumerate(done, 1):
        speed_up = correction.from_scratch / correction.incremental
        lines.append(f"{f'correction {number}: trip {correction.before[0]}':<34}"
                     f"{correction.from_scratch:>16.2f} s{correction.incremental * 1000:>18.2f} ms{speed_up:>9,.0f}x")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="trips in the table (default 200,000)")
    parser.add_argument("--corrections", type=int, default=5, help="trips corrected one by one (default 5)")
    args = parser.parse_args()
    if args.rows < 1 or args.corrections < 1:
        parser.error("--rows and --corrections must be at least 1")
    print(report(args.rows, *run(args.rows, args.corrections)))


if __name__ == "__main__":
    main()
