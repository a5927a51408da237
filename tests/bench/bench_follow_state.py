"""Following a data engineer's own Delta tables, as issue 43 measured it: where ``follow`` spends time and memory.

Three Delta tables shaped like a shop's (``--orders`` orders with orphan,
NULL and duplicated customer keys; 100,000 customers; 1,000 products), and
three of the engineer's own queries (a join with GROUP BY and SUM of a
DECIMAL; AVG with MIN and MAX of a timestamp; a three-table join), followed
through the command line as a user runs it, each ``follow`` a process of its
own:

- **first load**: a live ``follow`` started on the tables, until its line
  says every commit there is applied;
- **a small commit**: 300 orders appended while it runs, until its line says
  that commit is applied (three times);
- **restart**: the live follow killed with SIGKILL, then ``follow
  --available-now`` with no new commit, until it exits caught up;
- the **peak resident memory** of the follow's Python process (``VmHWM``)
  and of its Spark JVM (the largest ``VmRSS`` seen);
- **Spark SQL from scratch**: the three queries over the same tables as of
  their newest commit, in a fresh session (cold: reading the files
  included) and once more in it (warm).

Each is measured for the driver's follow (``--state driver``) and for state
on the executors (``--state executors``) with each of ``--partitions``
shuffle partitions, each over its own output; the commits one adds stay
for the next. ``--verify`` then runs ``verify`` on each output (every
output equal to Spark SQL at every version), and follows with state on the
executors into a fresh output through three SIGKILLs (between the state
store's commit and any output; inside the first load's micro-batch;
between one query's output commit and the next) before verifying that one
too. Run it with ``.venv/bin/python -m tests.bench.bench_follow_state
[--orders 1000000] [--state driver,executors] [--partitions 2,4]
[--verify [--no-kills]]``; the numbers are one run's on a shared machine: read the
ratios. The rows of tests/bench/README.md's table come from its output.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

QUERIES = {
    "revenue_by_region": """
        SELECT c.region, SUM(o.amount) AS revenue, COUNT(*) AS orders
        FROM orders o JOIN customers c ON o.customer_id = c.customer_id
        GROUP BY c.region""",
    "product_times": """
        SELECT product_id, AVG(amount) AS mean_amount, MIN(ordered_at) AS first_order, MAX(ordered_at) AS last_order
        FROM orders GROUP BY product_id""",
    "large_orders": """
        SELECT o.order_id, c.region, p.category, o.quantity, o.amount
        FROM orders o JOIN customers c ON o.customer_id = c.customer_id JOIN products p ON o.product_id = p.product_id
        WHERE o.amount > 950""",
}
"""The engineer's three queries: a join with GROUP BY and SUM of a DECIMAL; AVG, MIN and MAX of a timestamp by
product; a three-table join (its larger orders, about 5% of them)."""

CUSTOMERS, PRODUCTS = 100_000, 1_000
SMALL_COMMIT = 300


def orders(count: int, first_id: int, seed: int):
    """``count`` orders numbered from ``first_id``: 1% with a NULL customer, 1% with a customer that does not
    exist, and 0.1% more rows that repeat an order of these exactly."""
    import numpy
    import pyarrow

    rng = numpy.random.default_rng(seed)
    customer = rng.integers(1, CUSTOMERS + 1, count)
    orphan = rng.random(count) < 0.01
    customer[orphan] = rng.integers(CUSTOMERS + 1, 2 * CUSTOMERS, int(orphan.sum()))
    cents = rng.integers(100, 100_000, count)
    seconds = rng.integers(0, 365 * 86_400, count) + 1_735_689_600  # 2025
    columns = {
        "order_id": pyarrow.array(numpy.arange(first_id, first_id + count), pyarrow.int64()),
        "customer_id": pyarrow.array(customer, pyarrow.int64(), mask=rng.random(count) < 0.01),
        "product_id": pyarrow.array(rng.integers(1, PRODUCTS + 1, count), pyarrow.int32()),
        "quantity": pyarrow.array(rng.integers(1, 10, count), pyarrow.int32()),
        "amount": pyarrow.array([f"{value // 100}.{value % 100:02d}" for value in cents.tolist()]).cast(
            pyarrow.decimal128(10, 2)),
        "ordered_at": pyarrow.array(seconds * 1_000_000, pyarrow.int64()).cast(pyarrow.timestamp("us", "UTC")),
    }
    table = pyarrow.table(columns)
    repeated = table.take(rng.integers(0, count, count // 1000))
    return pyarrow.concat_tables([table, repeated])


def write_tables(folder: str, count: int, seed: int) -> dict[str, str]:
    """The three tables as Delta tables under ``folder`` (change data feed on), one commit each; their paths."""
    import numpy
    import pyarrow
    from deltalake import write_deltalake

    from final.spark.delta import FEED

    rng = numpy.random.default_rng(seed + 1)
    regions = ["north", "south", "east", "west", "centre", "islands", "abroad", "online"]
    categories = ["books", "garden", "kitchen", "music", "sport", "tools", "toys"]
    tables = {
        "customers": pyarrow.table({
            "customer_id": pyarrow.array(numpy.arange(1, CUSTOMERS + 1), pyarrow.int64()),
            "region": pyarrow.array([regions[index] for index in rng.integers(0, len(regions), CUSTOMERS)])}),
        "products": pyarrow.table({
            "product_id": pyarrow.array(numpy.arange(1, PRODUCTS + 1), pyarrow.int32()),
            "category": pyarrow.array([categories[index] for index in rng.integers(0, len(categories), PRODUCTS)])}),
        "orders": orders(count, 1, seed),
    }
    paths = {}
    for name, table in tables.items():
        paths[name] = os.path.join(folder, name)
        write_deltalake(paths[name], table, configuration=FEED)
    return paths


def append_orders(path: str, first_id: int, seed: int) -> None:
    """One commit of ``SMALL_COMMIT`` new orders."""
    from deltalake import write_deltalake

    write_deltalake(path, orders(SMALL_COMMIT, first_id, seed).slice(0, SMALL_COMMIT), mode="append")


def peak_kib(pid: int, field_name: str) -> int:
    """``field_name`` of /proc/``pid``/status in KiB, or 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def children(pid: int) -> list[int]:
    """Every descendant of ``pid``."""
    found = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            for child in map(int, listed.read().split()):
                found += [child, *children(child)]
    except FileNotFoundError:
        pass
    return found


@dataclass
class Follow:
    """A ``follow`` process: its lines as they come, the peak memory of it and of its JVM, and waits on lines."""

    command: list[str]
    lines: list[str] = field(default_factory=list)
    driver_kib: int = 0
    jvm_kib: int = 0

    def __post_init__(self) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._watch, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def _watch(self) -> None:
        while self.process.poll() is None:
            self.driver_kib = max(self.driver_kib, peak_kib(self.process.pid, "VmHWM"))
            jvm = sum(peak_kib(child, "VmRSS") for child in children(self.process.pid))
            self.jvm_kib = max(self.jvm_kib, jvm)
            time.sleep(0.2)

    def wait_for(self, wanted: Callable[[str], bool], timeout: float = 3600) -> float:
        """Seconds since the process started until a line ``wanted`` accepts arrives.

        Raises:
            RuntimeError: the process ended, or ``timeout`` passed, first.
        """
        seen = 0
        deadline = time.perf_counter() + timeout
        with self.changed:
            while True:
                for line in self.lines[seen:]:
                    if wanted(line):
                        return time.perf_counter() - self.started
                seen = len(self.lines)
                if self.process.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError("follow stopped or timed out:\n" + "\n".join(self.lines[-20:]))
                self.changed.wait(1)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def finish(self) -> float:
        """Seconds from start to exit.

        Raises:
            RuntimeError: it exited with a status other than 0.
        """
        status = self.process.wait()
        took = time.perf_counter() - self.started
        time.sleep(0.3)
        if status != 0:
            raise RuntimeError(f"follow exited {status}:\n" + "\n".join(self.lines[-20:]))
        return took


def applied(version: int) -> Callable[[str], bool]:
    """A follow line saying the data set is applied through ``version`` or later."""
    def through(line: str) -> bool:
        found = re.search(r"applied through version (\d+)", line)
        return bool(found) and int(found.group(1)) >= version
    return through


def from_scratch(paths: dict[str, str]) -> tuple[float, float]:
    """Spark SQL's seconds for the three queries over the tables' newest files: in a fresh session, reading
    included (cold), then again in it (warm)."""
    from deltalake import DeltaTable

    from final.spark.session import spark_session

    started = time.perf_counter()
    spark = spark_session()
    for name, path in paths.items():
        table = DeltaTable(path)
        spark.read.parquet(*table.file_uris()).createOrReplaceTempView(name)

    def queries() -> None:
        for text in QUERIES.values():
            spark.sql(text).collect()
    queries()
    cold = time.perf_counter() - started
    started = time.perf_counter()
    queries()
    warm = time.perf_counter() - started
    spark.stop()
    return cold, warm


@dataclass
class Measured:
    """One follow's numbers: ``state`` (driver or executors) with ``partitions`` shuffle partitions."""

    state: str
    partitions: int
    load: float = 0.0
    small: list[float] = field(default_factory=list)
    restart: float = 0.0
    driver_kib: int = 0
    jvm_kib: int = 0
    state_bytes: int = 0
    verified: str = ""

    def line(self) -> str:
        """The numbers as soon as they are measured (the table, with ratios, comes at the end)."""
        return (f"{self.state}, P = {self.partitions}: first load {self.load:.1f} s, restart {self.restart:.1f} s, "
                f"peak RSS {self.driver_kib / 1024:,.0f} / {self.jvm_kib / 1024:,.0f} MiB, commits "
                f"{', '.join(f'{took:.1f}' for took in self.small)} s, checkpoint {self.state_bytes / 2**20:,.0f} MiB")


def follow_command(paths: dict[str, str], folder: str, out: str, state: str, partitions: int) -> list[str]:
    """The command line of a follow of the three queries over the tables ``paths`` into ``out``."""
    return [sys.executable, "-m", "final.spark", "follow", *tables_and_queries(paths, folder), "--out", out,
            "--state", state, "--conf", f"spark.sql.shuffle.partitions={partitions}"]


def tables_and_queries(paths: dict[str, str], folder: str) -> list[str]:
    return [*(f"--table={name}={path}" for name, path in paths.items()),
            "--sql", *(os.path.join(folder, f"{name}.sql") for name in QUERIES)]


def folder_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(where, name)) for where, _, names in os.walk(path) for name in names)


def follow_and_restart(paths: dict[str, str], folder: str, state: str, partitions: int, seed: int,
                       first_id: int) -> Measured:
    """The first load of a live follow, three small commits through it, then SIGKILL and a restart with no new
    commit; peak memory throughout."""
    found = Measured(state, partitions)
    out = os.path.join(folder, f"out-{state}-{partitions}")
    command = follow_command(paths, folder, out, state, partitions)
    live = Follow([*command, "--trigger-seconds", "1"])
    commits = len(paths) - 1 + sum(1 for name in os.listdir(os.path.join(paths["orders"], "_delta_log"))
                                   if name.endswith(".json")) - 1
    found.load = live.wait_for(applied(commits))
    for number in range(3):
        started = time.perf_counter()
        append_orders(paths["orders"], first_id + number * SMALL_COMMIT, seed + 10 + number)
        live.wait_for(applied(commits + 1 + number))
        found.small.append(time.perf_counter() - started)
    live.kill()
    again = Follow([*command, "--available-now"])
    found.restart = again.finish()
    found.driver_kib = max(live.driver_kib, again.driver_kib)
    found.jvm_kib = max(live.jvm_kib, again.jvm_kib)
    found.state_bytes = folder_bytes(os.path.join(out, "_checkpoint"))
    return found


def killed_three_times(paths: dict[str, str], folder: str, partitions: int, load: float) -> str:
    """State on the executors through three SIGKILLs into a fresh output: between the state store's commit and
    any output (``FINAL_FOLLOW_KILL=sink:1``), inside the first load's micro-batch (half its load time in), and
    between one query's output commit and the next (``output:1``); then to the end, and ``verify``: its last
    line."""
    out = os.path.join(folder, f"out-killed-{partitions}")
    command = [*follow_command(paths, folder, out, "executors", partitions), "--available-now"]
    for kill, after in (("sink:1", None), (None, load / 2), ("output:1", None)):
        environment = {**os.environ, **({"FINAL_FOLLOW_KILL": kill} if kill else {})}
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
                                   start_new_session=True)
        try:
            process.wait(timeout=after)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.returncode != -signal.SIGKILL:
            return f"the kill at {kill or f'{after:.0f} s'} did not land: exit {process.returncode}"
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        return f"the last run exited {finished.returncode}: {finished.stderr.strip().splitlines()[-1:]}"
    checked = subprocess.run([sys.executable, "-m", "final.spark", "verify", *tables_and_queries(paths, folder),
                              "--out", out], capture_output=True, text=True)
    return f"exit {checked.returncode}: {checked.stdout.strip().splitlines()[-1:]}"


def measure(count: int, seed: int, verify: bool, states: list[str], partitions: list[int], kills: bool = True
            ) -> None:
    folder = tempfile.mkdtemp(prefix="bench-follow-state-")
    paths = write_tables(os.path.join(folder, "tables"), count, seed)
    for name, text in QUERIES.items():
        with open(os.path.join(folder, f"{name}.sql"), "w") as file:
            file.write(text.strip() + "\n")
    runs, first_id = [], 10 * count
    for state in states:
        for each in partitions if state == "executors" else partitions[:1]:
            runs.append(follow_and_restart(paths, folder, state, each, seed, first_id))
            print(runs[-1].line(), flush=True)
            first_id += 3 * SMALL_COMMIT
            if verify:
                out = os.path.join(folder, f"out-{state}-{each}")
                checked = subprocess.run([sys.executable, "-m", "final.spark", "verify",
                                          *tables_and_queries(paths, folder), "--out", out],
                                         capture_output=True, text=True)
                runs[-1].verified = f"exit {checked.returncode}: {checked.stdout.strip().splitlines()[-1:]}"
                print(f"  verify: {runs[-1].verified}", flush=True)
    cold, warm = from_scratch(paths)

    print(f"orders: {count:,} (+{count // 1000:,} repeated), customers {CUSTOMERS:,}, products {PRODUCTS:,}")
    print(f"Spark SQL from scratch, the three queries: {warm:.1f} s warm, {cold:.1f} s cold")
    print("| follow | first load | restart after kill -9, no new commit | peak RSS driver / JVM "
          f"| {SMALL_COMMIT}-row commit to output | checkpoint on disk |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        name = "driver" if run.state == "driver" else f"executors, P = {run.partitions}"
        print(f"| {name} | {run.load:.1f} s ({run.load / cold:.1f}x cold, {run.load / warm:.1f}x warm) "
              f"| {run.restart:.1f} s ({run.restart / warm:.1f}x warm) "
              f"| {run.driver_kib / 1024:,.0f} / {run.jvm_kib / 1024:,.0f} MiB "
              f"| {', '.join(f'{took:.1f}' for took in run.small)} s | {run.state_bytes / 2**20:,.0f} MiB |")
    for run in runs:
        if run.verified:
            print(f"verify ({run.state}, P = {run.partitions}): {run.verified}")
    if verify and kills and "executors" in states:
        load = next(run.load for run in runs if run.state == "executors")
        print(f"three kill -9s (executors, P = {partitions[0]}), then verify: "
              f"{killed_three_times(paths, folder, partitions[0], load)}")
    shutil.rmtree(folder)


def main(argv: list[str] | None = None) -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--orders", type=int, default=1_000_000)
    arguments.add_argument("--seed", type=int, default=43)
    arguments.add_argument("--verify", action="store_true",
                           help="then check every output at every version, and follow through three kill -9s")
    arguments.add_argument("--no-kills", action="store_true",
                           help="with --verify, leave out the follow through three kill -9s (each reruns the load)")
    arguments.add_argument("--state", default="driver,executors", help="the follows to measure (default both)")
    arguments.add_argument("--partitions", default="2,4", help="shuffle partitions for state on the executors")
    options = arguments.parse_args(argv)
    measure(options.orders, options.seed, options.verify, options.state.split(","),
            [int(number) for number in options.partitions.split(",")], not options.no_kills)


if __name__ == "__main__":
    main()
