"""Window functions kept up to date, measured: what one change costs in a partition of n rows.

A table ``orders(customer, ts, amount)`` holds ``customers`` partitions of n
rows each; after the load, each change inserts one order for one customer
(a new latest one) and deletes its oldest, so every partition stays at n
rows. Three queries, each a data engineer's first window:

- ``latest``: the latest order per customer, ``ROW_NUMBER() OVER (PARTITION
  BY customer ORDER BY ts DESC) = 1`` in a subquery; with the rule
  ``window_top_k`` (a top-k per partition under the window) and without it
  (the rule taken out of ``RULES`` for this measurement: the window's reduce
  over all n rows);
- ``running``: a running sum, ``SUM(amount) OVER (PARTITION BY customer
  ORDER BY ts)``, whose every value after the changed row moves.

For n in 10, 100 and 1,000 it prints the load and the median time per change
of each, and the ratios. Run it with ``.venv/bin/python -m
tests.bench.bench_windows``; the numbers are one run's on a shared 2-core
machine: read the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time
from decimal import Decimal
from unittest import mock

from final.spark.incremental import IncrementalQuery
from final.spark.query import Table
from final.spark.sql import compile_sql, rules

ORDERS = Table("orders", (("customer", "INT"), ("ts", "BIGINT"), ("amount", "DECIMAL(8,2)")))

QUERIES = {
    "latest": "SELECT customer, ts, amount FROM (SELECT customer, ts, amount, ROW_NUMBER() OVER (PARTITION BY "
              "customer ORDER BY ts DESC) AS rn FROM orders) AS ranked WHERE rn = 1",
    "running": "SELECT customer, ts, SUM(amount) OVER (PARTITION BY customer ORDER BY ts) AS total FROM orders",
}


def amount(ts: int) -> Decimal:
    return Decimal(ts % 9973).scaleb(-2)


def measure(text: str, customers: int, rows: int, changes: int, rule: bool = True) -> tuple[float, float]:
    """The load's seconds and the median seconds per change of ``text`` over ``customers`` partitions of
    ``rows`` rows (with ``rule``: the rewrite rules as they are; without: ``window_top_k`` taken out)."""
    kept = rules.RULES if rule else tuple(pair for pair in rules.RULES if pair[0] != "window_top_k")
    with mock.patch.object(rules, "RULES", kept):
        query = compile_sql(text, {"orders": ORDERS}, name="bench")
    assert rule or "window_top_k" not in query.rules
    engine = IncrementalQuery(query)
    load = [("orders", (customer, ts, amount(ts)), 1) for customer in range(customers) for ts in range(rows)]
    start = time.perf_counter()
    engine.apply(0, load)
    loaded = time.perf_counter() - start
    times = []
    for change in range(1, changes + 1):
        customer = change % customers
        newest, oldest = rows + change // customers, change // customers
        updates = [("orders", (customer, newest, amount(newest)), 1),
                   ("orders", (customer, oldest, amount(oldest)), -1)]
        start = time.perf_counter()
        engine.apply(change, updates)
        times.append(time.perf_counter() - start)
    return loaded, statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--customers", type=int, default=100)
    arguments.add_argument("--changes", type=int, default=200)
    options = arguments.parse_args(argv)
    print(f"{options.customers} partitions, {options.changes} changes (one insert and one delete each)")
    print("| n rows per partition | latest, top-k rule: load / per change | latest, window alone | "
          "per change, alone over rule | running sum: load / per change |")
    print("|---|---|---|---|---|")
    for rows in (10, 100, 1_000):
        ruled = measure(QUERIES["latest"], options.customers, rows, options.changes)
        alone = measure(QUERIES["latest"], options.customers, rows, options.changes, rule=False)
        running = measure(QUERIES["running"], options.customers, rows, options.changes)
        print(f"| {rows:,} | {ruled[0]:.2f} s / {ruled[1] * 1e3:.2f} ms | {alone[0]:.2f} s / {alone[1] * 1e3:.2f} ms "
              f"| {alone[1] / ruled[1]:.1f}x | {running[0]:.2f} s / {running[1] * 1e3:.2f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
