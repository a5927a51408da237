"""The peer benchmark's workloads, generated once (seeded) into JSON files every engine reads.

Each workload is a query, its inputs at version 0, and a list of versions of
changes (``PROTOCOL.md`` beside this file gives the format and each query's
meaning). Inputs stay sets: a version retracts only records live before it,
and inserts only records not live, so every multiplicity is 0 or 1 and each
version's changes are already consolidated.

    python -m tests.bench.peers.workloads --out DIR --n 1000 [--only W1,W3]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SEED = 2026
UPDATES = 200
"""Versions of one record in and one out (W1, W2, W4, W5)."""
EDGE_UPDATES = 50
"""Versions of one edge out and one in (W3)."""
BATCH, BATCHES = 1_000, 20
"""W1b and W2b: 20 versions of 1,000 changes."""
KEYS = 1_000
"""W1's keys."""

UnversionedChange = tuple[str, object, int]
"""``(input, record, multiplicity)``: a change without its version (a version is a list of them)."""


class Live:
    """The live records of one input: random choice and removal in constant time (a list and its positions)."""

    def __init__(self, records: list) -> None:
        self.records = list(records)
        self._position = {record: i for i, record in enumerate(self.records)}

    def __contains__(self, record: object) -> bool:
        return record in self._position

    def __len__(self) -> int:
        return len(self.records)

    def add(self, record: object) -> None:
        self._position[record] = len(self.records)
        self.records.append(record)

    def remove(self, record: object) -> None:
        i = self._position.pop(record)
        last = self.records.pop()
        if last != record:
            self.records[i] = last
            self._position[last] = i

    def choice(self, rng: random.Random) -> object:
        return self.records[rng.randrange(len(self.records))]


@dataclass
class Workload:
    """One workload at one size: what the JSON file holds, with records as tuples (or ints)."""

    name: str
    query: str
    n: int
    inputs: dict[str, list]
    versions: list[list[UnversionedChange]]

    def as_json(self) -> dict:
        def plain(record: object) -> object:
            return list(record) if isinstance(record, tuple) else record

        return {
            "workload": self.name, "query": self.query, "n": self.n, "seed": SEED,
            "inputs": {name: [plain(record) for record in records] for name, records in self.inputs.items()},
            "versions": [[[name, plain(record), diff] for name, record, diff in changes] for changes in self.versions],
        }


def _replacing(rng: random.Random, live: Live, new: Iterator, name: str, versions: int,
               per_version: int) -> list[list[UnversionedChange]]:
    """``versions`` versions, each inserting ``per_version / 2`` new records from ``new`` and retracting as many
    records live before the version, chosen at random."""
    out = []
    for _ in range(versions):
        retracted = []
        for _ in range(per_version // 2):
            record = live.choice(rng)
            live.remove(record)
            retracted.append(record)
        inserted = []
        while len(inserted) < per_version // 2:
            record = next(new)
            if record not in retracted:  # in and out at one version would cancel: not a change
                live.add(record)
                inserted.append(record)
        out.append([(name, record, 1) for record in inserted] + [(name, record, -1) for record in retracted])
    return out


def _keyed(n: int, keys: int) -> Callable[[int], tuple[int, int]]:
    return lambda i: (i % keys, i)


def count(n: int, name: str = "W1", batched: bool = False) -> Workload:
    """W1: N records ``(i % 1000, i)`` counted by key; each version inserts a new record and retracts a live one."""
    rng = random.Random(f"{SEED}:{name}:{n}")
    record = _keyed(n, KEYS)
    live = Live(record(i) for i in range(n))
    initial = list(live.records)
    new = (record(i) for i in range(n, 10 * n + 10 * BATCH * BATCHES))
    versions, per_version = (BATCHES, BATCH) if batched else (UPDATES, 2)
    updates = _replacing(rng, live, new, "records", versions, per_version)
    return Workload(name, "count", n, {"records": initial}, updates)


def join(n: int, name: str = "W2", batched: bool = False) -> Workload:
    """W2: two inputs of N records ``(i % (N // 10), i)`` joined on the key; the updates change ``left`` only."""
    rng = random.Random(f"{SEED}:{name}:{n}")
    record = _keyed(n, max(1, n // 10))
    left = Live(record(i) for i in range(n))
    initial = {"left": list(left.records), "right": [record(i) for i in range(n)]}
    new = (record(i) for i in range(n, 10 * n + 10 * BATCH * BATCHES))
    versions, per_version = (BATCHES, BATCH) if batched else (UPDATES, 2)
    return Workload(name, "join", n, initial, _replacing(rng, left, new, "left", versions, per_version))


def _largest_component(nodes: int, edges: list[tuple[int, int]]) -> list[int]:
    """The nodes of the largest weakly connected component (union-find)."""
    parent = list(range(nodes))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for src, dst in edges:
        parent[find(src)] = find(dst)
    members: dict[int, list[int]] = {}
    for node in range(nodes):
        members.setdefault(find(node), []).append(node)
    return max(members.values(), key=len)


def reach(n: int) -> Workload:
    """W3: N nodes, 2N random directed edges, reachability from the node with most out-edges in the largest
    component; each version deletes a random edge and adds a new one."""
    rng = random.Random(f"{SEED}:W3:{n}")
    live = Live([])
    while len(live) < 2 * n:
        src, dst = rng.randrange(n), rng.randrange(n)
        if src != dst and (src, dst) not in live:
            live.add((src, dst))
    edges = list(live.records)
    out_degree = [0] * n
    for src, _ in edges:
        out_degree[src] += 1
    root = min(_largest_component(n, edges), key=lambda node: (-out_degree[node], node))

    def new_edges() -> Iterator[tuple[int, int]]:
        while True:
            src, dst = rng.randrange(n), rng.randrange(n)
            if src != dst and (src, dst) not in live:
                yield (src, dst)

    return Workload("W3", "reach", n, {"edges": edges, "roots": [root]},
                    _replacing(rng, live, new_edges(), "edges", EDGE_UPDATES, 2))


def minmax(n: int) -> Workload:
    """W4: one group of N distinct values (key 0); each version retracts the current minimum and inserts a new
    value, so a MIN that re-reads its group reads all N."""
    rng = random.Random(f"{SEED}:W4:{n}")
    values = rng.sample(range(10 * n), n)
    present = set(values)
    ordered = sorted(values, reverse=True)  # the minimum last; new values above it never become the minimum
    versions = []
    for _ in range(UPDATES):
        smallest = ordered.pop()
        present.discard(smallest)
        value = rng.randrange(10 * n)
        while value in present or value == smallest:
            value = rng.randrange(10 * n)
        present.add(value)
        if value < ordered[-1]:
            ordered.append(value)
        else:
            ordered.insert(_position(ordered, value), value)
        versions.append([("values", (0, value), 1), ("values", (0, smallest), -1)])
    return Workload("W4", "minmax", n, {"values": [(0, value) for value in values]}, versions)


def _position(descending: list[int], value: int) -> int:
    """Where ``value`` goes in a list sorted in descending order (binary search)."""
    low, high = 0, len(descending)
    while low < high:
        middle = (low + high) // 2
        if descending[middle] > value:
            low = middle + 1
        else:
            high = middle
    return low


PASSENGERS = (0, 1, 2, 3, 4, 5, 6)
PASSENGER_WEIGHTS = (3, 60, 15, 6, 4, 8, 4)
"""Most trips have one passenger, as in 004's taxi data."""


def taxi(n: int) -> Workload:
    """W5: N trips ``(trip_id, passenger_count, fare in cents, distance in tenths of a mile)``; each version
    corrects one trip's fare (its old row out, the corrected row in)."""
    rng = random.Random(f"{SEED}:W5:{n}")

    def fare() -> int:
        return -rng.randrange(1, 2_000) if rng.random() < 0.01 else rng.randrange(250, 8_000)  # 1% refunds

    live = Live(
        (trip, rng.choices(PASSENGERS, PASSENGER_WEIGHTS)[0], fare(), rng.randrange(1, 300)) for trip in range(n))
    initial = list(live.records)
    versions = []
    for _ in range(UPDATES):
        old = live.choice(rng)
        new = (old[0], old[1], fare(), old[3])
        while new == old:
            new = (old[0], old[1], fare(), old[3])
        live.remove(old)
        live.add(new)
        versions.append([("trips", new, 1), ("trips", old, -1)])
    return Workload("W5", "taxi", n, {"trips": initial}, versions)


WORKLOADS: dict[str, Callable[[int], Workload]] = {
    "W1": count,
    "W2": join,
    "W3": reach,
    "W4": minmax,
    "W5": taxi,
    "W1b": lambda n: count(n, "W1b", batched=True),
    "W2b": lambda n: join(n, "W2b", batched=True),
}
"""Every workload by name, as a function of N."""


def path(folder: Path, name: str, n: int) -> Path:
    return folder / f"{name}-{n}.json"


def write(folder: Path, name: str, n: int) -> Path:
    """Generate workload ``name`` at size ``n`` into ``folder`` unless it is there already; its path."""
    target = path(folder, name, n)
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        partial.write_text(json.dumps(WORKLOADS[name](n).as_json(), separators=(",", ":")))
        partial.rename(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="the folder to write into")
    parser.add_argument("--n", type=int, action="append", required=True, help="a size N (repeatable)")
    parser.add_argument("--only", help="comma-separated workloads, e.g. W1,W3 (default: all)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(WORKLOADS)
    for name in names:
        if name not in WORKLOADS:
            parser.error(f"unknown workload {name!r}: choose from {', '.join(WORKLOADS)}")
    for n in args.n:
        for name in names:
            print(write(args.out, name, n))


if __name__ == "__main__":
    main()
