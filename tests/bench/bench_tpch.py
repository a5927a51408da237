"""TPC-H kept up to date, measured: for each of the 22 queries, final/'s first load and its median time per
refresh commit, beside Spark SQL and DuckDB computing the query from scratch at the same versions.

The tables are DuckDB's dbgen at ``--scale`` (default 0.1), written as Delta
tables, then ``--refreshes`` refreshes, each four commits (RF1 and RF2 as one
merge of ``orders`` and one of ``lineitem``, an update of ``customer``, one
of ``part``); ``python -m final.spark tpch`` does the rest: every query
followed through every commit and checked against DuckDB, then ``run``
checks it against Spark SQL at every version its tables change. It writes
``OUT/tpch.md`` (the table printed at the end) and ``OUT/tpch.json``.

Run it with ``.venv/bin/python -m tests.bench.bench_tpch [--scale 0.1]``;
the numbers are one run's on a shared 2-core machine: read the ratios. The
driver's peak resident memory (``VmHWM``, DuckDB's generation included) is
printed per input row of the load.
"""

from __future__ import annotations

import argparse
import os

from final.spark import tpch
from final.spark.__main__ import main as spark_main


def peak_memory() -> int:
    """This process's peak resident memory in bytes (``VmHWM``)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--scale", default="0.1")
    arguments.add_argument("--refreshes", default="3")
    arguments.add_argument("--queries", default="1-22")
    arguments.add_argument("--out", default=os.path.join("out", "bench", "tpch"))
    options = arguments.parse_args(argv)
    status = spark_main(["tpch", "--scale", options.scale, "--refreshes", options.refreshes, "--queries",
                         options.queries, "--out", options.out])
    rows = sum(tpch_rows(os.path.join(options.out, "tables", table)) for table in tpch.TABLES)
    print(f"peak resident memory {peak_memory() / 2**20:.0f} MiB, {peak_memory() / rows:.0f} bytes per input row "
          f"of the load ({rows} rows)")
    with open(os.path.join(options.out, "tpch.md"), encoding="utf-8") as summary:
        print(summary.read())
    return status


def tpch_rows(path: str) -> int:
    """The rows of the Delta table at ``path`` at its first version (the load)."""
    from deltalake import DeltaTable

    return DeltaTable(path, version=0).count()


if __name__ == "__main__":
    raise SystemExit(main())
