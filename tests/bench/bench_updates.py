"""Per-update cost must not grow with the data: single-record changes at N = 1,000 and N = 100,000.

For each incremental stage and workload, load N records, then apply one-record
updates and time them. The number that matters is the ratio of the per-update
cost at the large N to the cost at the small N: near 1 means the work follows
the change, not the data. Timings are of one run on a shared machine, so read
ratios, not absolute numbers; nothing here is a pass/fail threshold.

Workloads (records are ``(key, value)`` pairs of ints):
- ``count``: N records over N / 10 keys, counted by key; an update inserts one
  record under an existing key, and the next retracts it again, so the data
  keeps its size however many updates run. Every stage up to v3 counts with the general
  ``reduce``, which recomputes the touched key from its values, so the group
  size is held at 10 for every N: the claim is that cost does not grow with the
  number of keys (in-place counting arrives in final/).
- ``join``: N records on each side with distinct keys, joined; an update
  inserts (or, every second one, retracts) one record on the left under an
  existing key: one output record each.

v1 processes a whole sequence in one call, so its per-update cost is
(time with 20,000 updates - time of the load alone) / 20,000, each the best of three runs. v2 and v3 time
each update (send, step, read) and report the median.

    python -m tests.bench.bench_updates            # the full run, writes tests/bench/updates.png
    python -m tests.bench.bench_updates --quick    # small sizes, no plot
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from tests.harness import build_graph, stage_module

STAGES = ("v1", "v2", "v3")
SIZES = (1_000, 100_000)
UPDATES = 200
GROUP_SIZE = 10
V1_UPDATES_FACTOR = 100
"""v1 times its updates as one block beside a load of up to 100,000 records, whose timing
varies by milliseconds run to run; 20,000 updates take long enough to stand out from that."""


def load_and_updates(workload: str, n: int, updates: int) -> tuple[list, list, list]:
    """Initial left and right records, and the one-record left updates ``(record, multiplicity)``."""
    keys = max(n // GROUP_SIZE, 1) if workload == "count" else n
    left = [(i % keys, i) for i in range(n)]
    right = [] if workload == "count" else [(i, -i) for i in range(n)]
    inserted = [((i * 7919) % keys, n + i) for i in range(0, updates, 2)]
    changes = [(record, multiplicity) for record in inserted for multiplicity in (1, -1)][:updates]
    return left, right, changes


def program(workload: str) -> Callable[..., Any]:
    return (lambda a, b: a.count()) if workload == "count" else (lambda a, b: a.join(b))


def per_update_v1(stage: Any, workload: str, n: int, updates: int) -> list[float]:
    left, right, changes = load_and_updates(workload, n, updates)
    C, S = stage.Collection, stage.DifferenceSequence
    load = [C([(r, 1) for r in left])], [C([(r, 1) for r in right])]
    with_updates = load[0] + [C([change]) for change in changes], load[1]
    f = program(workload)

    def timed(sequences: tuple) -> tuple[float, Any]:
        start = time.perf_counter()
        output = f(S(sequences[0]), S(sequences[1]))
        return time.perf_counter() - start, output

    # The best of three runs of each: the difference of two large timings is noisy.
    base = min(timed(load)[0] for _ in range(3))
    total, output = min((timed(with_updates) for _ in range(3)), key=lambda run: run[0])
    check(workload, n, changes[-1], output[-1].as_dict())
    return [max(total - base, 0.0) / updates]


def per_update_graph(stage: Any, workload: str, n: int, updates: int) -> list[float]:
    left, right, changes = load_and_updates(workload, n, updates)
    C = stage.Collection
    versioned = hasattr(stage, "Version")
    (write_a, write_b), reader, graph = build_graph(stage, program(workload), 2)

    def send(version: int, left_updates: list, right_updates: list) -> list:
        if versioned:
            for writer, updates in ((write_a, left_updates), (write_b, right_updates)):
                writer.send_data(stage.Version(version), C(updates))
                writer.send_frontier(stage.Version(version + 1))
            while reader.probe_frontier_less_than(stage.Version(version + 1)):
                graph.step()
            return [m.collection for m in reader.drain() if isinstance(m, stage.DataMessage)]
        write_a.send_data(C(left_updates))
        write_b.send_data(C(right_updates))
        graph.step()
        return list(reader.drain())

    send(0, [(r, 1) for r in left], [(r, 1) for r in right])
    times = []
    for version, change in enumerate(changes, start=1):
        start = time.perf_counter()
        outputs = send(version, [change], [])
        times.append(time.perf_counter() - start)
    last = {}
    for output in outputs:
        last.update(output.as_dict())
    check(workload, n, changes[-1], last)
    return times


def check(workload: str, n: int, update: tuple, output: dict) -> None:
    """The last update must show in the last output difference: proof the timed work was done."""
    (key, value), multiplicity = update
    if workload == "count":
        found = any(record[0] == key and m > 0 for record, m in output.items())
    else:
        found = output.get((key, (value, -key))) == multiplicity
    if not found:
        raise AssertionError(f"{workload} at N={n}: the last update {update} left no trace in the output {output}")


def measure(stage_name: str, workload: str, n: int, updates: int = UPDATES) -> float:
    """Median seconds per one-record update."""
    stage = stage_module(stage_name)
    if stage_name == "v1":
        # One timing of many updates, less one of the load: enough updates keep the difference above the noise.
        return statistics.median(per_update_v1(stage, workload, n, updates * V1_UPDATES_FACTOR))
    return statistics.median(per_update_graph(stage, workload, n, updates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 1,000, 20 updates, no plot")
    args = parser.parse_args()
    sizes, updates = ((100, 1_000), 20) if args.quick else (SIZES, UPDATES)
    rows = []
    for workload in ("count", "join"):
        for stage_name in STAGES:
            costs = [measure(stage_name, workload, n, updates) for n in sizes]
            rows.append((workload, stage_name, costs))
            print(f"  measured {workload} on {stage_name}", flush=True)
    small, large = sizes
    print(f"\n| workload | stage | µs/update at N={small:,} | µs/update at N={large:,} | ratio |")
    print("|---|---|---:|---:|---:|")
    for workload, stage_name, (a, b) in rows:
        ratio = f"{b / a:.2f}" if a > 0 else "n/a"
        print(f"| {workload} | {stage_name} | {a * 1e6:,.1f} | {b * 1e6:,.1f} | {ratio} |")
    if not args.quick:
        plot(rows, sizes)


def plot(rows: list, sizes: tuple) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    labels = [f"{workload}\n{stage}" for workload, stage, _ in rows]
    positions = range(len(rows))
    for offset, (size, index) in zip((-0.2, 0.2), ((sizes[0], 0), (sizes[1], 1)), strict=True):
        axis.bar([p + offset for p in positions], [costs[index] * 1e6 for _, _, costs in rows], 0.4,
                 label=f"N = {size:,}")
    axis.set_xticks(list(positions), labels)
    axis.set_ylabel("µs per one-record update (median)")
    axis.set_title(f"One-record update cost at N = {sizes[0]:,} and N = {sizes[1]:,} (one run)")
    axis.legend()
    figure.tight_layout()
    path = "tests/bench/updates.png"
    figure.savefig(path, dpi=110)
    print(f"\nplot written to {path}")


if __name__ == "__main__":
    main()
