"""The peer benchmark's Python engines: final, the stages, plain dicts, and Spark SQL from scratch.

Each engine is an adapter as ``PROTOCOL.md`` describes it: it reads a
workload file, loads version 0, applies each version and runs until its
output is complete, and prints one JSON line with the times and the
checksum of everything its output emitted.

- ``final`` drives final/ through its public API: an input session per
  input, ``graph.run()``, and a reader on the output stream. It uses the
  operators a user would write (``count()``, which counts in place; ``aggregate``'s
  hierarchical MIN/MAX and in-place COUNT(DISTINCT); ``distinct_keys``).
- ``v2`` .. ``v5`` run document 002's operators (the conformance catalog's
  portable programs) through 002's API: ``send_data``, ``send_frontier``,
  step until the output's frontier passes the version. v2 has no versions:
  it is sent each version's changes and stepped until quiet.
- ``plain`` is dictionaries kept up to date by hand for each query, with no
  dataflow at all: the CPython floor. For reachability it runs a breadth-first
  search from scratch at every version (incremental reachability under
  deletions is a dataflow engine's job, not a dict's).
- ``spark`` recomputes each version from scratch with Spark SQL over the base
  table and the changes so far (W1, W2, W5), through the pipeline's session
  helper. It times the first ``SPARK_VERSIONS`` versions, then computes the
  last one for the checksum.

    python -m tests.bench.peers.engines final DIR/W1-1000.json
"""

from __future__ import annotations

import heapq
import json
import os
import sys
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from typing import Any

P = 2_147_483_647
"""The checksum's modulus (PROTOCOL.md): small enough that JavaScript numbers compute it exactly."""
SPARK_VERSIONS = 5
"""Versions Spark SQL recomputes and times; each costs the same whatever changed."""

UnversionedChange = tuple[str, Any, int]
"""``(input, record, multiplicity)``: a change without its version, which ``update`` is given beside a list of them."""


class Checksum:
    """The fold of every output change: the number of records and the sum of their hashes, modulo P."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0

    def add(self, record: Any, diff: int) -> None:
        self.add_all(((record, diff),))

    def add_all(self, changes: Any) -> None:
        """Fold ``(record, diff)`` pairs, or a dict of them: PROTOCOL.md's ``record_hash`` inlined, as this runs
        inside the timed updates of every Python engine and would otherwise cost them a call per output record."""
        count, total = self.count, self.total
        for record, diff in changes.items() if isinstance(changes, dict) else changes:
            h = 17
            for x in record if type(record) is tuple else (record,):
                h = (h * 1_000_003 + x % P) % P
            count += diff
            total += diff * h
        self.count, self.total = count, total % P

    def __str__(self) -> str:
        return f"{self.count}:{self.total}"


def rss_now() -> int:
    """This process's resident memory in bytes, after resetting its peak to it (``/proc/self/clear_refs``), so
    the peak the driver reads at exit is the load's and the updates', not the workload file's parsing."""
    with open("/proc/self/statm") as statm:
        rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    return rss


def version_zero(inputs: dict[str, list]) -> list[UnversionedChange]:
    """The inputs at version 0 as changes: every record once."""
    return [(name, record, 1) for name, records in inputs.items() for record in records]


def read_workload(path: str) -> dict:
    """The workload file, with every record as a tuple (or an int)."""
    with open(path) as source:
        workload = json.load(source)

    def record(value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    workload["inputs"] = {name: [record(r) for r in records] for name, records in workload["inputs"].items()}
    workload["versions"] = [[(name, record(r), diff) for name, r, diff in changes] for changes in workload["versions"]]
    return workload


# -- plain dicts: each query kept up to date by hand -------------------------------------


class Plain:
    """Base of the hand-written baselines: ``load`` is the first version of changes."""

    def __init__(self, checksum: Checksum) -> None:
        self.checksum = checksum

    def load(self, inputs: dict[str, list]) -> None:
        self.update(0, version_zero(inputs))

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        raise NotImplementedError


class PlainRows(Plain):
    """Queries with one output row per key: the rows of the keys a version touched are recomputed, and the
    old and new row folded into the checksum."""

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        touched = {}
        for _, record, diff in changes:
            key = record[self.key_position]
            if key not in touched:
                touched[key] = self.row(key)
            self.apply(key, record, diff)
        add = self.checksum.add
        for key, old in touched.items():
            new = self.row(key)
            if old != new:
                if old is not None:
                    add(old, -1)
                if new is not None:
                    add(new, 1)


class PlainCount(PlainRows):
    key_position = 0

    def __init__(self, checksum: Checksum) -> None:
        super().__init__(checksum)
        self.counts: Counter = Counter()

    def apply(self, key: Any, record: tuple, diff: int) -> None:
        self.counts[key] += diff

    def row(self, key: Any) -> tuple | None:
        count = self.counts.get(key, 0)
        return (key, count) if count else None


class Extremes:
    """A multiset of values with its least and greatest, by two heaps whose stale tops are dropped lazily."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.low: list = []
        self.high: list = []

    def add(self, value: Any, diff: int) -> None:
        count = self.counts[value] + diff
        if count:
            self.counts[value] = count
        else:
            del self.counts[value]
        if diff > 0 and count == diff:  # a value new to the multiset
            heapq.heappush(self.low, value)
            heapq.heappush(self.high, -value)

    def least(self) -> Any:
        while self.low[0] not in self.counts:
            heapq.heappop(self.low)
        return self.low[0]

    def greatest(self) -> Any:
        while -self.high[0] not in self.counts:
            heapq.heappop(self.high)
        return -self.high[0]


class PlainMinMax(PlainRows):
    key_position = 0

    def __init__(self, checksum: Checksum) -> None:
        super().__init__(checksum)
        self.groups: defaultdict = defaultdict(Extremes)

    def apply(self, key: Any, record: tuple, diff: int) -> None:
        self.groups[key].add(record[1], diff)

    def row(self, key: Any) -> tuple | None:
        group = self.groups.get(key)
        return (key, group.least(), group.greatest()) if group is not None and group.counts else None


class PlainTaxi(PlainRows):
    """004's MIN(fare), MAX(fare), COUNT(DISTINCT distance) by passenger count."""

    key_position = 1

    def __init__(self, checksum: Checksum) -> None:
        super().__init__(checksum)
        self.fares: defaultdict = defaultdict(Extremes)
        self.distances: defaultdict = defaultdict(Counter)

    def apply(self, key: Any, record: tuple, diff: int) -> None:
        self.fares[key].add(record[2], diff)
        distances = self.distances[key]
        distances[record[3]] += diff
        if not distances[record[3]]:
            del distances[record[3]]

    def row(self, key: Any) -> tuple | None:
        fares = self.fares.get(key)
        if fares is None or not fares.counts:
            return None
        return (key, fares.least(), fares.greatest(), len(self.distances[key]))


class PlainJoin(Plain):
    """Both inputs indexed by key; a change meets the other side's values under its key."""

    def __init__(self, checksum: Checksum) -> None:
        super().__init__(checksum)
        self.sides: dict[str, defaultdict] = {"left": defaultdict(Counter), "right": defaultdict(Counter)}

    def load(self, inputs: dict[str, list]) -> None:
        self.update(0, [("right", record, 1) for record in inputs["right"]])  # the first side meets nothing
        self.update(0, [("left", record, 1) for record in inputs["left"]])

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        add = self.checksum.add
        for side, (key, value), diff in changes:
            other = self.sides["right" if side == "left" else "left"].get(key, {})
            for other_value, count in other.items():
                add((key, value, other_value) if side == "left" else (key, other_value, value), diff * count)
            values = self.sides[side][key]
            values[value] += diff
            if not values[value]:
                del values[value]


class PlainReach(Plain):
    """Adjacency kept by hand; the reached set found by breadth-first search at every version."""

    def __init__(self, checksum: Checksum) -> None:
        super().__init__(checksum)
        self.successors: defaultdict = defaultdict(set)
        self.roots: set = set()
        self.reached: set = set()

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        for name, record, diff in changes:
            if name == "roots":
                (self.roots.add if diff > 0 else self.roots.discard)(record)
            elif diff > 0:
                self.successors[record[0]].add(record[1])
            else:
                self.successors[record[0]].discard(record[1])
        reached = set(self.roots)
        queue = deque(reached)
        while queue:
            for node in self.successors.get(queue.popleft(), ()):
                if node not in reached:
                    reached.add(node)
                    queue.append(node)
        self.checksum.add_all([(node, 1) for node in reached - self.reached])
        self.checksum.add_all([(node, -1) for node in self.reached - reached])
        self.reached = reached


PLAIN: dict[str, Callable[[Checksum], Plain]] = {
    "count": PlainCount, "join": PlainJoin, "reach": PlainReach, "minmax": PlainMinMax, "taxi": PlainTaxi}


# -- the dataflow programs: the same query for final and the stages ---------------------------


def _portable(query: str) -> Callable[..., Any]:
    """The query with document 002's operators only, as every stage from v2 has them."""
    from final.conformance import catalog

    def minmax(values: Any) -> Any:
        return values.reduce(
            lambda group: [((min(v for v, m in group if m > 0), max(v for v, m in group if m > 0)), 1)]
        ).map(lambda pair: (pair[0], *pair[1]))

    return {
        "count": catalog.count_by_key,
        "join": lambda left, right: catalog.join(left, right).map(lambda pair: (pair[0], *pair[1])),
        "reach": lambda edges, roots: catalog.reachability(roots, edges),
        "minmax": minmax,
        "taxi": lambda trips: catalog.min_max_count_distinct(trips.map(lambda trip: (trip[1], trip[2], trip[3]))),
    }[query]


def _final(query: str) -> Callable[..., Any]:
    """The query as a user of final writes it: ``count()``, ``aggregate`` (hierarchical MIN/MAX), ``distinct_keys``."""
    from final.conformance import catalog

    def minmax(values: Any) -> Any:
        both = {"max": ("max", lambda pair: pair[1]), "min": ("min", lambda pair: pair[1])}
        return values.aggregate(lambda pair: pair[0], both).map(lambda row: (row[0], row[1][1][1], row[1][0][1]))

    return {
        "count": lambda records: records.count(),
        "join": lambda left, right: left.join(right).map(lambda pair: (pair[0], *pair[1])),
        "reach": lambda edges, roots: catalog.program_named("reachability").final(roots, edges),
        "minmax": minmax,
        "taxi": lambda trips: catalog.program_named("min_max_count_distinct").final(
            trips.map(lambda trip: (trip[1], trip[2], trip[3]))),
    }[query]


class Final:
    """final/ through its public API: input sessions, ``graph.run()``, a reader on the output."""

    def __init__(self, checksum: Checksum, query: str, inputs: list[str]) -> None:
        from final import DataMessage, GraphBuilder

        self.checksum, self._data = checksum, DataMessage
        builder = GraphBuilder(0)
        streams, sessions = zip(*(builder.new_session(name) for name in inputs), strict=True)
        self.sessions = dict(zip(inputs, sessions, strict=True))
        self.reader = _final(query)(*streams).connect_reader()
        self.graph = builder.finalize()

    def load(self, inputs: dict[str, list]) -> None:
        for name, records in inputs.items():
            insert = self.sessions[name].insert
            for record in records:
                insert(record)
        self._finish(1)

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        sessions = self.sessions
        for name, record, diff in changes:
            sessions[name].update(record, diff)
        self._finish(version + 1)

    def _finish(self, next_version: int) -> None:
        for session in self.sessions.values():
            session.advance_to(next_version)
        self.graph.run()
        for message in self.reader.drain():
            if type(message) is self._data:
                self.checksum.add_all(message.collection.updates)


class Stage:
    """A stage from v2 through 002's API. From v3: one difference collection per input at each version, then
    the frontier past it, stepping until the output's frontier passes the version. v2 has no versions: every
    input gets one collection per version (binary operators pair them by position), stepping until the output
    has a message."""

    def __init__(self, checksum: Checksum, stage_name: str, query: str, inputs: list[str]) -> None:
        from tests.harness import build_graph, stage_module

        self.checksum, self.stage = checksum, stage_module(stage_name)
        self.versioned = stage_name != "v2"
        writers, self.reader, self.graph = build_graph(self.stage, _portable(query), len(inputs))
        self.writers = dict(zip(inputs, writers, strict=True))

    def load(self, inputs: dict[str, list]) -> None:
        self.update(0, version_zero(inputs))

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        stage, reader, graph = self.stage, self.reader, self.graph
        by_input: defaultdict = defaultdict(list)
        for name, record, diff in changes:
            by_input[name].append((record, diff))
        if not self.versioned:
            for name, writer in self.writers.items():
                writer.send_data(stage.Collection(by_input[name]))
            while reader.is_empty():
                graph.step()
            for collection in reader.drain():
                self.checksum.add_all(collection)
            return
        for name, writer in self.writers.items():
            writer.send_data(stage.Version(version), stage.Collection(by_input[name]))
            writer.send_frontier(stage.Version(version + 1))
        while reader.probe_frontier_less_than(stage.Version(version + 1)):
            graph.step()
        for message in reader.drain():
            if isinstance(message, stage.DataMessage):
                self.checksum.add_all(message.collection)


STAGES = ("v2", "v3", "v4", "v5")
UNSUPPORTED = {
    ("v2", "reach"): "v2 has no loops (iterate arrives in v4)",
    ("v3", "reach"): "v3 has no loops (iterate arrives in v4)",
    ("v4", "reach"): "v4's loops are wrong once a version retracts (002's documented limitation; fixed in v5)",
}
"""The stage and query pairs that cannot run, and why."""


def make_engine(engine: str, checksum: Checksum, query: str, inputs: list[str]) -> Any:
    """The adapter object for ``engine``, or a string saying why it cannot run ``query``."""
    if engine == "plain":
        return PLAIN[query](checksum)
    if engine == "final":
        return Final(checksum, query, inputs)
    if engine == "spark":
        from tests.bench.peers.spark import Spark, unsupported

        return unsupported(query) or Spark(checksum, query, inputs)
    if engine in STAGES:
        return UNSUPPORTED.get((engine, query)) or Stage(checksum, engine, query, inputs)
    raise SystemExit(f"unknown engine {engine!r}: choose from plain, final, spark, {', '.join(STAGES)}")


def run(engine_name: str, path: str) -> dict:
    """Run one engine on one workload file as PROTOCOL.md says; the JSON line's fields."""
    workload = read_workload(path)
    checksum = Checksum()
    engine = make_engine(engine_name, checksum, workload["query"], list(workload["inputs"]))
    if isinstance(engine, str):
        return {"unsupported": engine}
    rss = rss_now()
    start = time.perf_counter()
    engine.load(workload["inputs"])
    load = time.perf_counter() - start
    latencies = []
    timed = getattr(engine, "timed_versions", len(workload["versions"]))
    for version, changes in enumerate(workload["versions"][:timed], 1):
        start = time.perf_counter()
        engine.update(version, changes)
        latencies.append(time.perf_counter() - start)
    if hasattr(engine, "finish"):  # an engine that times some versions only applies the rest untimed
        engine.finish(workload["versions"][timed:])
    return {"load_s": load, "latencies": latencies, "rss_before_load": rss, "checksum": str(checksum)}


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m tests.bench.peers.engines ENGINE WORKLOAD.json")
    print(json.dumps(run(sys.argv[1], sys.argv[2])))


if __name__ == "__main__":
    main()
