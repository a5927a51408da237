"""The six built-in queries compiled from SQL against the same queries hand-built with final/'s stream API.

For each data set's change logs (the pipeline's generator, ``--rows`` rows
in the main table, ``--versions`` versions), both dataflows of each query
apply the same versions in one process, side by side: the initial load
(version 0), then every later version, alternating which side goes first.
The ratio is compiled over hand-built, for the load and for the median
version after it (issue 31 asks for the update within 1.5x). Both results
are compared at every version, as a check that they are the same query.

Run it with ``.venv/bin/python -m tests.bench.bench_sql [--rows N] [--versions V]``; the numbers are one run's,
on a shared machine: read the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from time import perf_counter

from final.spark import pipeline
from final.spark.incremental import IncrementalQuery, versions_of
from final.spark.session import spark_session
from final.spark.tables_and_queries import DATASETS, HAND_BUILT, QUERIES, queries_of


def main(argv: list[str] | None = None) -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--rows", type=int, default=200_000)
    arguments.add_argument("--versions", type=int, default=24)
    options = arguments.parse_args(argv)
    spark = spark_session()
    folder = tempfile.mkdtemp(prefix="bench-sql-")
    print(f"{options.rows:,} rows in each data set's main table, {options.versions} versions\n")
    print("| query | load: compiled / hand-built | per version after the load: compiled (ms) | hand-built (ms) "
          "| ratio |")
    print("|---|---:|---:|---:|---:|")
    for dataset in DATASETS:
        paths = pipeline.make_logs(spark, dataset, os.path.join(folder, dataset), rows=options.rows,
                                   versions=options.versions)
        batches = list(versions_of(pipeline.updates(pipeline.read_logs(spark, dataset, paths))))
        for query in queries_of(dataset):
            print(row(query.name, batches), flush=True)
    spark.stop()


def row(name: str, batches: list) -> str:
    """One table row: both dataflows of ``name`` over ``batches``, timed version by version."""
    compiled, hand = IncrementalQuery(QUERIES[name]), IncrementalQuery(HAND_BUILT[name])
    seconds: dict[str, list[float]] = {"compiled": [], "hand": []}
    for number, (version, batch) in enumerate(batches):
        sides = [("compiled", compiled), ("hand", hand)]
        for side, engine in sides if number % 2 == 0 else reversed(sides):
            start = perf_counter()
            engine.apply(version, batch)
            seconds[side].append(perf_counter() - start)
        if compiled.snapshot != hand.snapshot:
            raise AssertionError(f"{name}: the compiled and hand-built results differ at version {version}")
    load = seconds["compiled"][0] / seconds["hand"][0]
    after = {side: statistics.median(times[1:]) for side, times in seconds.items()}
    return (f"| {name} | {load:.2f} | {after['compiled'] * 1e3:.2f} | {after['hand'] * 1e3:.2f} "
            f"| {after['compiled'] / after['hand']:.2f} |")


if __name__ == "__main__":
    main()
