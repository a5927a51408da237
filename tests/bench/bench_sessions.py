"""Input sessions: what one change costs in versions of 1,000 changes, in versions of one, and with no engine.

The same changes are applied three ways, in one run, and each way's cost is
reported per change (per record inserted or retracted):

1. ``final`` through input sessions, 1,000 changes per version: ``update``
   each change, ``advance_to`` the next version (one collection per input),
   ``graph.run()``, and read the output's ``changes`` at the version.
2. The same, one change per version: as many versions as changes.
3. Plain dicts, no engine (the CPython floor): the same result maintained
   by hand, and each version's change to it computed, 1,000 changes a version.

Workloads: N live records are loaded first (version 0, timed on its own);
then every two changes insert a new record and retract a live one chosen at
random (seeded), so the data keeps its size.

- ``count by key``: record ``i`` is ``(i % 1000, i)``, counted by key twice
  over: with ``count()``, the general reduction, which recounts a touched
  key's values (about N / 1000 of them), and with ``count_total()``, which
  keeps one count per key in place, as the dicts do.
- ``join``: two inputs of N live records each, record ``i`` is
  ``(i % (N // 10), i)``, joined: every key has about 10 records per side,
  so a change produces about 10 output records.

Every way folds the output changes it reads into a checksum (the sum of
``hash(record) * multiplicity``, which is order-free and adds up version by
version); the three must agree, and the sessions' must equal the checksum
of the output's ``snapshot()``. A mismatch raises, it is not a time.

Each way starts after a full garbage collection, and the time its changes
spend in CPython's cyclic garbage collector (``gc.callbacks``) is reported
as a share of its time: the collector walks every container the run keeps,
so holding a large result costs time on every collection. One run on a
shared machine: read the ratios, not the microseconds. Nothing here is a
pass/fail threshold on time.

    python -m tests.bench.bench_sessions            # N = 100,000, 100,000 changes per way (about a minute)
    python -m tests.bench.bench_sessions --quick    # N = 2,000, 4,000 changes
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import final

N = 100_000
"""Live records per input: the size at which the other benchmarks measure final."""
CHANGES = 100_000
"""Changes per way after the load: 100 versions of BATCH, long enough that one run's noise averages out."""
BATCH = 1_000
"""Changes per version in the batched way: enough that the per-version cost is spread thin."""
COUNT_KEYS = 1_000
"""Keys of count by key: N / COUNT_KEYS records per key, so a group is large enough for count() to differ
from count_total()."""
SEED = 11
"""Fixed, so every way (and every run) applies the same changes."""
MASK = (1 << 64) - 1
"""The checksum is kept to 64 bits, so it stays a small int however many records it folds in."""

Record = Any
UnversionedChange = tuple[int, Record, int]
"""``(input, record, multiplicity)``: a change without its version, which is given beside a list of them."""


def checksum(total: int, changes: dict[Record, int]) -> int:
    """``total`` plus ``changes`` folded in: the sum of ``hash(record) * multiplicity``, mod 2**64.

    Summing is order-free, so the checksum of a whole output is the sum of
    its versions' checksums however they are cut. Ints and tuples of ints
    hash the same in every process (``PYTHONHASHSEED`` salts only strings).
    """
    for record, multiplicity in changes.items():
        total += hash(record) * multiplicity
    return total & MASK


@dataclass
class Workload:
    """One program, its initial records per input, and the changes after them.

    ``floor`` makes the plain-dict version: given nothing, it returns a
    function from one version's changes to the output's change at it.
    """

    name: str
    program: Callable[..., Any]
    load: list[list[Record]]
    changes: list[UnversionedChange]
    floor: Callable[[], Callable[[list[UnversionedChange]], dict[Record, int]]]


def churn(
    n: int, count: int, inputs: int, record: Callable[[int], Record]
) -> tuple[list[list], list[UnversionedChange]]:
    """``n`` records per input, then ``count`` changes: a new record inserted and a random live one
    retracted, in turn, the inputs taking turns too, so every input keeps ``n`` live records."""
    rng = random.Random(SEED)
    live = [list(range(n)) for _ in range(inputs)]
    changes: list[UnversionedChange] = []
    fresh = n
    for step in range(count // 2):
        side = step % inputs
        ids = live[side]
        slot = rng.randrange(n)
        changes.append((side, record(fresh), 1))
        changes.append((side, record(ids[slot]), -1))
        ids[slot] = fresh
        fresh += 1
    return [[record(i) for i in range(n)] for _ in range(inputs)], changes


def count_floor() -> Callable[[list[UnversionedChange]], dict[Record, int]]:
    """Counts by key in one dict; a version's change retracts each touched key's old count and adds its new."""
    counts: dict[Any, int] = {}

    def apply(changes: list[UnversionedChange]) -> dict[Record, int]:
        before: dict[Any, int] = {}
        for _, (key, _value), multiplicity in changes:
            old = counts.get(key, 0)
            if key not in before:
                before[key] = old
            counts[key] = old + multiplicity
        out: dict[Record, int] = {}
        for key, old in before.items():
            new = counts[key]
            if new != old:
                if old:
                    out[(key, old)] = -1
                if new:
                    out[(key, new)] = 1
                else:
                    del counts[key]
        return out

    return apply


def join_floor() -> Callable[[list[UnversionedChange]], dict[Record, int]]:
    """Each input indexed by key (``{key: {value: multiplicity}}``); a change is joined with the other
    input's index as it stands, then applied to its own, so a version's changes join exactly once."""
    indexes: tuple[dict, dict] = ({}, {})

    def apply(changes: list[UnversionedChange]) -> dict[Record, int]:
        out: dict[Record, int] = {}
        for side, (key, value), multiplicity in changes:
            matches = indexes[1 - side].get(key)
            if matches:
                for other, other_multiplicity in matches.items():
                    record = (key, (value, other)) if side == 0 else (key, (other, value))
                    out[record] = out.get(record, 0) + multiplicity * other_multiplicity
            group = indexes[side].setdefault(key, {})
            total = group.get(value, 0) + multiplicity
            if total:
                group[value] = total
            else:
                del group[value]
                if not group:
                    del indexes[side][key]
        return {record: multiplicity for record, multiplicity in out.items() if multiplicity}

    return apply


def workloads(n: int, count: int) -> list[Workload]:
    keys = max(n // 10, 1)
    counted = churn(n, count, 1, lambda i: (i % COUNT_KEYS, i))
    return [
        Workload("count by key, count()", lambda a: a.count(), *counted, count_floor),
        Workload("count by key, count_total()", lambda a: a.count_total(), *counted, count_floor),
        Workload("join", lambda a, b: a.join(b), *churn(n, count, 2, lambda i: (i % keys, i)), join_floor),
    ]


@dataclass
class Timing:
    """One way's run: seconds for the load, seconds for the changes after it (``collector`` of them in
    the garbage collector), and the checksum of the output."""

    load: float
    changes: float
    collector: float
    checksum: int


class CollectorClock:
    """Seconds CPython's cyclic garbage collector runs while this is entered (``with``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self._tick)
        return self

    def __exit__(self, *exception: object) -> None:
        gc.callbacks.remove(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


def batches(changes: list[UnversionedChange], batch: int) -> list[list[UnversionedChange]]:
    return [changes[start:start + batch] for start in range(0, len(changes), batch)]


def through_sessions(workload: Workload, batch: int) -> Timing:
    """Load and apply ``workload`` through input sessions, ``batch`` changes per version, reading each version."""
    builder = final.GraphBuilder(0)
    streams, sessions = zip(*(builder.new_session(f"input{side}") for side in range(len(workload.load))),
                            strict=True)
    output = workload.program(*streams).output("result")
    graph = builder.finalize()
    versions = batches(workload.changes, batch)  # cut before the clock starts
    gc.collect()  # the garbage of the ways before is theirs

    start = time.perf_counter()
    for session, records in zip(sessions, workload.load, strict=True):
        for record in records:
            session.insert(record)
        session.advance_to(1)
    graph.run()
    total = checksum(0, output.changes(0))
    load = time.perf_counter() - start

    with CollectorClock() as collector:
        start = time.perf_counter()
        for version, changes in enumerate(versions, start=1):
            for side, record, multiplicity in changes:
                sessions[side].update(record, multiplicity)
            for session in sessions:
                session.advance_to(version + 1)
            graph.run()
            total = checksum(total, output.changes(version))
        elapsed = time.perf_counter() - start

    whole = checksum(0, output.snapshot())
    if whole != total:
        raise AssertionError(
            f"{workload.name}, {batch} per version: the changes read add up to checksum {total:#x}, "
            f"but the output's snapshot has {whole:#x}"
        )
    return Timing(load, elapsed, collector.seconds, total)


def with_dicts(workload: Workload, batch: int) -> Timing:
    """The same result kept by hand in dicts, ``batch`` changes per version."""
    apply = workload.floor()
    versions = batches(workload.changes, batch)
    gc.collect()
    start = time.perf_counter()
    total = checksum(0, apply([(side, record, 1) for side, records in enumerate(workload.load) for record in records]))
    load = time.perf_counter() - start
    with CollectorClock() as collector:
        start = time.perf_counter()
        for changes in versions:
            total = checksum(total, apply(changes))
        elapsed = time.perf_counter() - start
    return Timing(load, elapsed, collector.seconds, total)


WAYS: dict[str, Callable[[Workload, int], Timing]] = {
    "batched": lambda workload, batch: through_sessions(workload, batch),
    "one per version": lambda workload, batch: through_sessions(workload, 1),
    "plain dicts": lambda workload, batch: with_dicts(workload, batch),
}
"""Each way by the name its column has; ``batch`` is the changes per version of the batched ways."""


def measure(n: int = N, count: int = CHANGES, batch: int = BATCH,
            progress: Callable[[str], None] = lambda line: None) -> list[tuple[Workload, dict[str, Timing]]]:
    """Per workload, each way's ``Timing``.

    Raises:
        AssertionError: two ways' outputs differ (their checksums do), or a session's reads do not add
            up to its output's snapshot.
    """
    rows = []
    for workload in workloads(n, count):
        timings = {}
        for way, run in WAYS.items():
            timings[way] = run(workload, batch)
            progress(f"  {workload.name}, {way}: load {timings[way].load:.2f} s, "
                     f"{len(workload.changes):,} changes {timings[way].changes:.2f} s")
        sums = {way: f"{timing.checksum:#018x}" for way, timing in timings.items()}
        if len(set(sums.values())) != 1:
            raise AssertionError(f"{workload.name}: the ways' outputs differ, checksums {sums}")
        rows.append((workload, timings))
    return rows


def table(rows: list[tuple[Workload, dict[str, Timing]]], n: int, batch: int) -> str:
    """A Markdown table: µs per change each way, the two ratios, the loads, the collector's shares and the
    checksum all ways agreed on."""
    lines = [
        f"| workload (N={n:,}) | session, {batch:,} per version | session, one per version | plain dicts | "
        f"batched / dicts | one per version / batched | load, session / dicts (s) | in gc: batched, one, dicts | "
        f"checksum |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for workload, timings in rows:
        per = {way: timing.changes / len(workload.changes) * 1e6 for way, timing in timings.items()}
        shares = ", ".join(f"{timing.collector / timing.changes:.0%}" for timing in timings.values())
        lines.append(
            f"| {workload.name} | {per['batched']:.1f} | {per['one per version']:.1f} | {per['plain dicts']:.2f} | "
            f"{per['batched'] / per['plain dicts']:.1f} | {per['one per version'] / per['batched']:.1f} | "
            f"{timings['batched'].load:.2f} / {timings['plain dicts'].load:.2f} | {shares} | "
            f"`{timings['batched'].checksum:016x}` |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 2,000 and 4,000 changes per way")
    args = parser.parse_args()
    n, count = (2_000, 4_000) if args.quick else (N, CHANGES)
    print(f"N = {n:,} live records per input, then {count:,} changes per way "
          f"({count // BATCH:,} versions of {BATCH:,}, or {count:,} of one):", flush=True)
    rows = measure(n, count, BATCH, progress=lambda line: print(line, flush=True))
    print("\nµs per change (one record inserted or retracted):\n")
    print(table(rows, n, BATCH))


if __name__ == "__main__":
    main()
