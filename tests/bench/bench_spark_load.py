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

With ``--follow N,N,...`` it measures ``follow`` instead, for a trips Delta
table of each size (4 versions, then 3 more commits): in a fresh process
each time (so its memory is the follow's own), the first micro-batch (the
initial load, every query built from nothing), then a restart (the inputs
read back from the table as of the applied version), then one micro-batch per
appended commit, as a live follow takes commits that land seconds apart:
its seconds, and the bytes it wrote to the checkpoint; and the driver's
resident memory after it (``VmRSS``, and its peak ``VmHWM``) per input row.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from time import perf_counter

from final.spark import pipeline, truth
from final.spark.changelog import MULTIPLICITY, VERSION
from final.spark.incremental import IncrementalQuery, versions_of
from final.spark.partitioned import run_partitioned
from final.spark.session import spark_session
from final.spark.tables_and_queries import QUERIES, TABLES, queries_of


def timed(work):
    start = perf_counter()
    result = work()
    return perf_counter() - start, result


def main(argv: list[str] | None = None) -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--rows", type=int, default=200_000)
    arguments.add_argument("--partitions", default="1,2")
    arguments.add_argument("--follow", metavar="N,N,...", help="measure follow at these sizes instead")
    arguments.add_argument("--follow-child", nargs=3, metavar=("LOGS", "OUT", "PHASE"), help=argparse.SUPPRESS)
    options = arguments.parse_args(argv)
    if options.follow_child:
        follow_child(*options.follow_child)
        return
    if options.follow:
        follow_cost([int(size) for size in options.follow.split(",")])
        return
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


def memory() -> dict[str, int]:
    """This process's resident memory now and at its peak, in bytes (Linux's /proc)."""
    found = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0]) * 1024
    return found


def checkpoint_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(parent, name)) for parent, _, names in os.walk(folder)
               for name in names)


def follow_child(logs: str, out: str, phase: str) -> None:
    """One follow process: ``load`` takes every commit as one micro-batch; ``restart`` restores and then takes
    each commit not bound yet as a micro-batch of its own. Prints a JSON line of what it measured."""
    import json

    from final.spark import sources
    from final.spark.follow import Follower

    spark = spark_session()
    follower = Follower(spark, "trips", logs, out, os.path.join(out, "_checkpoint"), log=lambda line: None)
    folder = os.path.join(logs, "trips")
    restart, _ = timed(follower.restore)
    commits = sources.commits_between(folder, "trips", follower.newest, sources.newest_commits(folder, "trips"))
    batches = [commits] if phase == "load" else [[commit] for commit in commits]
    seconds, written = [], []
    for batch in batches:
        before = checkpoint_bytes(follower.state)
        took, _ = timed(lambda batch=batch: (follower.take(batch), follower.advance()))
        seconds.append(took)
        written.append(checkpoint_bytes(follower.state) - before)
    print(json.dumps({"restart": restart, "seconds": seconds, "written": written, **memory()}))
    spark.stop()


def _child(logs: str, out: str, phase: str) -> dict:
    """``follow_child`` in a process of its own; what it measured."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "tests.bench.bench_spark_load", "--follow-child", logs, out, phase],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def follow_cost(sizes: list[int]) -> None:
    """The follow's cost per micro-batch and per input row at each size (see the module's docstring)."""
    import shutil

    from final.spark import datasets

    print("| trips | first micro-batch (s) | restart (s) | per appended commit (s) | checkpoint written per "
          "commit (bytes) | driver RSS after (bytes/row) | peak (bytes/row) |")
    print("|---:|---:|---:|---|---|---:|---:|")
    spark = spark_session()
    for rows in sizes:
        folder = tempfile.mkdtemp(prefix="bench-follow-")
        logs, out = os.path.join(folder, "logs"), os.path.join(folder, "out")
        pipeline.write_delta(datasets.generate(spark, "trips", rows), os.path.join(logs, "trips"), versions=4)

        load = _child(logs, out, "load")
        pipeline.append_logs(spark, "trips", os.path.join(logs, "trips"), 3)
        live = _child(logs, out, "restart")
        print(f"| {rows:,} | {load['seconds'][0]:.2f} | {live['restart']:.2f} | "
              f"{', '.join(f'{took:.3f}' for took in live['seconds'])} | "
              f"{', '.join(str(size) for size in live['written'])} | {live['VmRSS'] / rows:,.0f} | "
              f"{max(load['VmHWM'], live['VmHWM']) / rows:,.0f} |", flush=True)
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
