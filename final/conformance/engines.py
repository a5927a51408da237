"""Engines the checker can run: this project's stages in process, and any program speaking the protocol.

The protocol (the README's 'The protocol an engine speaks') is JSON lines
over a child process's standard input and output. ``CommandEngine`` is the
checker's side of it, ``serve`` an engine's side for this project's stages
(``python -m final.conformance serve --engine v3``), and ``RecordedEngine``
reads what an engine wrote earlier from files.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from .cases import Case, Message
from .encoding import EncodingError, decode, decode_version, encode, encode_version
from .stages import STAGES, Run, run_stage

DEFAULT_TIMEOUT = 60.0
D2TS = Path(__file__).with_name("d2ts")


class EngineError(RuntimeError):
    """An engine that cannot be started: an unknown name, a missing program, a failed install."""


class Engine(Protocol):
    name: str

    def run(self, case: Case) -> Run: ...

    def close(self) -> None: ...


class StageEngine:
    """One of this project's stages, run in this process."""

    def __init__(self, stage: str) -> None:
        self.name = stage

    def run(self, case: Case) -> Run:
        return run_stage(self.name, case)

    def close(self) -> None:
        pass


# -- the protocol -------------------------------------------------------------------------


def case_lines(case: Case) -> Iterator[str]:
    """What the checker writes for one case: the start line, the case's messages, the end line."""
    start = {"case": case.name, "program": case.program, "inputs": list(case.inputs), "dimensions": case.dimensions}
    yield json.dumps(start)
    for message in case.messages:
        yield json.dumps(message.to_json())
    yield json.dumps({"end": True})


def read_answer(lines: Iterator[str]) -> tuple[Run, bool]:
    """An engine's answer to one case, up to and including its closing line, and whether it had one.

    Output that breaks the protocol (not JSON, an unknown message, a record
    or version the encoding cannot carry) is an ``error`` run saying what.
    """
    run = Run()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if "data" in message:
                run.events.append(("data", [(decode(r), decode_version(v), int(m)) for r, v, m in message["data"]]))
            elif "frontier" in message:
                run.events.append(("frontier", [decode_version(v) for v in message["frontier"]]))
            elif "done" in message:
                return run, True
            elif "unsupported" in message or "error" in message:
                status = "unsupported" if "unsupported" in message else "error"
                return Run(status=status, reason=str(message[status]), events=run.events), True
            else:
                raise ValueError("expected data, frontier, done, unsupported or error")
        except (ValueError, TypeError, EncodingError, AttributeError) as problem:
            reason = f"protocol: output line {number} {line.strip()[:120]!r}: {problem}"
            return Run(status="error", reason=reason), False
    return Run(status="error", reason="the engine's output ended before a closing line (done/unsupported/error)"), False


class CommandEngine:
    """An engine in a child process, speaking the protocol; restarted after a case it fails to answer."""

    def __init__(self, name: str, command: list[str], cwd: Path | None = None, timeout: float = DEFAULT_TIMEOUT):
        self.name = name
        self.command = command
        self.cwd = cwd
        self.timeout = timeout
        self._process: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            try:
                self._process = subprocess.Popen(
                    self.command, cwd=self.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=sys.stderr if os.environ.get("CONFORMANCE_ENGINE_STDERR") else subprocess.DEVNULL,
                    text=True, bufsize=1,
                )
            except OSError as error:
                raise EngineError(f"cannot start {shlex.join(self.command)}: {error}") from None
            self._lines = queue.Queue()
            threading.Thread(target=_pump, args=(self._process.stdout, self._lines), daemon=True).start()
        return self._process

    def run(self, case: Case) -> Run:
        process = self._start()
        writer = threading.Thread(target=_write_all, args=(process.stdin, case_lines(case)), daemon=True)
        writer.start()
        run, closed = read_answer(self._answer_lines())
        writer.join(timeout=self.timeout)
        if not closed or writer.is_alive():
            self.close()  # what it writes next may still belong to this case: start afresh
        return run

    def _answer_lines(self) -> Iterator[str]:
        while True:
            try:
                line = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                self.close()
                yield json.dumps({"error": f"no answer within {self.timeout:g} s (the engine was restarted)"})
                return
            if line is None:
                return
            yield line

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


def _pump(stream: IO[str], lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _write_all(stream: IO[str], lines: Iterator[str]) -> None:
    try:
        for line in lines:
            stream.write(line + "\n")
        stream.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass  # the engine went away; the reader reports it


def answer_lines(run: Run) -> Iterator[str]:
    """An engine's side: a run's output messages and its closing line, as protocol lines."""
    for kind, items in run.events:
        if kind == "data":
            yield json.dumps({"data": [[encode(r), encode_version(v), m] for r, v, m in items]})
        else:
            yield json.dumps({"frontier": [encode_version(v) for v in items]})
    if run.status == "done":
        yield json.dumps({"done": True})
    else:
        yield json.dumps({run.status: run.reason})


def serve(engine: Engine, stdin: IO[str] = sys.stdin, stdout: IO[str] = sys.stdout) -> None:
    """Answer cases read from ``stdin`` with ``engine``, by the protocol, until the input ends."""
    case: dict[str, Any] | None = None
    for line in stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "case" in message:
            case = {**message, "messages": []}
        elif "end" in message and case is not None:
            bare = Case(case["case"], case["program"], tuple(case["inputs"]), case["dimensions"],
                        tuple(case["messages"]), ())
            for answer in answer_lines(engine.run(bare)):
                stdout.write(answer + "\n")
            stdout.flush()
            case = None
        elif case is not None:
            case["messages"].append(Message.from_json(message))


# -- recorded outputs --------------------------------------------------------------------


class RecordedEngine:
    """An engine's answers read from ``DIR/<case name>.jsonl``, written earlier (``--record``)."""

    def __init__(self, directory: Path) -> None:
        self.name = f"outputs:{directory}"
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise EngineError(f"{directory} is not a directory of recorded outputs")

    def run(self, case: Case) -> Run:
        path = self.directory / f"{case.name}.jsonl"
        if not path.exists():
            return Run(status="error", reason=f"no recorded output ({path} is missing)")
        return read_answer(iter(path.read_text().splitlines()))[0]

    def close(self) -> None:
        pass


def record(run: Run, directory: Path, case: Case) -> None:
    """Write ``run`` as the file ``RecordedEngine`` reads for ``case``."""
    path = Path(directory) / f"{case.name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in answer_lines(run)))


# -- by name -------------------------------------------------------------------------------


def d2ts_engine(timeout: float = DEFAULT_TIMEOUT) -> CommandEngine:
    """d2ts through its Node adapter, its pinned npm dependency installed on first use.

    Raises:
        EngineError: node or npm is missing, or the install fails.
    """
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise EngineError(f"the d2ts adapter needs {tool} on the PATH (Node.js 18 or newer)")
    if not (D2TS / "node_modules" / "@electric-sql" / "d2ts").exists():
        print("installing d2ts (npm ci in final/conformance/d2ts) ...", file=sys.stderr)
        result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=D2TS, capture_output=True, text=True)
        if result.returncode != 0:
            raise EngineError(f"npm ci in {D2TS} failed:\n{result.stderr[-2000:]}")
    return CommandEngine("d2ts", ["node", str(D2TS / "adapter.mjs")], timeout=timeout)


def engine_named(name: str, timeout: float = DEFAULT_TIMEOUT) -> Engine:
    """``v0``..``v5``, ``final``, ``d2ts``, or ``cmd:<command line>``.

    Raises:
        EngineError: any other name, or an engine that cannot be set up.
    """
    if name in STAGES:
        return StageEngine(name)
    if name == "d2ts":
        return d2ts_engine(timeout)
    if name.startswith("cmd:") and name[4:].strip():
        return CommandEngine(name, shlex.split(name[4:]), timeout=timeout)
    raise EngineError(f"unknown engine {name!r}: use one of {', '.join(STAGES)}, d2ts, or cmd:<command line>")
