"""final against v5, hierarchical MIN against a naive one, arrangement memory, and waiting versions.

Issue 4's performance questions, each measured in one run on a shared
machine (read ratios, not microseconds):

1. ``final`` and ``v5`` on the same workloads at N = 100,000: count by key,
   join, reachability with ``iterate``, and a graph with no operator at all
   (what the calls of one update cost by themselves). The two stages are
   measured side by side so that both see the same machine: their initial
   loads alternate (three each, the median reported), and then the one-record
   updates alternate between the two loaded graphs (insert a record, retract
   it again; the median reported). ``--plot`` draws the ratios.
2. Retracting the current minimum of one group of N values: ``final``'s
   hierarchical ``min`` against ``reduce`` with a naive min on the same data.
3. ``final`` alone at N = 1,000 and N = 1,000,000: one-record updates to
   count by key, join, and MIN over one group of all N values.
4. An arranged collection of 1,000 live records updated over 10,000 versions
   (each version replaces one record): its size after the first version and
   at the end.
5. A temporal filter whose retractions wait at 1,000 and at 100,000 future
   versions: what advancing the frontier by one version costs.

    python -m tests.bench.bench_final            # N = 100,000, and 1,000,000 for (3) (several minutes)
    python -m tests.bench.bench_final --plot     # the same, and tests/bench/final_vs_v5.png
    python -m tests.bench.bench_final --quick    # N = 2,000
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.harness import build_graph, stage_module
from tests.programs import reachability

UPDATES = 100
LOAD_REPEATS = 3
SEED = 7
TARGETS = {"load": 5, "update": 10}
"""Issue 4's targets for final against v5 at N = 100,000: 5x faster loads, 10x faster updates."""


def _settle(stage: Any, writers: list, reader: Any, graph: Any, version: int) -> None:
    for writer in writers:
        writer.send_frontier(stage.Version(version + 1))
    while reader.probe_frontier_less_than(stage.Version(version + 1)):
        graph.step()
    list(reader.drain())


class Loaded:
    """A stage's graph for ``program`` with ``initial`` loaded at version 0; ``load`` is how long that took.

    The objects alive before the load (another stage's loaded graph, say) are
    frozen while it runs (``gc.freeze``): Python's full garbage collections
    walk every object they track, so without that a load would also pay for
    walking the other graph, and the two stages' loads would not compare.
    """

    def __init__(self, stage_name: str, program: Callable, initial: list[list]) -> None:
        self.stage = stage_module(stage_name)
        V, C = self.stage.Version, self.stage.Collection
        self.writers, self.reader, self.graph = build_graph(self.stage, program, len(initial))
        gc.collect()
        gc.freeze()
        start = time.perf_counter()
        for writer, records in zip(self.writers, initial, strict=True):
            writer.send_data(V(0), C([(record, 1) for record in records]))
        _settle(self.stage, self.writers, self.reader, self.graph, 0)
        self.load = time.perf_counter() - start
        gc.unfreeze()

    def update(self, version: int, side: int, record: Any, multiplicity: int) -> float:
        """Seconds to send one record at ``version`` and step until the output has passed it."""
        V, C = self.stage.Version, self.stage.Collection
        start = time.perf_counter()
        self.writers[side].send_data(V(version), C([(record, multiplicity)]))
        _settle(self.stage, self.writers, self.reader, self.graph, version)
        return time.perf_counter() - start


def updates_of(update: Callable[[int], tuple[int, Any]], count: int) -> list[tuple[int, int, Any, int]]:
    """``(version, side, record, multiplicity)``: ``update(i)`` names the input and record of the ``i``-th
    update; it is inserted at an odd version and retracted at the next."""
    return [(version, *update((version + 1) // 2), 1 if version % 2 else -1) for version in range(1, count + 1)]


def workloads(n: int) -> dict[str, tuple[Callable, list[list], Callable]]:
    rng = random.Random(SEED)
    keys = max(n // 10, 1)
    edges = [(rng.randrange(n // 4), rng.randrange(n // 4)) for _ in range(n)]
    return {
        "count by key": (lambda a: a.count(), [[(i % keys, i) for i in range(n)]], lambda i: (0, (i % keys, -i))),
        "join": (lambda a, b: a.join(b), [[(i, i) for i in range(n)], [(i, -i) for i in range(n)]],
                 lambda i: (0, ((i * 7919) % n, n + i))),
        "reachability": (reachability, [[edges[0][0]], edges], lambda i: (1, random_edge(n // 4, i))),
        "no operator": (lambda a: a, [[(i, i) for i in range(n)]], lambda i: (0, (n + i, i))),
    }


def random_edge(nodes: int, i: int) -> tuple[int, int]:
    """The ``i``-th update's edge: random, but the same each time it is asked for, so it is retracted as inserted."""
    rng = random.Random(SEED * 1_000_003 + i)
    return rng.randrange(nodes), rng.randrange(nodes)


def compare_with_v5(n: int, updates: int, load_repeats: int = LOAD_REPEATS) -> list[tuple]:
    """Per workload: ``(name, (v5 load, v5 update), (final load, final update))``, medians, side by side."""
    rows = []
    stages = ("v5", "final")
    for name, (program, initial, update) in workloads(n).items():
        loads: dict[str, list[float]] = {stage: [] for stage in stages}
        loaded: dict[str, Loaded] = {}
        for _ in range(load_repeats):
            for stage in stages:
                loaded.pop(stage, None)  # free the previous graph before building the next
                loaded[stage] = Loaded(stage, program, initial)
                loads[stage].append(loaded[stage].load)
        times: dict[str, list[float]] = {stage: [] for stage in stages}
        for version, side, record, multiplicity in updates_of(update, updates):
            for stage in stages:
                times[stage].append(loaded[stage].update(version, side, record, multiplicity))
        rows.append((name, *((statistics.median(loads[s]), statistics.median(times[s])) for s in stages)))
        print(f"  measured {name}", flush=True)
    return rows


def naive_min(values: list) -> list:
    present = [value for value, multiplicity in values if multiplicity > 0]
    return [(min(present), 1)] if present else []


def retract_minimum(n: int) -> tuple[float, float]:
    """Seconds to retract the current minimum of one group of ``n`` values: hierarchical, then naive."""
    result = []
    for program in (lambda c: c.min(), lambda c: c.reduce(naive_min)):
        graph = Loaded("final", program, [[("group", value) for value in range(n)]])
        # Retract the minimum five times over: 0, 1, 2, 3, 4.
        times = [graph.update(version, 0, ("group", version - 1), -1) for version in range(1, 6)]
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
        costs = []
        for n in sizes:
            graph = Loaded("final", program, initial(n))
            costs.append(statistics.median(graph.update(*change) for change in updates_of(update(n), updates)))
        rows.append((name, *costs))
        print(f"  measured {name}", flush=True)
    return rows


def waiting_versions(pending: int, advances: int = 200) -> float:
    """Median seconds to advance the frontier by one version while ``pending`` retractions wait at later ones.

    Record ``i`` is valid from version ``i`` for ``pending`` versions (a temporal filter), so its
    retraction waits at ``i + pending``; a consolidation holds every one of them.
    """
    stage = stage_module("final")
    V, C = stage.Version, stage.Collection
    (writer,), reader, graph = build_graph(
        stage, lambda c: c.temporal_filter(lambda r: r[1], lambda r: r[1] + pending).consolidate(), 1)
    writer.send_data(V(0), C([((i, i), 1) for i in range(pending)]))
    times = []
    for version in range(1, advances + 1):
        start = time.perf_counter()
        writer.send_frontier(V(version))
        while reader.probe_frontier_less_than(V(version)):
            graph.step()
        list(reader.drain())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def plot(rows: list, n: int, path: Path) -> None:
    """Bars of final's speed-up over v5 per workload, for loads and updates, with issue 4's targets."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [name for name, _, _ in rows]
    ratios = {
        "initial load": [v5[0] / final[0] for _, v5, final in rows],
        "one-record update (median)": [v5[1] / final[1] for _, v5, final in rows],
    }
    figure, axis = plt.subplots(figsize=(8, 4.2), layout="constrained")
    width = 0.38
    for offset, ((label, values), color) in enumerate(zip(ratios.items(), ("#7aa6d8", "#2a5d9f"), strict=True)):
        positions = [i + (offset - 0.5) * width for i in range(len(names))]
        bars = axis.bar(positions, values, width, label=label, color=color)
        axis.bar_label(bars, fmt="%.1fx", fontsize=8)
    for what, style in (("load", ":"), ("update", "--")):
        axis.axhline(TARGETS[what], color="#b22222", linestyle=style, linewidth=1)
        axis.text(len(names) - 0.55, TARGETS[what], f"issue 4's {what} target ({TARGETS[what]}x)", color="#b22222",
                  ha="right", va="bottom", fontsize=8)
    axis.set_xticks(range(len(names)), names)
    axis.set_ylabel("v5 time / final time")
    axis.set_title(f"final against v5 at N = {n:,} (one run, measured side by side)")
    axis.legend(loc="upper left", fontsize=8)
    figure.savefig(path, dpi=110)
    print(f"\nplot written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 2,000, fewer versions")
    parser.add_argument("--plot", action="store_true", help="write tests/bench/final_vs_v5.png")
    args = parser.parse_args()
    n, versions = (2_000, 500) if args.quick else (100_000, 10_000)
    rows = compare_with_v5(n, UPDATES)
    print(f"\n| workload (N={n:,}) | v5 load (s) | final load (s) | v5 µs/update | final µs/update | load ratio | "
          "update ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (v5_load, v5_update), (final_load, final_update) in rows:
        print(f"| {name} | {v5_load:.3f} | {final_load:.3f} | {v5_update * 1e6:,.0f} | {final_update * 1e6:,.0f} | "
              f"{v5_load / final_load:.2f} | {v5_update / final_update:.2f} |")
    if args.plot:
        plot(rows, n, Path(__file__).with_name("final_vs_v5.png"))
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
    few, many = (1_000, 100_000) if not args.quick else (100, 2_000)
    cost_few, cost_many = waiting_versions(few), waiting_versions(many)
    print(f"\nadvancing the frontier one version with {few:,} retractions waiting: {cost_few * 1e6:.1f} µs; with "
          f"{many:,}: {cost_many * 1e6:.1f} µs (ratio {cost_many / cost_few:.2f})")


if __name__ == "__main__":
    main()
