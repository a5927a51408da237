"""State on the executors against the driver's follow: first load, a commit in a live follow, restart after
kill -9, peak RSS.

For a trips Delta table of ``--rows`` rows (4 versions), in one run, the
four trips queries are followed by each of the two commands, each over its
own copy of the table:

- ``follow``: today's follow (``python -m final.spark follow``), every
  query's state in the Python driver;
- ``executors``: ``python -m final.spark follow --state executors``, each
  GROUP BY's state in Spark's state store on the executors.

For each: the first load (``--available-now``, every commit there, wall
clock from the process's start to its exit); a live follow (a micro-batch
a second), started, sees a commit land (``generate --append 1``, the same
commits for both) and, once it has applied it, another: the seconds from
the second being there to its output committed; that live follow
SIGKILLed (with its JVM), then a restart with no new commit, until caught
up (``--available-now`` again, start to exit). Each ``--available-now``
process's peak resident memory (``VmHWM``) is read just before it exits:
the Python driver's, and the JVM's. Beside them, one warm Spark SQL pass of
the four queries from scratch over the table's last version (in this
process's session), and the bytes each command keeps in its checkpoint.

    .venv/bin/python -m tests.bench.bench_executors [--rows 200000]

The machine is shared; one run's numbers: read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2"]


def command(mode: str, logs: str, out: str, live: bool) -> list[str]:
    when = ["--trigger-seconds", "1"] if live else ["--available-now"]
    state = "driver" if mode == "follow" else "executors"
    return ["final.spark", "follow", "--state", state, "--logs", logs, "--out", out, *when, *SETTINGS]


def peak(pid: int) -> int:
    """The peak resident memory of process ``pid`` so far, in bytes (Linux's ``VmHWM``); 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def child(module: str, arguments: list[str]) -> None:
    """Run a command line in this process, then print a JSON line: its exit status and the peak memory of this
    driver and of its JVM."""
    import runpy

    status = 0
    sys.argv = [module, *arguments]
    try:
        runpy.run_module(module, run_name="__main__")
    except SystemExit as exit_:
        status = exit_.code or 0
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    jvm = peak(gateway.proc.pid) if gateway is not None and getattr(gateway, "proc", None) is not None else 0
    print(json.dumps({"status": status, "driver": peak(os.getpid()), "jvm": jvm}), flush=True)


def measured(mode: str, logs: str, out: str) -> dict:
    """One ``--available-now`` run of ``mode`` in a process of its own: seconds, exit status and peak memory."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tests.bench.bench_executors", "--child",
                           *command(mode, logs, out, live=False)], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines or json.loads(lines[-1])["status"] != 0:
        raise RuntimeError(f"{mode} failed: {done.stdout[-2000:]} {done.stderr[-2000:]}")
    return {"seconds": seconds, **json.loads(lines[-1])}


def caught_up(logs: str, out: str) -> bool:
    from final.spark import delta
    from final.spark.follow import applied_version

    last = delta.version(os.path.join(logs, "trips", "trips"))
    return applied_version(os.path.join(out, "_checkpoint"), "trips") == last


def live_commit(spark, mode: str, logs: str, out: str) -> float:
    """A live follow of ``mode``, running: a commit lands, and once it has applied it, another; the seconds from
    the second being there to its output committed. The live follow is then SIGKILLed, with its JVM."""
    from final.spark import pipeline

    live = subprocess.Popen([sys.executable, "-m", *command(mode, logs, out, live=True)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(2):  # the first commit waits for the follow to start; the second is measured
            pipeline.append_logs(spark, "trips", os.path.join(logs, "trips"), 1)
            landed = time.perf_counter()
            wait(lambda: caught_up(logs, out), live)
        return time.perf_counter() - landed
    finally:
        os.killpg(live.pid, signal.SIGKILL)
        live.wait()


def wait(done, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 1800
    while not done() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if not done():
        raise RuntimeError(f"the live follow did not catch up (exit status {process.poll()})")


def size(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(parent, name)) for parent, _, names in os.walk(folder) for name in names)


def scratch(logs: str) -> float:
    """One warm Spark SQL pass of the four trips queries over the table's last version, in seconds."""
    from final.spark import delta
    from final.spark.follow import Bound, tables_as_bound
    from final.spark.session import spark_session
    from final.spark.tables_and_queries import queries_of
    from final.spark.truth import over

    spark = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    folder = os.path.join(logs, "trips")
    last = delta.version(os.path.join(folder, "trips"))
    tables = tables_as_bound(spark, folder, "trips", [Bound("trips", n, n, n) for n in range(last + 1)], last)
    for query in queries_of("trips"):
        over(spark, query, tables)
    started = time.perf_counter()
    for query in queries_of("trips"):
        over(spark, query, tables)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--rows", type=int, default=200_000)
    arguments.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    options = arguments.parse_args(argv)
    if options.child:
        child(options.child[0], options.child[1:])
        return
    from final.spark import datasets, pipeline
    from final.spark.session import spark_session

    folder = tempfile.mkdtemp(prefix="bench-executors-")
    spark = spark_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    generated = os.path.join(folder, "generated")
    pipeline.write_delta(datasets.generate(spark, "trips", options.rows), os.path.join(generated, "trips"),
                         versions=4)
    modes = ("follow", "executors")
    logs = {mode: os.path.join(folder, f"logs-{mode}") for mode in modes}
    outs = {mode: os.path.join(folder, f"out-{mode}") for mode in modes}
    loads, commits, restarts = {}, {}, {}
    for mode in modes:
        shutil.copytree(generated, logs[mode])
        loads[mode] = measured(mode, logs[mode], outs[mode])
    for mode in modes:
        commits[mode] = live_commit(spark, mode, logs[mode], outs[mode])
        restarts[mode] = measured(mode, logs[mode], outs[mode])
    warm = scratch(logs["follow"])
    mib = 1 << 20
    print(f"trips, {options.rows:,} rows in 4 versions; local[2], 2 shuffle partitions; Spark SQL from scratch, "
          f"the four queries, warm: {warm:.1f} s\n")
    print("| | follow | executors | ratio |")
    print("|---|---:|---:|---:|")
    rows = [("first load (s, process start to exit)", {mode: loads[mode]["seconds"] for mode in modes}),
            ("one commit in a live follow, to its output (s)", commits),
            ("restart after kill -9, no new commit (s, start to exit)",
             {mode: restarts[mode]["seconds"] for mode in modes}),
            ("driver peak RSS, first load (MiB)", {mode: loads[mode]["driver"] / mib for mode in modes}),
            ("driver peak RSS, restart (MiB)", {mode: restarts[mode]["driver"] / mib for mode in modes}),
            ("JVM peak RSS, first load (MiB)", {mode: loads[mode]["jvm"] / mib for mode in modes}),
            ("checkpoint on disk (MiB)", {mode: size(os.path.join(outs[mode], "_checkpoint")) / mib for mode in modes})]
    for name, values in rows:
        print(f"| {name} | {values['follow']:,.1f} | {values['executors']:,.1f} | "
              f"{values['executors'] / values['follow'] if values['follow'] else float('nan'):.2f} |")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
