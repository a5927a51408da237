"""final against v5, hierarchical MIN against a naive one, and arrangement memory under churn.

Three measurements for issue 4's performance questions, each one run on a
shared machine (read ratios, not microseconds):

1. ``final`` and ``v5`` on the same workloads at N = 100,000: count by key,
   join, reachability with ``iterate``: the initial load, and the median of
   one-record updates (insert one record, retract it again).
2. Retracting the current minimum of one group of N values: ``final``'s
   hierarchical ``min`` against ``reduce`` with a naive min on the same data.
3. ``final`` alone at N = 1,000 and N = 1,000,000: one-record updates to
   count by key, join, and MIN over one group of all N values.
4. An arranged collection of 1,000 live records updated over 10,000 versions
   (each version replaces one record): its size after the first version and
   at the end.

    python -m tests.bench.bench_final            # N = 100,000, and 1,000,000 for (3) (several minutes)
    python -m tests.bench.bench_final --quick    # N = 2,000
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from tests.harness import build_graph, stage_module
from tests.programs import reachability

UPDATES = 100
SEED = 7


def _settle(stage: Any, writers: list, reader: Any, graph: Any, version: int) -> None:
    for writer in writers:
        writer.send_frontier(stage.Version(version + 1))
    while reader.probe_frontier_less_than(stage.Version(version + 1)):
        graph.step()
    list(reader.drain())


def load_then_update(
    stage_name: str, program: Callable, initial: list[list], update: Callable[[int], tuple[int, Any]], updates: int
) -> tuple[float, float]:
    """``(load seconds, median seconds per update)``: ``update(i)`` names the input and record of update ``i``;
    it is inserted, and retracted by the next update."""
    stage = stage_module(stage_name)
    V, C = stage.Version, stage.Collection
    writers, reader, graph = build_graph(stage, program, len(initial))
    start = time.perf_counter()
    for writer, records in zip(writers, initial, strict=True):
        writer.send_data(V(0), C([(record, 1) for record in records]))
    _settle(stage, writers, reader, graph, 0)
    load = time.perf_counter() - start
    times = []
    for version in range(1, updates + 1):
        side, record = update((version + 1) // 2)
        start = time.perf_counter()
        writers[side].send_data(V(version), C([(record, 1 if version % 2 else -1)]))
        _settle(stage, writers, reader, graph, version)
        times.append(time.perf_counter() - start)
    return load, statistics.median(times)


def workloads(n: int) -> dict[str, tuple[Callable, list[list], Callable]]:
    rng = random.Random(SEED)
    keys = max(n // 10, 1)
    edges = [(rng.randrange(n // 4), rng.randrange(n // 4)) for _ in range(n)]
    return {
        "count by key": (lambda a: a.count(), [[(i % keys, i) for i in range(n)]], lambda i: (0, (i % keys, -i))),
        "join": (lambda a, b: a.join(b), [[(i, i) for i in range(n)], [(i, -i) for i in range(n)]],
                 lambda i: (0, ((i * 7919) % n, n + i))),
        "reachability": (reachability, [[edges[0][0]], edges], lambda i: (1, random_edge(n // 4, i))),
    }


def random_edge(nodes: int, i: int) -> tuple[int, int]:
    """The ``i``-th update's edge: random, but the same each time it is asked for, so it is retracted as inserted."""
    rng = random.Random(SEED * 1_000_003 + i)
    return rng.randrange(nodes), rng.randrange(nodes)


def compare_with_v5(n: int, updates: int) -> list[tuple]:
    rows = []
    for name, (program, initial, update) in workloads(n).items():
        results = {stage: load_then_update(stage, program, initial, update, updates) for stage in ("v5", "final")}
        rows.append((name, results["v5"], results["final"]))
        print(f"  measured {name}", flush=True)
    return rows


def naive_min(values: list) -> list:
    present = [value for value, multiplicity in values if multiplicity > 0]
    return [(min(present), 1)] if present else []


def retract_minimum(n: int) -> tuple[float, float]:
    """Seconds to retract the current minimum of one group of ``n`` values: hierarchical, then naive."""
    result = []
    for program in (lambda c: c.min(), lambda c: c.reduce(naive_min)):
        stage = stage_module("final")
        V, C = stage.Version, stage.Collection
        writers, reader, graph = build_graph(stage, program, 1)
        writers[0].send_data(V(0), C([(("group", value), 1) for value in range(n)]))
        _settle(stage, writers, reader, graph, 0)
        times = []
        for version in range(1, 6):  # retract the minimum five times over: 0, 1, 2, 3, 4
            start = time.perf_counter()
            writers[0].send_data(V(version), C([(("group", version - 1), -1)]))
            _settle(stage, writers, reader, graph, version)
            times.append(time.perf_counter() - start)
        result.append(statistics.median(times))
    return result[0], result[1]


def arrangement_memory(versions: int, live: int = 1_000) -> tuple[int, int]:
    """The arrangement's size after the first version and after ``versions`` versions of replacements."""
    stage = stage_module("final")
    V, C = stage.Version, stage.Collection
    (left, right), reader, graph = build_graph(stage, lambda a, b: a.join(b.arrange()), 2)
    arrange = next(operator for operator in graph._operators if type(operator).__name__ == "Arrange")
    current = {key: key for key in range(live)}
    right.send_data(V(0), C([((key, value), 1) for key, value in current.items()]))
    _settle(stage, [left, right], reader, graph, 0)
    first = arrange.arrangement.size()
    for version in range(1, versions):
        key = version % live
        right.send_data(V(version), C([((key, version), 1), ((key, current[key]), -1)]))
        current[key] = version
        _settle(stage, [left, right], reader, graph, version)
    return first, arrange.arrangement.size()


def scaling(sizes: tuple[int, int], updates: int) -> list[tuple[str, float, float]]:
    """Median µs per one-record update on final at two sizes: count by key (groups of 10), join, and MIN
    over one group holding every record (hierarchical, so log n per update)."""
    rows = []
    for name, program, initial, update in (
        ("count by key", lambda a: a.count(), lambda n: [[(i % max(n // 10, 1), i) for i in range(n)]],
         lambda n: lambda i: (0, (i % max(n // 10, 1), -i))),
        ("join", lambda a, b: a.join(b), lambda n: [[(i, i) for i in range(n)], [(i, -i) for i in range(n)]],
         lambda n: lambda i: (0, ((i * 7919) % n, n + i))),
        ("MIN of one group", lambda a: a.min(), lambda n: [[("all", i) for i in range(n)]],
         lambda n: lambda i: (0, ("all", -i))),
    ):
        costs = [load_then_update("final", program, initial(n), update(n), updates)[1] for n in sizes]
        rows.append((name, *costs))
        print(f"  measured {name}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 2,000, fewer versions")
    args = parser.parse_args()
    n, versions = (2_000, 500) if args.quick else (100_000, 10_000)
    rows = compare_with_v5(n, UPDATES)
    print(f"\n| workload (N={n:,}) | v5 load (s) | final load (s) | v5 µs/update | final µs/update | load ratio | "
          "update ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (v5_load, v5_update), (final_load, final_update) in rows:
        print(f"| {name} | {v5_load:.2f} | {final_load:.2f} | {v5_update * 1e6:,.0f} | {final_update * 1e6:,.0f} | "
              f"{v5_load / final_load:.2f} | {v5_update / final_update:.2f} |")
    big = n * 10 if not args.quick else n
    hierarchical, naive = retract_minimum(big)
    print(f"\nretracting the minimum of one group of {big:,} values: hierarchical {hierarchical * 1e3:.1f} ms, "
          f"naive {naive * 1e3:.1f} ms, ratio {naive / hierarchical:.1f}")
    sizes = (1_000, 1_000_000) if not args.quick else (200, 2_000)
    print(f"\n| final, one-record update | µs at N={sizes[0]:,} | µs at N={sizes[1]:,} | ratio |")
    print("|---|---:|---:|---:|")
    for name, small, large in scaling(sizes, UPDATES):
        print(f"| {name} | {small * 1e6:,.0f} | {large * 1e6:,.0f} | {large / small:.2f} |")
    first, last = arrangement_memory(versions)
    print(f"\narrangement of 1,000 live records: {first} entries after version 0, {last} after {versions:,} "
          f"versions (ratio {last / first:.2f})")


if __name__ == "__main__":
    main()
