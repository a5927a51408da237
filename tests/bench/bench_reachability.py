"""Reachability with ``iterate`` on v5: one edge update costs the same on small and large graphs.

A random graph of N edges over N / 4 nodes (so most nodes are reachable); the
root is the source of the first edge. After the
initial load, each update inserts one random edge and the next deletes it
again, and each is timed until the output's frontier passes its version. Such
an edge rarely changes which nodes are reachable, so an engine that does work
proportional to the change should take about as long at N = 100,000 as at
N = 1,000. The initial load is timed too, for scale. One run on a shared
machine: read the ratio, not the milliseconds.

    python -m tests.bench.bench_reachability            # N = 1,000 and 100,000
    python -m tests.bench.bench_reachability --quick    # N = 100 and 1,000
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from tests.harness import build_graph, stage_module
from tests.programs import reachability

SIZES = (1_000, 100_000)
UPDATES = 40
SEED = 2026
"""Fixed, so every run builds the same graphs and applies the same updates."""


def measure(stage_name: str, n: int, updates: int = UPDATES) -> tuple[float, float, int]:
    """``(load seconds, median seconds per update, nodes reached)`` for a graph of ``n`` edges."""
    stage = stage_module(stage_name)
    V, C = stage.Version, stage.Collection
    rng = random.Random(SEED)
    nodes = max(n // 4, 2)
    edges = [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(n)]
    (roots, edge_writer), reader, graph = build_graph(stage, reachability, 2)
    reached: dict = {}

    def settle(version: int) -> None:
        for writer in (roots, edge_writer):
            writer.send_frontier(V(version + 1))
        while reader.probe_frontier_less_than(V(version + 1)):
            graph.step()
        for message in reader.drain():
            if isinstance(message, stage.DataMessage):
                for node, multiplicity in message.collection:
                    reached[node] = reached.get(node, 0) + multiplicity

    start = time.perf_counter()
    roots.send_data(V(0), C([(edges[0][0], 1)]))
    edge_writer.send_data(V(0), C([(edge, 1) for edge in edges]))
    settle(0)
    load = time.perf_counter() - start
    times = []
    edge = None
    for version in range(1, updates + 1):
        if edge is None:
            edge, multiplicity = (rng.randrange(nodes), rng.randrange(nodes)), 1
        else:
            multiplicity = -1
        start = time.perf_counter()
        edge_writer.send_data(V(version), C([(edge, multiplicity)]))
        settle(version)
        times.append(time.perf_counter() - start)
        if multiplicity == -1:
            edge = None
    return load, statistics.median(times), sum(1 for m in reached.values() if m > 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 100 and 1,000")
    parser.add_argument("--stage", default="v5", help="the stage to measure (default v5)")
    args = parser.parse_args()
    sizes = (100, 1_000) if args.quick else SIZES
    results = []
    for n in sizes:
        results.append(measure(args.stage, n))
        print(f"  measured N={n:,}", flush=True)
    print(f"\n| stage | N edges | nodes reached | initial load (s) | ms per one-edge update (median of {UPDATES}) |")
    print("|---|---:|---:|---:|---:|")
    for n, (load, update, reached) in zip(sizes, results, strict=True):
        print(f"| {args.stage} | {n:,} | {reached:,} | {load:.2f} | {update * 1e3:.2f} |")
    ratio = results[1][1] / results[0][1]
    print(f"\nper-update ratio N={sizes[1]:,} / N={sizes[0]:,}: {ratio:.2f}")


if __name__ == "__main__":
    main()
