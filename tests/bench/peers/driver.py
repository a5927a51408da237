"""Run every engine on every workload and size, each in its own process, and check their answers agree.

An engine is a command (``PROTOCOL.md``): the project's own Python engines
run in the project's venv; d2ts and d2mini in node, from the lockfile in
``node/``; pathway and pydbsp in a venv of their own made from python3.12
(``py312/requirements.txt``). ``prepare`` installs the peers when they are
missing and says why one cannot be installed, so the run reports it instead
of stopping.

Each run's peak memory is the child's largest resident set (``wait4``); a
run past the cap is killed, and the larger sizes of that engine and workload
are not tried. Every answer is checked against the reference checksum (the
plain-dict engine's, or final's where plain did not run): a mismatch is a
``wrong answer``, reported with its workload and N, never a time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.bench.peers import workloads

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
NODE = HERE / "node"
PY312_VENV = ROOT / ".bench-py312"
PY312_REQUIREMENTS = HERE / "py312" / "requirements.txt"

PYTHON_ENGINES = ("final", "v5", "v4", "v3", "v2", "plain", "spark")
NODE_ENGINES = ("d2ts", "d2mini")
PY312_ENGINES = ("pathway", "pydbsp")
ENGINES = PYTHON_ENGINES + NODE_ENGINES + PY312_ENGINES
"""Every engine, in the order tables list them."""

REFERENCE = ("plain", "final")
"""Whose checksum the others must match: the first of these that ran."""


@dataclass
class Result:
    """One engine's run of one workload at one size (one JSON line of the results)."""

    engine: str
    workload: str
    n: int
    round: int = 0
    status: str = "ok"
    """ok, unsupported, wrong answer, failed, over cap, not installed, or skipped."""
    reason: str = ""
    load_s: float | None = None
    median_s: float | None = None
    p95_s: float | None = None
    changes_per_version: int = 0
    peak_rss: int | None = None
    rss_before_load: int | None = None
    live_records: int = 0
    checksum: str = ""
    expected: str = ""

    @property
    def per_change_s(self) -> float | None:
        return None if self.median_s is None else self.median_s / self.changes_per_version

    @property
    def bytes_per_record(self) -> float | None:
        """Resident memory gained from just before the load to the peak, per live input record at the end.

        None for Spark: its peak is its JVM's (a process of its own, waited for by the adapter), while
        ``rss_before_load`` is the Python driver's, so the two do not subtract."""
        if self.peak_rss is None or self.rss_before_load is None or not self.live_records or self.engine == "spark":
            return None
        return (self.peak_rss - self.rss_before_load) / self.live_records

    def as_json(self) -> str:
        return json.dumps(asdict(self))


def _python312() -> str | None:
    """A python3.12 that runs: pyenv's (its shim on PATH fails unless 3.12 is pyenv's selected version), or
    one on PATH."""
    pyenv = Path.home() / ".pyenv" / "versions"
    candidates = [str(path) for path in sorted(pyenv.glob("3.12*/bin/python3.12"))] if pyenv.exists() else []
    candidates.append(shutil.which("python3.12") or "")
    for candidate in reversed(candidates):
        if candidate and subprocess.run([candidate, "--version"], capture_output=True).returncode == 0:
            return candidate
    return None


def prepare(engines: Iterable[str], say: callable = print) -> dict[str, str]:
    """Install the peers ``engines`` need, if missing; the engines that cannot run, with the reason."""
    engines = set(engines)
    missing: dict[str, str] = {}
    if engines & set(NODE_ENGINES):
        problem = _prepare_node(say)
        missing.update({engine: problem for engine in NODE_ENGINES if problem})
    if engines & set(PY312_ENGINES):
        problem = _prepare_py312(say)
        missing.update({engine: problem for engine in PY312_ENGINES if problem})
    return missing


def _run_quietly(command: list[str], cwd: Path) -> str:
    """Run an install command; '' if it worked, else the tail of its output."""
    finished = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    return "" if finished.returncode == 0 else (finished.stdout + finished.stderr)[-600:]


def _prepare_node(say: callable) -> str:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node and npm are not installed (apt-get install -y nodejs npm)"
    if not (NODE / "node_modules" / "@electric-sql" / "d2mini").exists():
        say("installing d2ts and d2mini from the lockfile (npm ci)")
        problem = _run_quietly(["npm", "ci", "--no-audit", "--no-fund"], NODE)
        if problem:
            return f"npm ci failed in {NODE}: {problem}"
    return ""


def _prepare_py312(say: callable) -> str:
    python = PY312_VENV / "bin" / "python"
    marker = PY312_VENV / "installed-requirements.txt"
    wanted = PY312_REQUIREMENTS.read_text()
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return ""
    interpreter = _python312()
    if interpreter is None:
        return "pathway and pydbsp need Python >= 3.12, and no python3.12 was found (pyenv install 3.12)"
    say(f"making {PY312_VENV.name} with {interpreter} and installing pathway and pydbsp")
    problem = _run_quietly([interpreter, "-m", "venv", str(PY312_VENV)], ROOT) or _run_quietly(
        [str(python), "-m", "pip", "install", "-q", "-r", str(PY312_REQUIREMENTS)], ROOT)
    if problem:
        return f"installing {PY312_REQUIREMENTS.relative_to(ROOT)} into {PY312_VENV.name} failed: {problem}"
    marker.write_text(wanted)
    return ""


def command(engine: str, path: Path) -> list[str]:
    """The command that runs ``engine`` on the workload file ``path``."""
    if engine in NODE_ENGINES:
        return ["node", str(NODE / "adapter.mjs"), engine, str(path)]
    if engine in PY312_ENGINES:
        return [str(PY312_VENV / "bin" / "python"), str(HERE / "py312" / "adapter.py"), engine, str(path)]
    return [sys.executable, "-m", "tests.bench.peers.engines", engine, str(path)]


def run_one(engine: str, path: Path, cap: float) -> Result:
    """Run ``engine`` on one workload file in a child process, at most ``cap`` seconds."""
    name, n = path.stem.rsplit("-", 1)
    result = Result(engine, name, int(n))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command(engine, path), stdout=out, stderr=err, cwd=ROOT, start_new_session=True)
        deadline = time.monotonic() + cap
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(child.pid, signal.SIGKILL)
                os.wait4(child.pid, 0)
                result.status, result.reason = "over cap", f"did not finish within {cap:.0f} s"
                return result
            time.sleep(0.02)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = out.read().decode().strip().splitlines()
        problem = err.read().decode().strip()
    if child.returncode != 0 or not lines:
        result.status = "failed"
        result.reason = (problem.splitlines() or [f"exit {child.returncode}, no output"])[-1][:300]
        return result
    found = json.loads(lines[-1])
    if "unsupported" in found:
        result.status, result.reason = "unsupported", found["unsupported"]
        return result
    latencies = sorted(found["latencies"])
    result.load_s = found["load_s"]
    result.median_s = statistics.median(latencies)
    result.p95_s = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
    result.peak_rss = usage.ru_maxrss * 1024
    result.rss_before_load = found["rss_before_load"]
    result.checksum = found["checksum"]
    return result


@dataclass
class Plan:
    """What to run: engines, workloads, sizes, rounds, and the cap per run."""

    engines: list[str]
    workloads: list[str]
    sizes: list[int]
    rounds: int = 1
    cap: float = 600.0
    data: Path = ROOT / "out" / "bench" / "data"
    largest: dict[str, int] = field(default_factory=dict)
    """Per engine, the largest N to try (the stages and the slow peers stop early)."""


def runs(plan: Plan, missing: dict[str, str]) -> Iterator[Result]:
    """Every run of the plan, in order: by size, then workload, then round, engines rotating each round (so no
    engine always runs first, on a cold machine, or last)."""
    over_cap: dict[tuple[str, str], int] = {}
    for n in plan.sizes:
        for name in plan.workloads:
            path = workloads.write(plan.data, name, n)
            live, per_version = _shape(path)
            expected, expected_from = "", ""
            for round_ in range(plan.rounds):
                order = plan.engines[round_ % len(plan.engines):] + plan.engines[:round_ % len(plan.engines)]
                rank = {engine: i for i, engine in enumerate(REFERENCE)}
                order = sorted(order, key=lambda engine: rank.get(engine, len(rank)))  # the reference first
                for engine in order:
                    result = _run_or_skip(engine, name, n, path, plan, missing, over_cap)
                    result.round, result.live_records, result.changes_per_version = round_, live, per_version
                    if result.status == "over cap":
                        over_cap[engine, name] = n
                    if result.status == "ok":
                        if not expected:
                            expected, expected_from = result.checksum, engine
                        result.expected = expected
                        if result.checksum != expected:
                            result.status = "wrong answer"
                            result.reason = f"checksum {result.checksum}, expected {expected} (from {expected_from})"
                    yield result


def _shape(path: Path) -> tuple[int, int]:
    """A workload file's live input records after its last version (for memory per live record), and its
    changes per version."""
    with open(path) as source:
        found = json.load(source)
    live = sum(len(records) for records in found["inputs"].values()) + sum(
        diff for changes in found["versions"] for _, _, diff in changes)
    return live, len(found["versions"][0])


def _run_or_skip(engine: str, name: str, n: int, path: Path, plan: Plan, missing: dict[str, str],
                 over_cap: dict[tuple[str, str], int]) -> Result:
    if engine in missing:
        return Result(engine, name, n, status="not installed", reason=missing[engine])
    if (engine, name) in over_cap:
        return Result(engine, name, n, status="skipped", reason=f"over the cap at N={over_cap[engine, name]:,}")
    if n > plan.largest.get(engine, n):
        return Result(engine, name, n, status="skipped", reason=f"runs up to N={plan.largest[engine]:,}")
    return run_one(engine, path, plan.cap)
