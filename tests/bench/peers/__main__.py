"""final against its peers on the same workloads, every answer checked: one command for the table and plots.

    python -m tests.bench.peers                 # everything (about an hour): results, README table, plots
    python -m tests.bench.peers --quick         # N = 1,000, final, plain dicts and d2mini: under two minutes
    python -m tests.bench.peers --report-only   # the table and plots again from results.jsonl

Peers missing from this machine are installed first (npm ci for d2ts and
d2mini; a python3.12 venv for pathway and pydbsp). Results are appended to
the results file as each run ends, so an interrupted run keeps what it
measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from tests.bench.peers import driver, report, workloads

BENCH = driver.HERE.parent
RESULTS = driver.HERE / "results.jsonl"
SIZES = [1_000, 10_000, 100_000, 1_000_000]
LARGEST = {
    "v2": 100_000, "v3": 100_000, "v4": 100_000, "v5": 100_000, "pathway": 100_000, "pydbsp": 10_000,
    "spark": 100_000,
}
"""Where the slower engines stop, so the run fits in about an hour: the stages and pathway take minutes to load
N = 1,000,000 (pathway takes rows in one call each), pydbsp copies its whole collection at every version, and
Spark recomputes every version from scratch (seconds each at any N) after a load through Python's rows."""
QUICK_ENGINES = ["final", "plain", "d2mini"]


def _list(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(
        prog="python -m tests.bench.peers", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    found.add_argument("--quick", action="store_true", help="N = 1,000 with final, plain and d2mini; no README")
    found.add_argument("--engines", type=_list, help=f"comma-separated, from {','.join(driver.ENGINES)}")
    found.add_argument("--workloads", type=_list, help=f"comma-separated, from {','.join(workloads.WORKLOADS)}")
    found.add_argument("--sizes", type=lambda text: [int(n) for n in _list(text)], help="comma-separated N")
    found.add_argument("--rounds", type=int, default=1, help="runs of each engine, in rotating order (default 1)")
    found.add_argument("--cap", type=float, default=300.0, help="seconds one run may take (default 300)")
    found.add_argument("--results", type=Path, help=f"the JSON-lines file (default {RESULTS.relative_to(driver.ROOT)})")
    found.add_argument("--figures", type=Path, help="where the PNGs go (default tests/bench; --quick: out/bench)")
    found.add_argument("--no-readme", action="store_true", help="do not rewrite the table in tests/bench/README.md")
    found.add_argument("--report-only", action="store_true", help="only the table and plots, from the results file")
    return found


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    engines = args.engines or (QUICK_ENGINES if args.quick else list(driver.ENGINES))
    names = args.workloads or list(workloads.WORKLOADS)
    for engine in engines:
        if engine not in driver.ENGINES:
            parser().error(f"unknown engine {engine!r}: choose from {', '.join(driver.ENGINES)}")
    for name in names:
        if name not in workloads.WORKLOADS:
            parser().error(f"unknown workload {name!r}: choose from {', '.join(workloads.WORKLOADS)}")
    results = args.results or (driver.ROOT / "out" / "bench" / "quick.jsonl" if args.quick else RESULTS)
    if not args.report_only:
        plan = driver.Plan(engines, names, args.sizes or ([1_000] if args.quick else SIZES), args.rounds,
                           60.0 if args.quick else args.cap, largest=LARGEST)
        missing = driver.prepare(engines, say=lambda text: print(text, file=sys.stderr))
        for engine, why in missing.items():
            print(f"{engine} cannot run: {why}", file=sys.stderr)
        results.parent.mkdir(parents=True, exist_ok=True)
        total = len(plan.sizes) * len(names) * plan.rounds * len(engines)
        with results.open("w") as out, tqdm(total=total, unit="run", file=sys.stderr) as bar:
            for result in driver.runs(plan, missing):
                bar.set_description(f"{result.workload} N={result.n:,} {result.engine}")
                bar.update()
                out.write(result.as_json() + "\n")
                out.flush()
                if result.status in ("wrong answer", "failed"):
                    tqdm.write(f"{result.engine} {result.workload} N={result.n:,}: {result.status}: {result.reason}",
                               file=sys.stderr)
    table = report.merged(report.read(results))
    note = (f"Generated from `{results.relative_to(driver.ROOT) if results.is_relative_to(driver.ROOT) else results}`"
            f" ({len(table)} engine, workload and size combinations).")
    text = report.markdown(table, note)
    print(text)
    folder = args.figures or (results.parent if args.quick else BENCH)
    folder.mkdir(parents=True, exist_ok=True)
    figures = report.plot(table, folder)
    print("plots: " + ", ".join(str(path) for path in figures), file=sys.stderr)
    if not (args.quick or args.no_readme):
        report.write_readme(BENCH / "README.md", text)
    wrong = [result for result in table.values() if result.status == "wrong answer"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
