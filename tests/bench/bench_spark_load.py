"""The Spark pipeline at scale: the initial load, reading a log, and the partitioned mode against one process.

For a trips log of ``--rows`` rows (3 versions), one run measures:

- reading the log into records: through Arrow batches (``pipeline.rows``, what
  the pipeline does) against Spark ``Row`` objects (``collect()``);
- per trips query, ``final/``'s initial load (version 0 applied to an empty
  dataflow) against Spark SQL computing the query from scratch at version 0
  (the second of two runs, so Spark's plan is cached as in the pipeline);
- ``trips_by_distance``, the GROUP BY with thousands of keys, over all
  versions in one process against partitioned runs at P = 1 and 2.

Run it with ``.venv/bin/python -m tests.bench.bench_spark_load [--rows N]``
(about five minutes at the default 200,000 rows on 2 cores); the numbers are
one run's, on a shared machine: read the ratios.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from time import perf_counter

from final.spark import pipeline, truth
from final.spark.catalog import QUERIES, TABLES, queries_of
from final.spark.changelog import MULTIPLICITY, VERSION
from final.spark.incremental import IncrementalQuery, versions_of
from final.spark.partitioned import run_partitioned
from final.spark.session import spark_session


def timed(work):
    start = perf_counter()
    result = work()
    return perf_counter() - start, result


def main(argv: list[str] | None = None) -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--rows", type=int, default=200_000)
    arguments.add_argument("--partitions", default="1,2")
    options = arguments.parse_args(argv)
    spark = spark_session()
    folder = tempfile.mkdtemp(prefix="bench-spark-")
    paths = pipeline.make_logs(spark, "trips", os.path.join(folder, "trips"), rows=options.rows, versions=3)
    logs = pipeline.read_logs(spark, "trips", paths)
    log = logs["trips"]
    log.count()
    columns = [VERSION, *TABLES["trips"].names, MULTIPLICITY]
    arrow, updates = timed(lambda: pipeline.updates(logs))
    rows, _ = timed(lambda: log.select(*columns).collect())
    print(f"trips log: {len(updates):,} updates; read through Arrow {arrow:.1f} s, as Row objects {rows:.1f} s")
    batches = dict(versions_of(updates))
    print("\n| query | final/ initial load (s) | Spark SQL from scratch at version 0 (s) | ratio |")
    print("|---|---:|---:|---:|")
    for query in queries_of("trips"):
        load, _ = timed(lambda query=query: IncrementalQuery(query).apply(0, batches[0]))
        truth.from_scratch(spark, query, logs, 0)
        scratch, result = timed(lambda query=query: truth.from_scratch(spark, query, logs, 0))
        print(f"| {query.name} ({len(result):,} rows) | {load:.2f} | {scratch:.2f} | {load / scratch:.1f} |")
    query = QUERIES["trips_by_distance"]
    engine = IncrementalQuery(query)
    single, _ = timed(lambda: [engine.apply(version, batch) for version, batch in batches.items()])
    print(f"\n{query.name}, all versions: one process {single:.1f} s", end="")
    for count in (int(part) for part in options.partitions.split(",")):
        result = run_partitioned(spark, query, logs, count)
        print(f"; P = {count}: {result.seconds:.1f} s (slowest task in final/ "
              f"{max(result.task_seconds.values()):.1f} s)", end="")
    print()


if __name__ == "__main__":
    main()
