"""final against v5 in instructions executed, counted by valgrind's callgrind: a measure noise cannot move.

Timings on a shared machine swing by tens of percent from run to run; the
number of instructions a program executes does not. For each workload of
``bench_final`` (at N = 10,000, since the program runs about fifty times
slower under valgrind), this runs the stage three times under callgrind:
making the data only, making and loading it, and making and loading it and
then applying K one-record updates. The load costs the second count less the
first; one update, the third less the second, divided by K. Instructions are
not time (memory stalls and cache misses cost time and no instructions), so
read these ratios beside bench_final's, not instead of them.

    python -m tests.bench.bench_instructions            # needs valgrind on PATH; about ten minutes
    python -m tests.bench.bench_instructions --quick    # N = 1,000, 20 updates
    python -m tests.bench.bench_instructions --n 100000 --only "count by key"
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.bench.bench_final import workloads

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
from tests.bench.bench_final import Loaded, updates_of, workloads
import {stage}
name, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
program, initial, update = workloads(n)[name]
changes = updates_of(update, max(count, 0))
if count >= 0:
    graph = Loaded("{stage}", program, initial)
    for change in changes:
        graph.update(*change)
"""


def counted(script: str, *arguments: str) -> int:
    """Instructions callgrind counts for ``python -c script arguments...`` run from the repository root."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", script,
               *arguments]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}  # dict layouts, and so instruction counts, repeat
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True, env=environment)
    found = re.search(r"Collected : (\d+)", finished.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count for {' '.join(arguments)}:\n{finished.stderr[-2000:]}")
    return int(found.group(1))


def instructions(stage: str, name: str, n: int, updates: int) -> int:
    """Instructions callgrind counts for making the data of ``name`` at size ``n``, loading it, and applying
    ``updates`` one-record updates (``updates = -1``: only making the data)."""
    return counted(SCRIPT.format(stage=stage), name, str(n), str(updates))


def measure(stage: str, name: str, n: int, updates: int) -> tuple[int, int]:
    """``(instructions of the load, instructions per update)`` for one stage and workload."""
    data = instructions(stage, name, n, -1)
    loaded = instructions(stage, name, n, 0)
    updated = instructions(stage, name, n, updates)
    return loaded - data, (updated - loaded) // updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 1,000, 20 updates")
    parser.add_argument("--n", type=int, default=10_000, help="the size N (default 10,000)")
    parser.add_argument("--only", help="one workload, e.g. 'count by key'")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions needs valgrind (apt-get install -y valgrind)")
    n, updates = (1_000, 20) if args.quick else (args.n, 100)
    print(f"| workload (N={n:,}) | v5 load (M instr) | final load (M instr) | v5 K instr/update | "
          f"final K instr/update | load ratio | update ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in [args.only] if args.only else workloads(n):
        (v5_load, v5_update), (final_load, final_update) = (measure(s, name, n, updates) for s in ("v5", "final"))
        print(f"| {name} | {v5_load / 1e6:,.0f} | {final_load / 1e6:,.0f} | {v5_update / 1e3:,.0f} | "
              f"{final_update / 1e3:,.0f} | {v5_load / final_load:.2f} | {v5_update / final_update:.2f} |", flush=True)


if __name__ == "__main__":
    main()
