"""Engines the checker can run: final in process, Python plug-ins, and any program speaking the protocol.

The protocol (the README's 'The protocol an engine speaks') is JSON lines
over a child process's standard input and output. ``CommandEngine`` is the
checker's side of it, ``serve`` an engine's side for any engine with a
``run(case) -> Run`` method, and ``RecordedEngine`` reads what an engine
wrote earlier from files. A Python plug-in (``--engine module:factory``, the
README's 'A Python engine') is served in a child process of its own, so the
checker holds it to the same deadline and caps as any other; the ladder's
stages are plug-ins (``ladder:v3``, ``v3`` for short).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

from .cache import cache_folder
from .cases import Case, Message
from .drive import FinalEngine, Run
from .encoding import PlainVersion, decode, decode_version, encode, encode_version
from .versions import Update

DEFAULT_TIMEOUT = 60.0
"""Seconds an engine has for one case, from the case's first line to its answer's closing line."""
MAX_OUTPUT_LINES = 1_000_000
"""Most output lines an engine may write for one case. final answers the committed cases in at most
3,280 lines and 540 KB; a cap this far above leaves room for larger case sets and still bounds what
the checker holds for one case, since every line is parsed and kept until the case is judged."""
MAX_OUTPUT_BYTES = 64 * 2**20
"""Most bytes of output an engine may write for one case (64 MiB), for the same reason, and because
a line is kept whole until its newline: this also bounds one endless line."""
READ_SIZE = 2**16
"""Bytes read from or written to an engine at once: a pipe's capacity on Linux."""
EXIT_GRACE = 1.0
"""Seconds an engine that closed its output is given to exit, so that its exit status can be reported."""
STDERR_GRACE = 1.0
"""Seconds given, once an engine's process group is killed, to read the last of its standard error."""
STDERR_TAIL_LINES = 20
STDERR_TAIL_BYTES = 2048
"""What a failed case's reason quotes of the engine's standard error: the end of a stack trace,
short enough to read in a terminal and to keep for every failed case of a report."""
D2TS = Path(__file__).with_name("d2ts")
D2MINI = Path(__file__).with_name("d2mini")
PATHWAY = Path(__file__).with_name("pathway")
PYDBSP = Path(__file__).with_name("pydbsp")


class EngineError(RuntimeError):
    """An engine that cannot be started: an unknown name, a missing program, a failed install."""


class Engine(Protocol):
    name: str

    def run(self, case: Case) -> Run: ...

    def close(self) -> None: ...


# -- the protocol -------------------------------------------------------------------------

PROTOCOL = 2
"""The protocol's version, sent in every case's start line (``"protocol"``). Version 2 added, to version 1
(whose start lines carry no version), named outputs for a program with several and the frontier contract;
a case of a program with one output reads and is answered as in version 1."""


def case_lines(case: Case) -> Iterator[str]:
    """What the checker writes for one case: the start line, the case's messages, the end line."""
    start = {"case": case.name, "protocol": PROTOCOL, "program": case.program, "inputs": list(case.inputs),
             "dimensions": case.dimensions, **({"outputs": list(case.outputs)} if case.outputs else {})}
    yield json.dumps(start)
    for message in case.messages:
        yield json.dumps(message.to_json())
    yield json.dumps({"end": True})


def read_answer(lines: Iterable[str | bytes], dimensions: int, outputs: tuple[str, ...] = ()) -> tuple[Run, bool]:
    """An engine's answer to one case, up to and including its closing line, and whether it had one.

    ``dimensions`` is the case's: every version the engine writes must have
    that many coordinates. ``outputs`` are the case's outputs when it has
    several: each data and frontier line then names one (``"output"``).
    Output that breaks the protocol (not JSON, an unknown message, an update
    that is not ``[record, version, multiplicity]``, a multiplicity that is
    not an integer, a version of the wrong shape, a record the encoding
    cannot carry, a missing or unknown output name, a multiplicity of 0) is an
    ``error`` run (``broke_protocol``) whose reason quotes the line:
    ``protocol: output line N '<line>': <what is wrong>``. Lines read as
    bytes must be UTF-8, as JSON text is: a line that is not is such an
    error too, quoting its bytes (never read as U+FFFD and judged as a wrong
    record).
    """
    run = Run()
    for number, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as problem:
            bad = raw[problem.start:problem.end]
            reason = (f"protocol: output line {number} {raw.strip()[:120]!r}: not UTF-8 (byte {bad.hex(' ')} at "
                      f"offset {problem.start}); JSON text is UTF-8")
            return Run(status="error", reason=reason, broke_protocol=True), False
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("a message is a JSON object")
            if "data" in message:
                if not isinstance(message["data"], list):
                    raise ValueError("data is a list of updates [record, version, multiplicity]")
                run.add("data", [_update(item, dimensions, position) for position, item in enumerate(message["data"])],
                        _output(message, outputs))
            elif "frontier" in message:
                if not isinstance(message["frontier"], list):
                    raise ValueError("a frontier is a list of versions")
                run.add("frontier", [_version(value, dimensions) for value in message["frontier"]],
                        _output(message, outputs))
            elif "done" in message:
                return run, True
            elif "unsupported" in message or "error" in message:
                status = "unsupported" if "unsupported" in message else "error"
                return Run(status=status, reason=str(message[status]), events=run.events), True
            else:
                raise ValueError("expected data, frontier, done, unsupported or error")
        except ValueError as problem:  # EncodingError and JSONDecodeError are ValueErrors
            reason = f"protocol: output line {number} {line.strip()[:120]!r}: {problem}"
            return Run(status="error", reason=reason, broke_protocol=True), False
    return Run(status="error", reason="the engine's output ended before a closing line (done/unsupported/error)"), False


def _output(message: dict, outputs: tuple[str, ...]) -> str | None:
    """The output a data or frontier line is of: its ``"output"``, one of the case's ``outputs`` when it has
    several; none when it has one.

    Raises:
        ValueError: the name is missing, unknown, or given for a case with one output.
    """
    name = message.get("output")
    if not outputs:
        if "output" in message:
            raise ValueError(f"output {_quote(name)} named, but this case's program has one output: leave it out")
        return None
    if name not in outputs:
        said = "no output named" if name is None else f"output {_quote(name)} is not one of"
        raise ValueError(f"{said} this case's outputs {', '.join(outputs)}: each data and frontier line names one")
    return name


ZERO = ("multiplicity 0 says nothing: leave the update out (an engine's output need not be consolidated, but "
        "the entries that sum to 0 are dropped, as Rust DD's consolidation drops them)")
"""Why an output update of multiplicity 0 is a protocol failure, in the words the failure gives. An update
changes a record's multiplicity, and one of 0 changes nothing: a case holds none, and an engine that sends
them is most likely keeping, in its own collections, entries its consolidation should have dropped."""


def _update(item: Any, dimensions: int, position: int) -> Update:
    """The update at ``position`` of an output data message, checked: a record, a version of the case's
    shape, an integer multiplicity other than 0.

    Raises:
        ValueError: saying what is wrong with it.
    """
    if not isinstance(item, list) or len(item) != 3:
        raise ValueError(f"update {position} is not [record, version, multiplicity]")
    record, version, multiplicity = item
    if type(multiplicity) is not int:  # not isinstance: True is an int to Python, and 1.5 must not become 1
        raise ValueError(f"update {position}: multiplicity {_quote(multiplicity)} is not an integer")
    if multiplicity == 0:
        raise ValueError(f"update {position}: {ZERO}")
    return decode(record), _version(version, dimensions), multiplicity


def _version(value: Any, dimensions: int) -> PlainVersion:
    """An output version, checked against the case's number of coordinates.

    Raises:
        ValueError: not a version, or a version of another shape than the case's.
    """
    version = decode_version(value)
    coordinates = 1 if isinstance(version, int) else len(version)
    if coordinates != dimensions:
        shape = "integers" if dimensions == 1 else f"arrays of {dimensions} integers"
        raise ValueError(f"version {_quote(value)} has {coordinates} coordinate(s), but this case's versions "
                         f"are {shape}")
    return version


def _quote(value: Any) -> str:
    """A JSON value as a reason shows it: its text, cut short (the whole line is quoted beside it)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class CommandEngine:
    """An engine in a child process, speaking the protocol; restarted after a case it fails to answer.

    Nothing the engine does can hang the checker or exhaust its memory: a
    case has a wall-clock deadline (``timeout`` seconds from its first line;
    output does not extend it) and caps on the lines and bytes of output the
    engine may write for it (``max_lines``, ``max_bytes``). The engine runs
    in a session of its own, and its whole process group is killed when a
    case ends without a closing line (the engine died, broke the protocol,
    or hit the deadline or a cap) and when the run ends (``close``), so
    nothing it started is left running. The tail of its standard error is
    kept, and a failed case's reason quotes it with the engine's exit status.

    Invariant: ``_process``, ``_channel`` and ``_stderr`` are all None, or
    a started engine, the pipes to it, and the reader of its standard error.
    """

    def __init__(self, name: str, command: list[str], cwd: Path | None = None, timeout: float = DEFAULT_TIMEOUT,
                 max_lines: int = MAX_OUTPUT_LINES, max_bytes: int = MAX_OUTPUT_BYTES,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.command = command
        self.cwd = cwd
        self.env = env
        self.timeout = timeout
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._process: subprocess.Popen | None = None
        self._channel: _Channel | None = None
        self._stderr: _Tail | None = None
        self._token = uuid.uuid4().hex
        self.escaped: list[str] = []
        """Every process the engine started that had left its process group when the group was killed, as
        ``pid N (session S): command``: each was found and killed apart (``leftovers``)."""

    def _start(self) -> _Channel:
        if self._process is not None and self._process.poll() is not None:
            self.close()  # it ended between cases: what it started goes with it, and a fresh one takes over
        if self._channel is None:
            try:
                env = {**(os.environ if self.env is None else self.env), ENGINE_MARK: self._token}
                self._process = subprocess.Popen(
                    self.command, cwd=self.cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, bufsize=0, start_new_session=True,
                )
            except OSError as error:
                raise EngineError(f"cannot start {shlex.join(self.command)}: {error}") from None
            self._channel = _Channel(self._process)
            self._stderr = _Tail(self._process.stderr, echo=bool(os.environ.get("CONFORMANCE_ENGINE_STDERR")))
        return self._channel

    def run(self, case: Case, timeout: float | None = None) -> Run:
        """The engine's answer to ``case``, or an ``error`` run saying why there is none.

        ``timeout`` shortens the case's deadline below the engine's own (the
        shrinker's budget does); a run stopped by a deadline says so in
        ``timed_out``. The reason of a case that got no closing line ends
        with how the engine ended (its exit status, or that it was stopped)
        and the last lines of its standard error, which ``exit_status`` and
        ``stderr`` hold too, and names any process it started that left its
        process group and was killed apart (``escaped``).
        """
        channel = self._start()
        channel.send(case_lines(case))
        limit = self.timeout if timeout is None else min(timeout, self.timeout)
        try:
            run, closed = read_answer(channel.lines(limit, self.max_lines, self.max_bytes), case.dimensions,
                                      case.outputs)
        except _Stopped as stopped:
            run, closed = Run(status="error", reason=str(stopped), timed_out=stopped.deadline), False
        if closed:
            if not channel.sent_all():
                self.close()  # it answered before reading the whole case, and would read the rest as the next
            return run
        # What it writes next may still belong to this case, so it is stopped and restarted.
        known = len(self.escaped)
        run.exit_status, run.stderr = self._stop(EXIT_GRACE if channel.ended() else 0)
        run.reason += _ending(run.exit_status, run.stderr) + _escapes(self.escaped[known:])
        return run

    def _stop(self, grace: float) -> tuple[int | None, str]:
        """Stop the engine: its exit status if it ended by itself (given ``grace`` seconds to), else None,
        and the last lines of its standard error."""
        assert self._process is not None and self._stderr is not None
        process, stderr = self._process, self._stderr
        try:
            status: int | None = process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            status = None
        self.close()
        return status, stderr.text()

    def close(self) -> None:
        """Kill the engine's process group (the engine and everything it started), and reap the engine."""
        if self._process is None or self._stderr is None:
            return
        process, stderr = self._process, self._stderr
        self._process = self._channel = self._stderr = None
        try:
            # The group id is the engine's pid, and stays taken while anything in the group lives,
            # even once the engine itself is reaped: it cannot name another program's group.
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # everything in the group has ended
        process.wait()
        self.escaped += leftovers(self._token, process.pid)
        stderr.finish()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


class _Stopped(Exception):
    """The checker stopped reading an answer: the case's deadline passed (``deadline``), or its output went
    over a cap."""

    def __init__(self, reason: str, deadline: bool = False) -> None:
        super().__init__(reason)
        self.deadline = deadline


class _Channel:
    """The checker's ends of an engine's standard input and output, never blocking on either.

    A case's lines are written while its answer is read, in one loop under
    one deadline, and the output read is counted against the caps, so the
    engine can neither stall the checker nor flood it.

    Invariant: ``_lines`` holds the complete lines read and not yet taken,
    ``_partial`` the bytes after the last newline read. A read happens only
    when ``_lines`` is empty, so ``_lines`` never holds more than one read
    (``READ_SIZE`` bytes), and ``_partial`` no more than the byte cap.
    ``_unsent`` is what is left to write of the case's lines.
    """

    def __init__(self, process: subprocess.Popen) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin, self._stdout = process.stdin.fileno(), process.stdout.fileno()
        os.set_blocking(self._stdin, False)
        self._poller = select.poll()
        self._poller.register(self._stdout, select.POLLIN)
        self._lines: deque[bytes] = deque()
        self._partial = bytearray()
        self._unsent = memoryview(b"")
        self._ended = False

    def send(self, lines: Iterable[str]) -> None:
        """Write ``lines`` to the engine, as the next ``lines()`` reads its answer."""
        self._unsent = memoryview("".join(line + "\n" for line in lines).encode())
        self._poller.register(self._stdin, select.POLLOUT)

    def sent_all(self) -> bool:
        return not self._unsent

    def ended(self) -> bool:
        """Whether the engine closed its standard output (most likely, it exited)."""
        return self._ended

    def lines(self, timeout: float, max_lines: int, max_bytes: int) -> Iterator[bytes]:
        """The engine's output lines as they come, as bytes (``read_answer`` decodes them), until it closes
        its output, for at most ``timeout`` seconds, ``max_lines`` lines and ``max_bytes`` bytes.

        Raises:
            _Stopped: the deadline passed or a cap was exceeded, saying which and how to raise it.
        """
        deadline = time.monotonic() + timeout
        count = size = 0
        while True:
            while self._lines:
                yield self._lines.popleft()
            if self._ended:
                if self._partial:
                    yield bytes(self._partial)
                    self._partial.clear()
                return
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise _Stopped(f"no answer within {timeout:g} s (a case's deadline counts from its first line "
                               "and output does not extend it; --timeout sets it)", deadline=True)
            for descriptor, _ in self._poller.poll(wait * 1000):
                if descriptor == self._stdin:
                    self._write()
                    continue
                chunk = os.read(self._stdout, READ_SIZE)
                if not chunk:
                    self._ended = True
                    self._poller.unregister(self._stdout)
                    continue
                size += len(chunk)
                if size > max_bytes:
                    raise _Stopped(f"more than {max_bytes:,} bytes of output for one case (the cap on output "
                                   "bytes; --max-output-bytes raises it)")
                count += self._split(chunk)
                if count > max_lines:
                    raise _Stopped(f"more than {max_lines:,} output lines for one case (the cap on output "
                                   "lines; --max-output-lines raises it)")

    def _split(self, chunk: bytes) -> int:
        """Add what was read to the lines and the partial line; returns how many lines it completed."""
        first, *rest = chunk.split(b"\n")
        if not rest:
            self._partial += first  # in place: a long line read in many chunks is not copied each time
            return 0
        self._lines.append(bytes(self._partial + first))
        self._lines.extend(rest[:-1])
        self._partial = bytearray(rest[-1])
        return len(rest)

    def _write(self) -> None:
        try:
            written = os.write(self._stdin, self._unsent[:READ_SIZE])
        except BlockingIOError:
            return
        except OSError:  # it closed its standard input; what it wrote says why
            self._poller.unregister(self._stdin)
            return
        self._unsent = self._unsent[written:]
        if not self._unsent:
            self._poller.unregister(self._stdin)


class _Tail:
    """The end of what an engine writes to its standard error, read by a thread as it comes.

    Read at once, so an engine that logs a lot never blocks on a full pipe;
    kept short (``STDERR_TAIL_BYTES``, shown as at most ``STDERR_TAIL_LINES``
    lines), so one that logs forever does not fill the checker's memory; and
    passed through to the checker's standard error when ``echo`` is set.
    """

    def __init__(self, stream: IO[bytes] | None, echo: bool) -> None:
        assert stream is not None
        self._stream = stream
        self._kept = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, args=(echo,), daemon=True)
        self._reader.start()

    def _read(self, echo: bool) -> None:
        while chunk := self._stream.read(READ_SIZE):
            if echo:
                sys.stderr.write(chunk.decode("utf-8", errors="replace"))
                sys.stderr.flush()
            with self._lock:
                self._kept = (self._kept + chunk)[-STDERR_TAIL_BYTES:]

    def finish(self) -> None:
        """Once the engine's group is killed: let the reader take what is left, then close the stream.

        A process that left the group may still hold the pipe open; the
        reader is then left to it, as a daemon thread, after ``STDERR_GRACE``.
        """
        self._reader.join(STDERR_GRACE)
        if not self._reader.is_alive():
            self._stream.close()

    def text(self) -> str:
        """The last lines kept, as text (the first may be cut short)."""
        with self._lock:
            kept = self._kept
        return "\n".join(kept.decode("utf-8", errors="replace").splitlines()[-STDERR_TAIL_LINES:])


ENGINE_MARK = "DD_CONFORMANCE_ENGINE"
"""The environment variable the checker sets, to a token of its own, for each engine it starts: whatever
the engine starts inherits it, so a process that left the engine's process group is still known as the
engine's (unless it cleared its environment)."""


def leftovers(token: str, group: int) -> list[str]:
    """Kill every process that carries ``token`` in its environment (``ENGINE_MARK``) but is not in the
    process group ``group``: what an engine started and moved out of its group (``setsid``, ``setpgid``),
    which killing the group missed. Returns each as ``pid N (session S): command``.

    Where the platform has no ``/proc`` with environments (macOS, Windows) nothing is found: the README
    says such a process escapes there.
    """
    mark = f"{ENGINE_MARK}={token}".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if mark not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it ended meanwhile, or is not ours to read
            continue
        pid, process_group, session = int(entry.name), int(fields[2]), int(fields[3])
        if pid == os.getpid() or process_group == group:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        found.append(f"pid {pid} (session {session}): {command[:80]}")
    return found


def _escapes(escaped: list[str]) -> str:
    """What a failed case's reason says of the processes the engine's group had lost (``leftovers``)."""
    if not escaped:
        return ""
    return (f"\n{len(escaped)} process(es) it started had left its process group, escaping the kill, and were "
            "found by the checker's mark in their environment and killed: " + "; ".join(escaped))


def _ending(status: int | None, stderr: str) -> str:
    """How an engine that gave a case no closing line ended, and what it last wrote to standard error."""
    if status is None:
        how = "the engine was stopped, with everything it started, and is restarted for the next case"
    elif status < 0:
        how = f"the engine was killed by signal {-status}"
    else:
        how = f"the engine exited with status {status}"
    said = f"; its stderr ended with:\n{textwrap.indent(stderr, '  ')}" if stderr else "; its stderr was empty"
    return f"; {how}{said}"

def answer_lines(run: Run) -> Iterator[str]:
    """An engine's side: a run's output messages and its closing line, as protocol lines."""
    for kind, items, *output in run.events:
        named = {"output": output[0]} if output else {}
        if kind == "data":
            yield json.dumps({"data": [[encode(r), encode_version(v), m] for r, v, m in items], **named})
        else:
            yield json.dumps({"frontier": [encode_version(v) for v in items], **named})
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
                        tuple(case["messages"]), (), outputs=tuple(case.get("outputs", ())))
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
        return read_answer(path.read_bytes().splitlines(), case.dimensions, case.outputs)[0]

    def close(self) -> None:
        pass


def record(run: Run, directory: Path, case: Case) -> None:
    """Write ``run`` as the file ``RecordedEngine`` reads for ``case``."""
    path = Path(directory) / f"{case.name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in answer_lines(run)))


# -- by name -------------------------------------------------------------------------------


def d2ts_engine(timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
                max_bytes: int = MAX_OUTPUT_BYTES, arguments: Sequence[str] = ()) -> CommandEngine:
    """d2ts through its Node adapter, its pinned npm dependency installed on first use.

    ``timeout``, ``max_lines`` and ``max_bytes`` are ``CommandEngine``'s deadline and output caps;
    ``arguments`` go to the adapter (``--workarounds``, its REPORT says).

    Raises:
        EngineError: node or npm is missing, or the install fails.
    """
    return _npm_engine("d2ts", D2TS, timeout, max_lines, max_bytes, arguments)


@contextmanager
def _installing(folder: Path) -> Iterator[None]:
    """Hold ``folder/.install.lock`` while checking and installing into ``folder``.

    Two processes that find an install missing at once (two test workers, two
    oracle runs) take turns: the second finds the install done. Without
    ``fcntl`` (Windows) installs are not serialized.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _cached(name: str, pins: bytes) -> Path:
    """The folder of the user cache (``cache_folder``) where ``name``'s install for these ``pins`` goes, made
    if missing: named by the pins' hash, so new pins get a folder of their own."""
    place = cache_folder() / f"{name}-{hashlib.sha256(pins).hexdigest()[:16]}"
    place.mkdir(parents=True, exist_ok=True)
    return place


def _npm_engine(name: str, folder: Path, timeout: float, max_lines: int, max_bytes: int,
                arguments: Sequence[str] = ()) -> CommandEngine:
    """The Node adapter ``folder/adapter.mjs`` with ``arguments``, run from a folder of the user cache
    (``cache_folder``) named by the pinned lock file's hash: ``npm ci`` installs ``@electric-sql/<name>``
    there on first use, and the adapter is copied beside it (Node resolves a package from the importing
    file's folder up), so nothing is written into the package's folder."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise EngineError(f"the {name} adapter needs {tool} on the PATH (Node.js 18 or newer)")
    pins = [(folder / file).read_bytes() for file in ("package.json", "package-lock.json")]
    place = _cached(name, b"".join(pins))
    with _installing(place):
        if not (place / "node_modules" / "@electric-sql" / name).exists():
            print(f"installing {name} (npm ci in {place}) ...", file=sys.stderr)
            for file, pinned in zip(("package.json", "package-lock.json"), pins, strict=True):
                (place / file).write_bytes(pinned)
            result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=place, capture_output=True,
                                    text=True)
            if result.returncode != 0:
                raise EngineError(f"npm ci in {place} failed:\n{result.stderr[-2000:]}")
        adapter = (folder / "adapter.mjs").read_bytes()
        if not (place / "adapter.mjs").exists() or (place / "adapter.mjs").read_bytes() != adapter:
            (place / "adapter.mjs").write_bytes(adapter)
    return CommandEngine(" ".join((name, *arguments)), ["node", str(place / "adapter.mjs"), *arguments],
                         timeout=timeout, max_lines=max_lines, max_bytes=max_bytes)


STAGES = ("v0", "v1", "v2", "v3", "v4", "v5")
"""The ladder's stages: plug-ins in the repository's ``ladder.py`` (``--engine v3`` is ``ladder:v3``)."""


def plugin(spec: str) -> Engine:
    """The engine a Python plug-in names, made in this process: ``module:factory`` imports ``module`` and
    calls ``factory()``, which returns an object with ``run(case) -> Run`` (and, optionally, ``close()``).

    Raises:
        EngineError: the module cannot be imported, has no such factory, or the factory gives no engine.
    """
    module_name, _, factory_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise EngineError(f"--engine {spec}: cannot import {module_name} ({error}); run from the folder that "
                          "holds it, or put that folder on PYTHONPATH") from None
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise EngineError(f"--engine {spec}: {module_name} has no factory {factory_name!r} (a function, or a "
                          "class, called with no arguments, that returns the engine)")
    engine = factory()
    if not callable(getattr(engine, "run", None)):
        raise EngineError(f"--engine {spec}: {factory_name}() returned {type(engine).__name__}, which has no "
                          "run(case) method returning a Run")
    if not callable(getattr(engine, "close", None)):
        engine.close = lambda: None
    if not hasattr(engine, "name"):
        engine.name = spec
    return engine


def plugin_spec(name: str) -> str | None:
    """The ``module:factory`` an ``--engine`` value names (a stage is ``ladder:<stage>``), or None."""
    if name in STAGES:
        return f"ladder:{name}"
    module, colon, factory = name.partition(":")
    if colon and module != "cmd" and module.replace(".", "").replace("_", "").isalnum() and factory.isidentifier():
        return name
    return None


def served(spec: str, timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
           max_bytes: int = MAX_OUTPUT_BYTES) -> CommandEngine:
    """A Python plug-in served in a child process (``serve --engine module:factory``), held like any engine.

    The plug-in is made once here first, so that a wrong spec fails at once with
    its reason instead of as every case's error. The child finds the plug-in's
    module, and final, where this process did: their folders go first on the
    child's PYTHONPATH.

    Raises:
        EngineError: as ``plugin``; or, for a stage, there is no ``ladder`` module (an installed
        package has final only: the stages come with a clone of the repository).
    """
    module_name = spec.partition(":")[0]
    if module_name == "ladder" and importlib.util.find_spec("ladder") is None:
        raise EngineError("the stages v0..v5 come with a clone of the repository (its ladder.py), not with the "
                          "package: run the checker from the clone's root")
    plugin(spec).close()
    found = importlib.util.find_spec(module_name.split(".")[0])
    paths = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
    if found is not None and found.origin:
        origin = Path(found.origin)
        paths.insert(0, str(origin.parent.parent if origin.name == "__init__.py" else origin.parent))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
    command = [sys.executable, "-m", "final.conformance", "serve", "--engine", spec]
    return CommandEngine(spec, command, timeout=timeout, max_lines=max_lines, max_bytes=max_bytes, env=env)


def d2mini_engine(timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
                  max_bytes: int = MAX_OUTPUT_BYTES, arguments: Sequence[str] = ()) -> CommandEngine:
    """d2mini through its Node adapter, its pinned npm dependency installed on first use, as d2ts's.

    Raises:
        EngineError: node or npm is missing, or the install fails.
    """
    return _npm_engine("d2mini", D2MINI, timeout, max_lines, max_bytes, arguments)


def python312() -> str | None:
    """A Python 3.12 or newer that runs, for pathway's and pydbsp's venvs; 3.12 first, since the pins were
    resolved with it. pyenv's (its shims on the PATH fail unless that version is pyenv's selected one),
    else one on the PATH; None when there is none."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = []
    for minor in ("3.12", "3.13"):
        candidates += [str(path) for path in sorted(pyenv.glob(f"{minor}*/bin/python{minor}"))]
        candidates.append(shutil.which(f"python{minor}") or "")
    for candidate in candidates:
        if not candidate:
            continue
        probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    return None


def venv_engine(name: str, folder: Path, timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
                max_bytes: int = MAX_OUTPUT_BYTES) -> CommandEngine:
    """A Python adapter (``folder/adapter.py``) run by a venv of its own (Python >= 3.12), made on first use
    from the pinned ``folder/requirements.txt`` in the user cache (``cache_folder``), in a folder named by
    that file's hash: new pins make a new venv, and nothing is written into the package's folder.

    Raises:
        EngineError: no Python 3.12 or newer, or making the venv or installing into it fails.
    """
    wanted = (folder / "requirements.txt").read_bytes()
    place = _cached(name, wanted)
    venv, marker = place / ".venv", place / "installed-requirements.txt"
    python = venv / "bin" / "python"
    with _installing(place):
        if not (python.exists() and marker.exists() and marker.read_bytes() == wanted):
            interpreter = python312()
            if interpreter is None:
                raise EngineError(f"the {name} adapter needs Python 3.12 or newer, and none was found (pyenv "
                                  "install 3.12, or put python3.12 on the PATH)")
            print(f"installing {name} (a venv in {place} made with {interpreter}) ...", file=sys.stderr)
            for step in ([interpreter, "-m", "venv", "--clear", str(venv)],
                         [str(python), "-m", "pip", "install", "-q", "-r", str(folder / "requirements.txt")]):
                result = subprocess.run(step, capture_output=True, text=True)
                if result.returncode != 0:
                    raise EngineError(f"{shlex.join(step)} failed:\n{(result.stdout + result.stderr)[-2000:]}")
            marker.write_bytes(wanted)
    return CommandEngine(name, [str(python), str(folder / "adapter.py")], timeout=timeout, max_lines=max_lines,
                         max_bytes=max_bytes)


def pathway_engine(timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
                   max_bytes: int = MAX_OUTPUT_BYTES) -> CommandEngine:
    """pathway through its Python adapter, in a venv (about 1.5 GB) made on first use (``venv_engine``).

    Raises:
        EngineError: as ``venv_engine``.
    """
    return venv_engine("pathway", PATHWAY, timeout, max_lines, max_bytes)


def pydbsp_engine(timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
                  max_bytes: int = MAX_OUTPUT_BYTES) -> CommandEngine:
    """pydbsp through its Python adapter, in a venv made on first use (``venv_engine``).

    Raises:
        EngineError: as ``venv_engine``.
    """
    return venv_engine("pydbsp", PYDBSP, timeout, max_lines, max_bytes)


def engine_named(name: str, timeout: float = DEFAULT_TIMEOUT, max_lines: int = MAX_OUTPUT_LINES,
                 max_bytes: int = MAX_OUTPUT_BYTES) -> Engine:
    """``final``, ``v0``..``v5``, ``module:factory``, ``d2ts``, ``d2mini`` (either followed by its adapter's
    arguments: ``d2mini --workarounds``), ``pathway``, ``pydbsp``, or ``cmd:<command line>``.

    ``timeout``, ``max_lines`` and ``max_bytes`` are the deadline per case and the output caps of
    the engines in a child process: all but final, which runs in this process.

    Raises:
        EngineError: any other name, or an engine that cannot be set up.
    """
    if name == "final":
        return FinalEngine()
    spec = plugin_spec(name)
    if spec is not None:
        return served(spec, timeout, max_lines, max_bytes)
    peer, *arguments = name.split() or [""]
    if peer == "d2ts":
        return d2ts_engine(timeout, max_lines, max_bytes, arguments)
    if peer == "d2mini":
        return d2mini_engine(timeout, max_lines, max_bytes, arguments)
    if name == "pathway":
        return pathway_engine(timeout, max_lines, max_bytes)
    if name == "pydbsp":
        return pydbsp_engine(timeout, max_lines, max_bytes)
    if name.startswith("cmd:") and name[4:].strip():
        return CommandEngine(name, shlex.split(name[4:]), timeout=timeout, max_lines=max_lines, max_bytes=max_bytes)
    raise EngineError(f"unknown engine {name!r}: use final, one of {', '.join(STAGES)}, module:factory (a Python "
                      "plug-in), d2ts, d2mini, pathway, pydbsp, or cmd:<command line>")


def serving(name: str) -> Engine:
    """The engine ``serve --engine NAME`` answers with, in this process: final, a stage, or a plug-in.

    Raises:
        EngineError: as ``plugin``, or a name that is none of these.
    """
    if name == "final":
        return FinalEngine()
    spec = plugin_spec(name)
    if spec is None:
        raise EngineError(f"serve --engine {name!r}: use final, one of {', '.join(STAGES)}, or module:factory")
    return plugin(spec)
