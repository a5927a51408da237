"""Instructions per update through a peer adapter, counted by valgrind's callgrind: what noise cannot move.

Timings on a shared machine swing by tens of percent; the number of
instructions a run executes does not (for the same interpreter, inputs and
``PYTHONHASHSEED``). For each workload this runs a Python engine of
``engines.py`` (``final`` by default) under callgrind twice, with the garbage
collector off: loading version 0 only, then loading and applying the first
``--updates`` versions. One update costs the difference divided by their
number. Instructions are not time (a cache miss costs time and no
instructions), so read these beside the timed runs, not instead of them.

    python -m tests.bench.peers.instructions                    # W1..W5 at N = 10,000, 100 updates each
    python -m tests.bench.peers.instructions --only W1 --engine plain
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from tests.bench.bench_instructions import counted
from tests.bench.peers import workloads

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = """
import gc, sys
from tests.bench.peers.engines import Checksum, make_engine, read_workload
engine_name, path, updates = sys.argv[1], sys.argv[2], int(sys.argv[3])
workload = read_workload(path)
engine = make_engine(engine_name, Checksum(), workload["query"], list(workload["inputs"]))
gc.disable()
engine.load(workload["inputs"])
for version, changes in enumerate(workload["versions"][:updates], 1):
    engine.update(version, changes)
"""
WORKLOADS = ("W1", "W2", "W3", "W4", "W5", "W1b", "W2b")


def instructions(engine: str, path: Path, updates: int) -> int:
    """Instructions callgrind counts for loading ``path`` into ``engine`` and applying ``updates`` versions."""
    return counted(SCRIPT, engine, str(path), str(updates))


def per_update(engine: str, path: Path, updates: int) -> int:
    """Instructions of one update: the run with ``updates`` versions less the load alone, divided by them."""
    return (instructions(engine, path, updates) - instructions(engine, path, 0)) // updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="the size N (default 10,000)")
    parser.add_argument("--only", help="comma-separated workloads (default: W1..W5, W1b, W2b)")
    parser.add_argument("--engine", default="final", help="a Python engine of engines.py (default final)")
    parser.add_argument("--updates", type=int, default=100, help="versions applied after the load (default 100)")
    parser.add_argument("--data", type=Path, default=ROOT / "out" / "bench" / "data", help="the workload folder")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("instructions needs valgrind (apt-get install -y valgrind)")
    names = args.only.split(",") if args.only else WORKLOADS
    print(f"| workload (N={args.n:,}) | {args.engine}: K instructions per update |")
    print("|---|---:|")
    for name in names:
        path = workloads.write(args.data, name, args.n)
        updates = min(args.updates, workloads.BATCHES if name.endswith("b") else args.updates)
        print(f"| {name} | {per_update(args.engine, path, updates) / 1e3:,.1f} |", flush=True)


if __name__ == "__main__":
    main()
