"""Judging an engine's run of a case, shrinking a failing case, and the report.

An engine passes a case when its accumulated output equals the case's at
every version the case lists and at every version the engine wrote output
at, and it kept the frontier contract if it sent frontiers. Comparing
accumulations at all those versions is enough: two sets of differences whose
sums agree at every version either of them lies at are equal (by induction
over the versions in order), so nothing the engine did is missed.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .cases import Case, Message, allowed, file_name
from .catalog import program_named
from .drive import Run
from .encoding import PlainVersion, encode, encode_version, sort_text
from .engines import ZERO
from .expect import Expectations
from .generate import answer, tags_of
from .versions import Collection, accumulate, consolidate, join_closure, less_equal, sort_key

SHRINK_RUNS = 300
"""Most engine runs spent shrinking one program's failing case."""
SHRINK_SECONDS = 60.0
"""Seconds spent shrinking one program's failing case (``--shrink-budget``), its candidates' answers from
scratch included; then the smallest case found so far is reported as such."""


@dataclass
class Mismatch:
    """Where the engine's accumulated output differs from the case's at one version."""

    version: PlainVersion
    output: str | None = None
    """Which output, for a program with several (None for a program's one output)."""
    missing: Collection = field(default_factory=dict)
    """Records the engine lacks: ``{record: expected multiplicity}``."""
    extra: Collection = field(default_factory=dict)
    """Records the engine has that it should not: ``{record: its multiplicity}``."""
    wrong: dict[Hashable, tuple[int, int]] = field(default_factory=dict)
    """Records with the wrong multiplicity: ``{record: (expected, the engine's)}``."""

    def describe(self) -> str:
        parts = []
        for label, records in (("missing", self.missing), ("extra", self.extra)):
            if records:
                parts.append(f"{label} " + ", ".join(f"{_show(r)} x{m}" for r, m in _sorted(records)))
        if self.wrong:
            parts.append("wrong multiplicity " + ", ".join(
                f"{_show(r)} expected x{e} got x{g}" for r, (e, g) in _sorted(self.wrong)))
        where = "" if self.output is None else f"output {self.output!r} "
        return f"{where}at version {_show(self.version)}: " + "; ".join(parts)

    def to_json(self) -> dict:
        return {
            **({} if self.output is None else {"output": self.output}),
            "version": encode_version(self.version),
            "missing": [[encode(r), m] for r, m in _sorted(self.missing)],
            "extra": [[encode(r), m] for r, m in _sorted(self.extra)],
            "wrong": [[encode(r), e, g] for r, (e, g) in _sorted(self.wrong)],
        }


def _sorted(records: dict) -> list:
    return sorted(records.items(), key=lambda item: sort_text(encode(item[0])))


def _show(value: Any) -> str:
    return json.dumps(encode(value))


@dataclass
class Verdict:
    """One case's outcome: ``passed``, ``failed`` or ``unsupported``, and why."""

    case: str
    program: str
    status: str
    reason: str = ""
    mismatches: list[Mismatch] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    """Frontier-contract and version-shape problems, one sentence each."""
    exit_status: int | None = None
    """How an engine that gave the case no closing line exited (None: it was stopped, or did not end)."""
    stderr: str = ""
    """The last lines such an engine wrote to its standard error."""
    protocol: bool = False
    """Whether the case failed because the engine broke the protocol (its answer could not be judged)."""

    def lines(self, most: int = 3) -> list[str]:
        """What went wrong, as lines for the terminal (``most`` mismatches at most)."""
        lines = self.reason.splitlines()
        lines += self.violations
        lines += [mismatch.describe() for mismatch in self.mismatches[:most]]
        if len(self.mismatches) > most:
            lines.append(f"... and {len(self.mismatches) - most} more versions")
        return lines

    def failure(self) -> str:
        """What a failure is, in one line: the first of ``lines``, as ``check`` prints it first and an
        expectations file records it (``Expected.failure``)."""
        return (self.lines() or ["failed"])[0]

    def to_json(self) -> dict:
        value = asdict(self)
        value["mismatches"] = [mismatch.to_json() for mismatch in self.mismatches]
        return value


def judge(case: Case, run: Run, frontier_contract: bool = True) -> Verdict:
    """Compare an engine's ``run`` of ``case`` with what the case expects.

    With ``frontier_contract`` (the default) the engine must say, by its
    output frontier, when a version's output is complete, and say it truly;
    without, only the frontiers it chose to send are checked (``check
    --waive-frontier-contract``, which the report records).
    """
    verdict = Verdict(case.name, case.program, "passed")
    if run.status == "unsupported":
        verdict.status, verdict.reason = "unsupported", run.reason
        return verdict
    if run.status == "error":
        verdict.status, verdict.reason = "failed", f"error: {run.reason}"
        verdict.exit_status, verdict.stderr, verdict.protocol = run.exit_status, run.stderr, run.broke_protocol
        return verdict
    zero = zero_update(run)
    if zero is not None:
        verdict.status, verdict.reason, verdict.protocol = "failed", f"error: protocol: {zero}", True
        return verdict
    shape = shape_violation(case, run)
    if shape is not None:  # versions of another shape cannot be compared with the case's at all
        verdict.status, verdict.violations = "failed", [shape]
        return verdict
    outputs = case.outputs or (None,)
    unknown = sorted(str(name) for name in run.outputs() - set(outputs))
    if unknown:  # an output the program lacks, or named outputs for a program with one output (or none)
        verdict.status = "failed"
        verdict.violations = [f"output messages for {', '.join(unknown)}, which is not an output of this case "
                              f"(its outputs: {', '.join(map(str, outputs))})"]
        return verdict
    for output in outputs:
        verdict.violations += frontier_violations(case, run, frontier_contract, output)
        produced = consolidate(run.updates(output))
        expected = case.differences(output)
        versions = sorted({entry.version for entry in case.expected if entry.output == output} | set(produced),
                          key=sort_key)
        for version in versions:
            mismatch = compare(version, accumulate(expected, version), accumulate(produced, version), output)
            if mismatch is not None:
                verdict.mismatches.append(mismatch)
    if verdict.violations or verdict.mismatches:
        verdict.status = "failed"
    return verdict


def compare(version: PlainVersion, expected: Collection, got: Collection, output: str | None = None) -> Mismatch | None:
    if expected == got:
        return None
    mismatch = Mismatch(version, output)
    for record in expected.keys() | got.keys():
        want, have = expected.get(record, 0), got.get(record, 0)
        if have == 0:
            mismatch.missing[record] = want
        elif want == 0:
            mismatch.extra[record] = have
        elif want != have:
            mismatch.wrong[record] = (want, have)
    return mismatch


def zero_update(run: Run) -> str | None:
    """The first output update of multiplicity 0, naming its message and position, or None.

    The protocol refuses one (``engines.ZERO`` says why); an engine in a
    child process cannot get this far with one (``read_answer`` refuses the
    line), an engine in this process can.
    """
    for number, (kind, items, *_) in enumerate(run.events, 1):
        if kind != "data":
            continue
        for position, (record, version, multiplicity) in enumerate(items):
            if multiplicity == 0:
                return (f"output message {number}, update {position} [{_show(record)}, {_show(version)}, 0]: "
                        f"{ZERO}")
    return None


def shape_violation(case: Case, run: Run) -> str | None:
    """The first output version that is not of the case's shape, as a sentence, or None.

    An engine in a child process cannot get this far with one (``read_answer``
    refuses the line); an engine in this process can.
    """
    for kind, items, *_ in run.events:
        versions = [version for _, version, _ in items] if kind == "data" else items
        wrong_shape = next((v for v in versions if not case.fits(v)), None)
        if wrong_shape is not None:
            return (f"output at version {_show(wrong_shape)}, which is not a version of this case "
                    f"({case.dimensions} coordinate(s))")
    return None


def frontier_violations(case: Case, run: Run, required: bool = True, output: str | None = None) -> list[str]:
    """Where the engine's output frontiers of ``output`` break the frontier contract.

    An output frontier says that the output at every version it has passed is
    complete. So no data may follow at such a version, a frontier never goes
    back, and the last is ``[]`` (every version complete). With ``required``,
    an engine that sends no frontier at all breaks the contract too: without
    one, nothing downstream of it could ever know a version's output is final.
    """
    problems = []
    frontier: list | None = None
    named = "" if output is None else f"output {output!r}: "
    for kind, items in run.events_of(output):
        versions = [version for _, version, _ in items] if kind == "data" else items
        if kind == "data":
            late = next((v for v in versions if frontier is not None and not allowed(tuple(frontier), v)), None)
            if late is not None:
                problems.append(f"{named}output data at version {_show(late)} after the output frontier "
                                f"{_show(tuple(frontier))} had passed it")
        else:
            if frontier is not None and not all(allowed(tuple(frontier), v) for v in items):
                problems.append(f"{named}the output frontier went back from {_show(tuple(frontier))} to "
                                f"{_show(tuple(items))}")
            frontier = items
    if frontier is None and required:
        problems.append(named + "the engine sent no output frontier, so no version's output was ever complete: the "
                        "frontier contract asks for {\"frontier\": [...]} as versions complete, [] at the end "
                        "(check --waive-frontier-contract judges the data alone)")
    if frontier is not None and frontier:
        problems.append(f"{named}the output's last frontier is {_show(tuple(frontier))}, not [] (the output never "
                        "closed)")
    return problems


# -- shrinking -----------------------------------------------------------------------------------


def without(case: Case, drop: set[int]) -> Case:
    """``case`` with the updates at positions ``drop`` (counted over all data messages) removed, data
    messages left empty removed, and frontier messages that repeat their input's frontier removed (they
    change nothing); its tags are those it still earns. The expected output is not recomputed."""
    messages: list[Message] = []
    position = 0
    zero = 0 if case.dimensions == 1 else (0,) * case.dimensions
    frontiers: dict[str, tuple] = {name: (zero,) for name in case.inputs}
    for message in case.messages:
        if message.data is None:
            if frontiers[message.input] != message.frontier:
                messages.append(message)
                frontiers[message.input] = message.frontier
            continue
        kept = tuple(u for offset, u in enumerate(message.data, position) if offset not in drop)
        position += len(message.data)
        if kept:
            messages.append(Message(message.input, data=kept))
    kept_case = dataclasses.replace(case, messages=tuple(messages), expected=(), tags=())
    return dataclasses.replace(kept_case, tags=earned_tags(kept_case))


def physical(case: Case) -> bool:
    """Whether no record's accumulated multiplicity on any input is negative at any version."""
    for history in case.histories():
        versions = join_closure({version for _, version, _ in history})
        for version in versions:
            totals: dict = {}
            for record, at, multiplicity in history:
                if less_equal(at, version):
                    totals[record] = totals.get(record, 0) + multiplicity
            if any(total < 0 for total in totals.values()):
                return False
    return True


def size(case: Case) -> int:
    return sum(len(message.data or ()) for message in case.messages)


@dataclass
class Shrunk:
    """What shrinking a failing case found: the smallest failing ``case``, the engine ``runs`` and the
    ``seconds`` it took, and why it ``stopped``: ``done`` (no single update can go), ``budget`` (its
    seconds ran out), ``deadline`` (the run's ran out first), ``runs`` (``SHRINK_RUNS``), ``interrupted``
    (Ctrl-C), or ``not shrunk`` (not tried). Unless ``done``, a smaller failing case may exist."""

    case: Case
    runs: int = 0
    seconds: float = 0.0
    stopped: str = "done"

    def to_json(self) -> dict:
        return {"program": self.case.program, "updates": size(self.case), "runs": self.runs,
                "seconds": round(self.seconds, 3), "stopped": self.stopped, "case": self.case.to_json()}


def shrink(case: Case, fails: Callable[[Case], bool | None], seconds: float = SHRINK_SECONDS,
           runs: int = SHRINK_RUNS, clock: Callable[[], float] = time.monotonic) -> Shrunk:
    """The smallest case found by removing updates from ``case`` while ``fails`` holds (ddmin-like:
    chunks of half the updates, then quarters, down to single updates), keeping the inputs physical.

    Each candidate gets its expected output recomputed (``generate.answer``:
    final, checked against from scratch) before ``fails`` sees it. ``fails``
    returns None when it cannot tell within the budget (an engine's answer
    cut short by the time left, say): shrinking then stops there, as it does
    once ``seconds`` have passed or ``runs`` candidates were run, and the
    smallest failing case so far is the answer. Ctrl-C stops it the same way
    (``stopped`` is ``interrupted``), for the caller to end the run.
    """
    start = clock()
    shrunk = Shrunk(case)
    chunk = max(1, size(case) // 2)
    try:
        while shrunk.stopped == "done":
            removed_any = _shrink_pass(shrunk, chunk, fails, lambda: clock() - start >= seconds, runs)
            if chunk == 1 and not removed_any:
                break
            chunk = max(1, chunk // 2)
    except KeyboardInterrupt:
        shrunk.stopped = "interrupted"
    shrunk.seconds = clock() - start
    return shrunk


def _shrink_pass(shrunk: Shrunk, chunk: int, fails: Callable[[Case], bool | None], late: Callable[[], bool],
                 runs: int) -> bool:
    """One pass of ``shrink`` over ``shrunk.case`` in chunks of ``chunk`` updates, keeping each removal
    after which the case still fails; returns whether it removed any. Sets ``shrunk.stopped`` when the
    budget ends the pass."""
    removed_any = False
    start = 0
    while start < size(shrunk.case):
        candidate = without(shrunk.case, set(range(start, start + chunk)))
        if size(candidate) == 0 or not physical(candidate):
            start += chunk
            continue
        if shrunk.runs >= runs or late():
            shrunk.stopped = "runs" if shrunk.runs >= runs else "budget"
            return removed_any
        candidate = answer(_renamed(candidate, shrunk.case.name))
        shrunk.runs += 1
        failed = fails(candidate)
        if failed is None:
            shrunk.stopped = "budget"
            return removed_any
        if failed:
            shrunk.case, removed_any = candidate, True
        else:
            start += chunk
    return removed_any


def earned_tags(case: Case) -> tuple[str, ...]:
    """The tags ``case`` earns by what it holds (``generate.tags_of``): a shrunk case loses those it no
    longer earns, ``document`` included (it is not the document's example any more)."""
    return tags_of(program_named(case.program), case.dimensions, case.histories(), case.messages)


def _renamed(case: Case, name: str) -> Case:
    stem = name.removesuffix("-shrunk")
    return dataclasses.replace(case, name=f"{stem}-shrunk", source=f"shrunk from {stem}")


# -- the report ------------------------------------------------------------------------------------

REPORT_FORMAT = "dd-conformance-report/1"


STOPS = ("could not start", "interrupted", "deadline")
"""Why a run may end before it has judged every case it was given: an engine, cases or expectations it
could not set up; Ctrl-C or SIGTERM; its ``--deadline``."""
REASONS = (*STOPS, "protocol", "failed", "listed but not failing")
"""Why a run is not green, in the order a summary lists them: how it stopped, if it did; a new failure where
the engine broke the protocol, and another new failure (a wrong answer, an error, a deadline); a case
listed as failing that did not fail."""


@dataclass
class Report:
    """Every verdict of one engine over a case set, and the smallest failing case per program.

    ``label`` names the engine in the report (and its file name); ``case_set`` is the set's version and
    seed (``cases.case_set``), so a report says what it was judged on; ``frontier_contract`` says
    whether the engine was held to it (``judge``) or it was waived; ``expected`` are the failures the
    engine's CI knows of (``--expect``, the file named by ``expect``), against which ``new_failures``,
    ``failing_otherwise`` and ``not_failing`` are told. ``selected`` names the cases the run is to judge,
    once it knows them; ``stopped`` says why it ended before judging them all (one of ``STOPS``, with
    ``error`` saying why it could not start, and ``deadline`` the seconds it had), and ``escaped`` names
    processes the engine started outside its process group (``CommandEngine.escaped``).

    Invariant: the run is green (``ok``) exactly when ``reasons`` is empty: it was not stopped, and it
    has no failure but those expected, each failing as recorded, and no expected failure missing.
    """

    engine: str
    label: str = ""
    case_set: dict[str, Any] = field(default_factory=lambda: {"case_set": None, "seed": None})
    frontier_contract: bool = True
    verdicts: list[Verdict] = field(default_factory=list)
    smallest: dict[str, Case] = field(default_factory=dict)
    shrinking: dict[str, Shrunk] = field(default_factory=dict)
    expected: Expectations | None = None
    expect: Path | None = None
    selected: list[str] | None = None
    stopped: str | None = None
    error: str = ""
    deadline: float | None = None
    escaped: list[str] = field(default_factory=list)

    @property
    def interrupted(self) -> bool:
        return self.stopped == "interrupted"

    def counts(self) -> tuple[int, int, int]:
        statuses = [verdict.status for verdict in self.verdicts]
        return statuses.count("passed"), statuses.count("failed"), statuses.count("unsupported")

    def failing_otherwise(self) -> list[Verdict]:
        """The failures of cases ``expected`` lists that do not fail as it records (``Expected.matches``)."""
        if self.expected is None:
            return []
        return [v for v in self.verdicts if v.status == "failed" and v.case in self.expected.failures
                and not self.expected.failures[v.case].matches(v.failure())]

    def new_failures(self) -> list[Verdict]:
        """The failures ``expected`` does not list, or lists as failing otherwise (every failure, without
        it)."""
        otherwise = {v.case for v in self.failing_otherwise()}
        return [v for v in self.verdicts if v.status == "failed" and (
            self.expected is None or v.case not in self.expected.failures or v.case in otherwise)]

    def not_failing(self) -> list[Verdict]:
        """The cases ``expected`` lists that ran and did not fail: a fixed fault still listed (or one the
        engine now calls unsupported), which fails the run as pytest's ``xfail(strict=True)`` does."""
        if self.expected is None:
            return []
        return [v for v in self.verdicts if v.status != "failed" and v.case in self.expected.failures]

    def not_reached(self) -> list[str]:
        """The cases of ``selected`` a stopped run did not judge (none when it was not stopped)."""
        if self.stopped is None or self.selected is None:
            return []
        judged = {verdict.case for verdict in self.verdicts}
        return [name for name in self.selected if name not in judged]

    def reasons(self) -> list[str]:
        """Why the run is not green, each a word of ``REASONS``, in that order; empty when it is."""
        new = self.new_failures()
        found = {self.stopped, "protocol" if any(v.protocol for v in new) else None,
                 "failed" if any(not v.protocol for v in new) else None,
                 "listed but not failing" if self.not_failing() else None}
        return [reason for reason in REASONS if reason in found]

    def ok(self) -> bool:
        """Whether the run is green: every case it was given judged, no failure but those expected (each
        failing as recorded), and no expected failure missing."""
        return not self.reasons()

    def summary_line(self) -> str:
        passed, failed, unsupported = self.counts()
        waived = "" if self.frontier_contract else " (frontier contract waived)"
        line = f"{passed} passed, {failed} failed, {unsupported} unsupported{waived}"
        if self.expected is not None:
            line += (f"; against {self.expected.path}: {failed - len(self.new_failures())} failures expected, "
                     f"{len(self.new_failures())} new, {len(self.not_failing())} listed but not failing")
        of = "" if self.selected is None else f" of {len(self.selected)}"
        if self.stopped == "interrupted":
            line += f"; interrupted after {len(self.verdicts)}{of} cases"
        elif self.stopped == "deadline":
            line += f"; deadline (--deadline {self.deadline:g}) reached after {len(self.verdicts)}{of} cases"
        elif self.stopped == "could not start":
            line += "; could not start"
        return line

    def table(self) -> str:
        """A markdown table: per program, how many cases passed, failed and were unsupported."""
        rows: dict[str, list[int]] = {}
        for verdict in self.verdicts:
            row = rows.setdefault(verdict.program, [0, 0, 0])
            row[("passed", "failed", "unsupported").index(verdict.status)] += 1
        width = max([len("program"), *map(len, rows)])
        lines = [f"| {'program':<{width}} | passed | failed | unsupported |",
                 f"|{'-' * (width + 2)}|--------|--------|-------------|"]
        lines += [f"| {name:<{width}} | {p:>6} | {f:>6} | {u:>11} |" for name, (p, f, u) in sorted(rows.items())]
        return "\n".join(lines)

    def header(self) -> dict:
        """The report's first line: what was judged, on what, and how."""
        expect = self.expected.path if self.expected is not None else self.expect
        return {"report": REPORT_FORMAT, "engine": self.engine, "label": self.label or self.engine,
                **self.case_set, "frontier_contract": "checked" if self.frontier_contract else "waived",
                "expect": None if expect is None else str(expect)}

    def verdict_json(self, verdict: Verdict) -> dict:
        """A verdict's line; with ``--expect``, a listed case carries its reason as ``expected_failure``,
        and whether it fails otherwise than recorded as ``failing_otherwise``."""
        value = verdict.to_json()
        if self.expected is not None and verdict.case in self.expected.failures:
            listed = self.expected.failures[verdict.case]
            value["expected_failure"] = listed.reason
            value["failing_otherwise"] = verdict.status == "failed" and not listed.matches(verdict.failure())
        return value

    def summary(self) -> dict:
        """The report's last line: the counts, how the run ended, and whether it is green and why not."""
        passed, failed, unsupported = self.counts()
        value: dict[str, Any] = {"passed": passed, "failed": failed, "unsupported": unsupported,
                                 "selected": None if self.selected is None else len(self.selected),
                                 "not_reached": self.not_reached(), "stopped": self.stopped,
                                 "interrupted": self.interrupted, "ok": self.ok(), "reasons": self.reasons()}
        if self.error:
            value["error"] = self.error
        if self.expected is not None:
            value["new_failures"] = [v.case for v in self.new_failures()]
            value["failing_otherwise"] = [v.case for v in self.failing_otherwise()]
            value["listed_but_not_failing"] = [v.case for v in self.not_failing()]
        if self.escaped:
            value["escaped"] = self.escaped
        return value


class ReportFile:
    """A report written as it goes, one JSON line each: the ``header`` first, then a ``verdict`` per case
    as it is judged, a ``smallest_failing`` per program as it is shrunk, and the ``summary`` last. Each
    line is flushed when written, so a run cut short (killed, Ctrl-C, a crash) leaves every verdict so
    far; ``read_report`` reads it back, saying whether it is ``complete``."""

    def __init__(self, path: Path, report: Report) -> None:
        self.path = Path(path)
        self.report = report
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w")
        self._line({"header": report.header()})

    def _line(self, value: dict) -> None:
        self._file.write(json.dumps(value) + "\n")
        self._file.flush()

    def verdict(self, verdict: Verdict) -> None:
        self.report.verdicts.append(verdict)
        self._line({"verdict": self.report.verdict_json(verdict)})

    def shrunk(self, shrunk: Shrunk) -> None:
        self.report.smallest[shrunk.case.program] = shrunk.case
        self.report.shrinking[shrunk.case.program] = shrunk
        self._line({"smallest_failing": shrunk.to_json()})

    def found(self, shrunk: Shrunk, path: Path) -> None:
        """A failure ``fuzz`` found, shrunk and wrote as a case file at ``path``."""
        self._line({"found": {**shrunk.to_json(), "file": str(path)}})

    def close(self) -> None:
        """Write the summary line and close the file."""
        self._line({"summary": self.report.summary()})
        self._file.close()

    def abandon(self) -> None:
        """Close the file without a summary, as a run killed outright leaves it: for a run that ended by a
        fault of the checker's own, which no summary could describe truly."""
        self._file.close()


def read_report(path: Path) -> dict:
    """A report file (``ReportFile``) as one JSON value: the header's fields, ``verdicts``,
    ``smallest_failing`` (program -> case) and ``shrinking`` (program -> how it went), ``found`` (the
    failures a ``fuzz`` run wrote as case files, each with its ``file`` and shrunk ``case``), the summary's
    fields (``ok``, ``reasons``, ``not_reached``, ...), and ``complete``: whether the run judged every case
    it was given and ended by itself (a summary line, not stopped). A report killed before its summary has
    its counts taken from the verdicts it holds."""
    header: dict = {}
    summary: dict | None = None
    complete = True
    verdicts, smallest, shrinking, found = [], {}, {}, []
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if "header" in entry:
            header = entry["header"]
        elif "verdict" in entry:
            verdicts.append(entry["verdict"])
        elif "smallest_failing" in entry:
            facts = entry["smallest_failing"]
            smallest[facts["program"]] = facts["case"]
            shrinking[facts["program"]] = {key: value for key, value in facts.items() if key != "case"}
        elif "found" in entry:
            found.append(entry["found"])
        elif "summary" in entry:
            summary = entry["summary"]
    if summary is None:
        complete = False
        statuses = [verdict["status"] for verdict in verdicts]
        summary = {status: statuses.count(status) for status in ("passed", "failed", "unsupported")}
    ended = not summary.get("stopped") and not summary.get("interrupted")
    return {**header, **summary, "complete": complete and ended, "verdicts": verdicts,
            "smallest_failing": smallest, "shrinking": shrinking, "found": found}


def smallest_failing(report: Report, cases: Sequence[Case], run: Callable[[Case, float], Run | None],
                     seconds: float = SHRINK_SECONDS, progress: Callable[[str], None] | None = None,
                     shrunk: Callable[[Shrunk], None] | None = None, until: float | None = None) -> None:
    """For each program with a new failing case (``Report.new_failures``), shrink its failing case with
    the fewest updates into ``report.smallest``, spending at most ``seconds`` on each program, and
    nothing past ``until`` (a ``time.monotonic`` time: the run's deadline), where shrinking stops.

    ``run(case, left)`` runs a candidate with ``left`` seconds of the budget
    to go, and gives None when the engine could not answer within them
    (``CommandEngine.run``'s ``timeout``): a deadline failure is shrunk only
    as far as the budget allows. Only failures the engine shows again count:
    an error that does not repeat (a timeout, say) is left unshrunk.
    ``shrunk`` is told of each result as it comes (``ReportFile.shrunk``); a
    Ctrl-C while shrinking keeps the smallest case so far and is raised again.
    """
    failing: dict[str, list[Case]] = {}
    by_name = {case.name: case for case in cases}
    for verdict in report.new_failures():
        failing.setdefault(verdict.program, []).append(by_name[verdict.case])
    for program, candidates in sorted(failing.items()):
        if until is not None and time.monotonic() >= until:
            return
        if progress:
            progress(program)
        smallest = min(candidates, key=lambda case: (size(case), case.name))
        result = shrink_failure(report, smallest, run, seconds, until)
        if shrunk:
            shrunk(result)
        else:
            report.smallest[program], report.shrinking[program] = result.case, result
        if result.stopped == "interrupted":
            raise KeyboardInterrupt


def shrink_failure(report: Report, case: Case, run: Callable[[Case, float], Run | None],
                   seconds: float = SHRINK_SECONDS, until: float | None = None) -> Shrunk:
    """``shrink`` a case the engine failed, within ``seconds`` and not past ``until`` (the run's deadline,
    a ``time.monotonic`` time; the shrink then stops as ``deadline``): each candidate is run by
    ``run(candidate, left)`` with the ``left`` seconds of the budget (None: no answer within them, which
    ends the shrink) and judged as ``report`` judges."""
    deadline = time.monotonic() + seconds
    cut = until is not None and until < deadline
    if cut:
        deadline = until

    def fails(candidate: Case) -> bool | None:
        outcome = run(candidate, max(0.0, deadline - time.monotonic()))
        return None if outcome is None else judge(candidate, outcome, report.frontier_contract).status == "failed"

    result = shrink(case, fails, max(0.0, deadline - time.monotonic()))
    if cut and result.stopped == "budget":
        result.stopped = "deadline"
    return result


def write_smallest(report: Report, directory: Path) -> list[Path]:
    """Each program's smallest failing case as a case file under ``directory``; returns the paths."""
    return [write_case(case, directory) for case in report.smallest.values()]


def write_case(case: Case, directory: Path) -> Path:
    """``case`` as a case file under ``directory`` (``<program>/<name>.json``); returns its path."""
    path = Path(directory) / file_name(case.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case.text())
    return path
