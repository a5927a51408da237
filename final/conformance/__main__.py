"""The oracle's command line: ``check``, ``fuzz``, ``generate``, ``programs`` and ``serve``.

``check`` runs an engine on a case set, prints where it differs, a table per
program and the smallest failing case per program, writes a JSON-lines
report, and ends with ``<P> passed, <F> failed, <U> unsupported``; ``fuzz``
judges an engine on fresh random histories. Both exit 0 when the run is
green, 1 when it is not (a failure, a listed case that did not fail, the
``--deadline`` reached), 2 when it could not start (an unknown engine, one
that cannot be started, unreadable cases or expectations), 130 or 143 when
stopped by SIGINT or SIGTERM; and the report's summary says the same, with
``ok`` and its ``reasons``, whenever the run ends. ``generate`` writes a
case set; ``programs`` prints the catalog; ``serve`` answers the protocol
with final, a stage or a Python plug-in.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType

from .. import __version__
from .cases import CASES, Case, CaseError, CaseFile, case_set, read_case_files, valid_digests
from .catalog import PROGRAMS
from .check import (
    SHRINK_SECONDS,
    Report,
    ReportFile,
    Shrunk,
    Verdict,
    judge,
    shrink_failure,
    size,
    smallest_failing,
    write_case,
    write_smallest,
)
from .drive import Run
from .engines import (
    DEFAULT_TIMEOUT,
    MAX_OUTPUT_BYTES,
    MAX_OUTPUT_LINES,
    PROTOCOL,
    STAGES,
    CommandEngine,
    Engine,
    EngineError,
    RecordedEngine,
    engine_named,
    record,
    serve,
    serving,
)
from .examples import ExampleError
from .expect import FIRST_FORMAT, Expectations, Expected, ExpectError
from .expect import write as write_expectations
from .fuzz import fuzz_cases, fuzz_names
from .generate import CASE_SET, DEFAULT_SEED, GenerationError, default_out, generate, write

REPORTS = Path("out") / "conformance"


def command() -> str:
    """How the user started the oracle, for the commands it prints: the console script when installed
    (``dd-conformance``), else ``python -m final.conformance``."""
    return "dd-conformance" if Path(sys.argv[0]).name == "dd-conformance" else "python -m final.conformance"


DESCRIPTION = ("The conformance oracle: check an engine on a case set (check), on fresh random histories (fuzz); "
               "write a case set (generate); print the catalog (programs); answer the protocol with final, a stage "
               "or a Python plug-in (serve).")
"""What ``--help`` says first: every command, in words for a terminal."""


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=command(), description=DESCRIPTION)
    top.add_argument("--version", action="version",
                     version=f"%(prog)s {__version__} (case set {CASE_SET}, protocol {PROTOCOL})")
    commands = top.add_subparsers(dest="command", required=True)
    make = commands.add_parser("generate", help="write a case set: the documents' examples and random histories")
    make.add_argument("--out", type=Path, help="where to write it (default in a clone of the repository: the "
                      "committed case set; required once installed)")
    make.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"seed of the random histories ({DEFAULT_SEED})")
    check = commands.add_parser("check", help="run an engine on a case set and report where it differs")
    engine = check.add_mutually_exclusive_group(required=True)
    engine.add_argument("--engine", help=ENGINE_HELP)
    engine.add_argument("--outputs", type=Path, help="read an engine's recorded outputs from DIR/<case>.jsonl")
    check.add_argument("--cases", type=Path, default=CASES, help="a case file or a directory of them (default: the "
                       "committed set)")
    check.add_argument("--program", action="append", default=[], help="only this program's cases (repeatable)")
    check.add_argument("--record", type=Path, help="also write the engine's outputs to DIR/<case>.jsonl")
    check.add_argument("--expect", type=Path, metavar="FILE", help="expected failures (case name -> reason): the "
                       "run is green on them, red on a new failure or a listed case that does not fail")
    check.add_argument("--write-expect", type=Path, metavar="FILE", help="write this run's failures as an "
                       "expectations file for --expect (each reason the failure's first line: edit it into why)")
    _judging_options(check, f"{REPORTS}/<label>.jsonl")
    fuzz = commands.add_parser("fuzz", help="judge an engine on fresh random histories, shrinking and writing each "
                               "failure as a case file")
    fuzz.add_argument("--engine", required=True, help=ENGINE_HELP)
    fuzz.add_argument("--program", action="append", default=[], help="only this program (repeatable; default: all)")
    fuzz.add_argument("--seed", type=int, help="seed of the histories (default: a new one, printed, so that a run "
                      "can be made again)")
    fuzz.add_argument("--histories", type=_positive(int), default=FUZZ_HISTORIES, metavar="N",
                      help=f"histories per program ({FUZZ_HISTORIES})")
    fuzz.add_argument("--failures", type=_positive(int), default=FUZZ_FAILURES, metavar="K",
                      help=f"stop after K failures with cases of their own ({FUZZ_FAILURES})")
    fuzz.add_argument("--out", type=Path, help=f"where each failure's shrunk case is written (default "
                      f"{REPORTS}/fuzz-<label>/): a case set the engine's CI can keep and check")
    _judging_options(fuzz, f"{REPORTS}/fuzz-<label>.jsonl")
    programs = commands.add_parser("programs", help="print the catalog of programs")
    programs.add_argument("--markdown", action="store_true", help="as the README's catalog section")
    answer = commands.add_parser("serve", help="answer the protocol on stdin/stdout with final, a stage or a Python "
                                 "plug-in")
    answer.add_argument("--engine", required=True, help=f"final, {', '.join(STAGES)}, or module:factory")
    return top


ENGINE_HELP = (f"final, {', '.join(STAGES)} (from a clone), module:factory (a Python plug-in), d2ts, d2mini, "
               "pathway, pydbsp, or cmd:<command line>")
FUZZ_HISTORIES = 20
"""Fresh histories per program a ``fuzz`` run judges by default: 520 cases over the catalog, a minute or two
for a quick engine."""
FUZZ_FAILURES = 5
"""Failures after which a ``fuzz`` run stops by default: each is shrunk within its budget and written."""


def _judging_options(command_parser: argparse.ArgumentParser, report: str) -> None:
    """The options ``check`` and ``fuzz`` share: the label and report, the engine's deadline and caps,
    shrinking, the frontier contract, the progress bar."""
    command_parser.add_argument("--label", help="the engine's name in the report and its file name (default: from "
                                "--engine, e.g. d2ts, cmd)")
    command_parser.add_argument("--report", type=Path, help="the report, written as it goes: JSON lines, one per "
                                f"verdict, the summary last (default {report})")
    command_parser.add_argument("--timeout", type=_positive(float), default=DEFAULT_TIMEOUT, metavar="SECONDS",
                                help="seconds an engine may take per case, from its first line to the closing line, "
                                f"however much it writes ({DEFAULT_TIMEOUT:g})")
    command_parser.add_argument("--max-output-lines", type=_positive(int), default=MAX_OUTPUT_LINES, metavar="N",
                                help=f"most lines an engine may write for one case ({MAX_OUTPUT_LINES:,})")
    command_parser.add_argument("--max-output-bytes", type=_positive(int), default=MAX_OUTPUT_BYTES, metavar="N",
                                help=f"most bytes an engine may write for one case ({MAX_OUTPUT_BYTES:,})")
    command_parser.add_argument("--no-shrink", action="store_true", help="do not shrink failing cases")
    command_parser.add_argument("--shrink-budget", type=_positive(float), default=SHRINK_SECONDS, metavar="SECONDS",
                                help="seconds spent shrinking each failing case; then the smallest found so far is "
                                f"reported as such ({SHRINK_SECONDS:g})")
    command_parser.add_argument("--waive-frontier-contract", action="store_true",
                                help="judge the output's data alone: an engine that sends no output frontier is not "
                                "failed for it (the report says the contract was waived)")
    command_parser.add_argument("--deadline", type=_positive(float), metavar="SECONDS",
                                help="seconds the whole run may take, from its start: then the case in progress is "
                                "stopped, no other runs, and the report lists the cases not reached (default: none)")
    command_parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                                help="a progress bar (default: when stderr is a terminal)")


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """An argparse type: a number of ``kind`` above zero (a deadline or a cap of 0 would fail every case)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not above 0")
        return value

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    """The command line, given ``argv`` (by default the process's own); returns the exit status.

    ``check`` and ``fuzz`` take SIGINT and SIGTERM at any moment from here on
    (``_Signals``). Run as the process's own command (``argv`` None), a run
    leaves both ignored once its report is complete, so that nothing comes
    between the report and the exit status; called with ``argv``, from
    Python, it puts back the handlers it found.
    """
    arguments = parser().parse_args(argv)
    if arguments.command == "programs":
        print(catalog_markdown() if arguments.markdown else catalog_text())
        return 0
    try:
        if arguments.command == "serve":
            serve(serving(arguments.engine))
            return 0
        if arguments.command == "generate":
            return _generate(arguments)
    except START_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with _Signals.installed(restore=argv is not None) as signals:
        try:
            return _fuzz(arguments, signals) if arguments.command == "fuzz" else _check(arguments, signals)
        except OSError as error:  # the report cannot be written, or a folder given for output cannot
            print(f"error: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # in the instant before the report was opened: there is none to write
            print("\ninterrupted before the run started", file=sys.stderr)
            return 128 + (signals.received or signal.SIGINT)


START_ERRORS = (CaseError, EngineError, ExampleError, GenerationError, FileExistsError)
"""What stops a command before it can do its work: exit status 2, and for check and fuzz a report that says
the run could not start."""


def _generate(arguments: argparse.Namespace) -> int:
    out = arguments.out or default_out()
    if out is None:
        print(f"error: generate needs --out DIR here: this package is installed, not in a clone of the repository, "
              f"so there is no committed case set to rewrite; pass --out DIR (e.g. '{command()} generate --out "
              "cases')", file=sys.stderr)
        return 2
    show = _progress(None, len(PROGRAMS) + 1)
    cases = generate(arguments.seed, progress=show)
    manifest = write(cases, out, arguments.seed)
    print(f"{len(cases)} cases written under {out} (manifest: {manifest})")
    return 0


def _chosen(files: Sequence[CaseFile], programs: Sequence[str], where: Path) -> list[CaseFile]:
    """The case files of ``programs`` (all without), chosen by the program each says it holds, before any is
    checked: a run checks only the cases it runs. A file that names no program is kept, for ``load`` to say
    what is wrong with it.

    Raises:
        CaseError: a program that is not in the catalog, or one with no case here.
    """
    unknown = set(programs) - {program.name for program in PROGRAMS}
    if unknown:
        raise CaseError(f"--program {sorted(unknown)}: no such program; see '{command()} programs'")
    chosen = [file for file in files if not programs or file.program is None or file.program in programs]
    if not chosen:
        raise CaseError(f"no cases of {list(programs)} under {where}")
    return chosen


def _load(chosen: Sequence[CaseFile], programs: Sequence[str]) -> list[Case]:
    """The chosen cases, checked; those the user cache does not know as valid against the schema are
    checked against it too (``CaseFile.load``), which is said first, since it takes a moment.

    Raises:
        CaseError: the first case that is wrong itself.
    """
    unchecked = sum(not file.known_valid() for file in chosen)
    if unchecked:
        print(f"checking {unchecked} case files against the schema (once: a file found valid is remembered in "
              f"{valid_digests().path.parent}) ...", file=sys.stderr)
    return [case for case in (file.load() for file in chosen) if not programs or case.program in programs]


def _refuse_unknown(expected: Expectations, files: Sequence[CaseFile], where: Path) -> None:
    """Refuse an expectations file that lists cases the case set at ``where`` does not hold (all of its
    cases, whatever ``--program`` chose): a misspelt name would expect nothing, silently. A single case file
    (a rerun of a shrunk case) is a set of its own, which no expectations file is written for: its names are
    not checked.

    Raises:
        ExpectError: naming every listed case the set lacks.
    """
    if Path(where).is_file():
        return
    held = {file.name for file in files}
    missing = sorted(set(expected.failures) - held)
    if missing:
        cases = f"{len(missing)} listed cases are" if len(missing) > 1 else "1 listed case is"
        raise ExpectError(f"--expect {expected.path}: {cases} not in the case set under {where}: "
                          f"{', '.join(missing)}; correct or remove each (a case's name is the one its report gives)")


def _check(arguments: argparse.Namespace, signals: _Signals) -> int:
    label = _label(arguments)
    path = arguments.report or REPORTS / f"{label}.jsonl"
    report = Report(arguments.engine or f"outputs:{arguments.outputs}", label, case_set(arguments.cases),
                    not arguments.waive_frontier_contract, expect=arguments.expect, deadline=arguments.deadline)
    with _Reported(report, path, signals) as run:
        files = read_case_files(arguments.cases)
        chosen = _chosen(files, arguments.program, arguments.cases)
        report.selected = [file.name or str(file.path) for file in chosen]
        if arguments.expect:
            report.expected = expected = Expectations.load(arguments.expect)
            _refuse_unknown(expected, files, arguments.cases)
            _notes(expected, report)
        cases = _load(chosen, arguments.program)
        report.selected = [case.name for case in cases]
        engine = run.engine = RecordedEngine(arguments.outputs) if arguments.outputs else engine_named(
            arguments.engine, arguments.timeout, arguments.max_output_lines, arguments.max_output_bytes)
        session = run.session(arguments, len(cases))

        def work() -> None:
            for case in cases:
                session.judge(case)
            if not arguments.outputs and not arguments.no_shrink and report.new_failures():
                smallest_failing(report, cases, _attempt(engine), arguments.shrink_budget,
                                 progress=lambda p: print(f"shrinking {p} ...", file=sys.stderr),
                                 shrunk=run.file.shrunk, until=run.until)

        run.judging(work)
        print()
        print(report.table())
        if report.smallest:
            shrunk = path.parent / f"{path.stem}-shrunk"
            print(f"\nsmallest failing case per program (under {shrunk}):")
            for written, case in zip(write_smallest(report, shrunk), report.smallest.values(), strict=True):
                print(f"  {case.program}: {size(case)} updates{_how_shrunk(report.shrinking[case.program])} — "
                      f"{_rerun(arguments, label, written)}")
        if arguments.write_expect:
            _write_expect(arguments.write_expect, report)
        print(f"report: {path} (engine {label}, case set {report.case_set['case_set']}, seed "
              f"{report.case_set['seed']})")
    return run.ended()


def _notes(expected: Expectations, report: Report) -> None:
    """What an expectations file that can be applied still calls for saying: another case set, or the first
    format, whose entries record no failure."""
    if expected.case_set not in (None, report.case_set["case_set"]):
        print(f"note: {expected.path} lists failures of case set {expected.case_set}; this is case set "
              f"{report.case_set['case_set']}", file=sys.stderr)
    if expected.format == FIRST_FORMAT:
        print(f"note: {expected.path} is {FIRST_FORMAT}, which records no failure per case: a listed case that "
              "fails otherwise is not told apart (--write-expect writes the current format, with each failure)",
              file=sys.stderr)


def _fuzz(arguments: argparse.Namespace, signals: _Signals) -> int:
    seed = random.SystemRandom().randrange(1_000_000) if arguments.seed is None else arguments.seed
    label = _label(arguments)
    report = Report(arguments.engine, label, {"case_set": "fuzz", "seed": seed}, not arguments.waive_frontier_contract,
                    deadline=arguments.deadline)
    path = arguments.report or REPORTS / f"fuzz-{label}.jsonl"
    out = arguments.out or REPORTS / f"fuzz-{label}"
    found: list[tuple[Path, Shrunk]] = []
    with _Reported(report, path, signals) as run:
        cases = fuzz_cases(seed, arguments.histories, arguments.program)
        report.selected = fuzz_names(seed, arguments.histories, arguments.program)
        print(f"fuzz: seed {seed}, {arguments.histories} histories per program ({len(report.selected)} cases at "
              "most)", file=sys.stderr)
        engine = run.engine = engine_named(arguments.engine, arguments.timeout, arguments.max_output_lines,
                                           arguments.max_output_bytes)
        session = run.session(arguments, len(report.selected))

        def work() -> None:
            seen: set[str] = set()
            for case in cases:
                if session.judge(case).status != "failed":
                    continue
                if arguments.no_shrink:
                    shrunk = Shrunk(case, stopped="not shrunk")
                else:
                    print(f"shrinking {case.name} ...", file=sys.stderr)
                    shrunk = shrink_failure(report, case, _attempt(engine), arguments.shrink_budget, run.until)
                history = shrunk.case.program + json.dumps([message.to_json() for message in shrunk.case.messages])
                if history not in seen:  # two failures shrunk to one history: one file
                    seen.add(history)
                    written = write_case(shrunk.case, out)
                    run.file.found(shrunk, written)
                    found.append((written, shrunk))
                if shrunk.stopped == "interrupted":
                    raise KeyboardInterrupt
                if len(found) >= arguments.failures:
                    print(f"fuzz: stopping after {len(found)} failures (--failures)", file=sys.stderr)
                    return

        run.judging(work)
        print()
        print(report.table())
        if found:
            print(f"\nfailures, each shrunk and written as a case (under {out}; check --cases {out} runs them all):")
            for written, shrunk in found:
                print(f"  {shrunk.case.program}: {size(shrunk.case)} updates{_how_shrunk(shrunk)} — "
                      f"{_rerun(arguments, label, written)}")
        print(f"report: {path} (engine {label}, fuzz seed {seed}; --seed {seed} draws the same histories)")
    return run.ended()


def _label(arguments: argparse.Namespace) -> str:
    """The engine's label: ``--label``, else its name before any ``:`` (``outputs`` for recorded outputs),
    in characters a file name can hold."""
    label = arguments.label or ("outputs" if getattr(arguments, "outputs", None) else arguments.engine.split(":")[0])
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label)


def _rerun(arguments: argparse.Namespace, label: str, case_file: Path) -> str:
    """The command that checks the engine on one written case again: with every option that changes a
    verdict as this run had it (the engine with its arguments, ``--timeout``, the caps, the frontier
    contract, ``--expect``), under a label of its own, so that pasted where this run was it files its
    report beside this one's instead of over it."""
    case_file = Path(case_file).resolve()
    own = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{label}-{case_file.parent.name}-{case_file.stem}")
    words = ["check", "--engine", arguments.engine, "--label", own, "--cases", str(case_file)]
    for option, default in (("timeout", DEFAULT_TIMEOUT), ("max_output_lines", MAX_OUTPUT_LINES),
                            ("max_output_bytes", MAX_OUTPUT_BYTES)):
        value = getattr(arguments, option)
        if value != default:  # a float as typed (60.0 is 60), an int whole (1,000,000 is not 1e+06)
            words += [f"--{option.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
    if arguments.waive_frontier_contract:
        words.append("--waive-frontier-contract")
    if getattr(arguments, "expect", None):
        words += ["--expect", str(Path(arguments.expect).resolve())]
    return f"{command()} {shlex.join(words)}"


def _how_shrunk(shrunk: Shrunk) -> str:
    """What a printed shrink result adds when it is not the end of shrinking: why it stopped."""
    why = {"done": "", "not shrunk": " (--no-shrink)",
           "budget": f", the smallest found in the {shrunk.seconds:.0f} s budget (--shrink-budget)",
           "deadline": ", the smallest found before the run's deadline (--deadline)",
           "runs": f", the smallest found in {shrunk.runs} runs",
           "interrupted": ", the smallest found when interrupted"}
    return why[shrunk.stopped]


def _write_expect(path: Path, report: Report) -> None:
    """Write the run's failures as an expectations file: a failure ``--expect`` listed, failing as recorded,
    keeps its entry (its reason, written by hand); any other has its first line as its failure and, until
    someone edits it into why, as its reason."""
    listed = report.expected.failures if report.expected else {}
    failures = {}
    for verdict in report.verdicts:
        if verdict.status != "failed":
            continue
        known = listed.get(verdict.case)
        if known is not None and known.matches(verdict.failure()):
            failures[verdict.case] = Expected(known.reason, known.failure or verdict.failure())
        else:
            failures[verdict.case] = Expected(verdict.failure(), verdict.failure())
    write_expectations(path, failures, report.label, report.case_set["case_set"])
    print(f"expectations: {path} ({len(failures)} failures; say in each reason why it fails)")


def _attempt(engine: Engine) -> Callable[[Case, float], Run | None]:
    """How the shrinker runs a candidate with ``left`` seconds of its budget: an engine in a child process
    gets that as its deadline when it is the shorter, and a run that hits it is no answer (None); final, in
    this process, cannot be cut short and runs whole."""

    def attempt(case: Case, left: float) -> Run | None:
        if not isinstance(engine, CommandEngine) or left >= engine.timeout:
            return engine.run(case)
        run = engine.run(case, timeout=left)
        return None if run.timed_out else run

    return attempt


class _Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM (``signal``), taken as Ctrl-C is: the run ends with the report so far."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self.signal = number


class _DeadlineReached(Exception):
    """The run's ``--deadline`` passed: the case in progress was stopped and is not judged, no other runs."""


class _Signals:
    """SIGINT and SIGTERM while ``check`` or ``fuzz`` runs, so that either ends the run with its report and
    the exit status 128 + the signal's number (130, 143), wherever it comes.

    The first signal raises ``_Interrupted`` where the run is (in the case in
    progress, while cases are read and checked, while shrinking); once the
    run is ``ending`` (closing its engine, writing its summary) a signal is
    only noted, and the report, still to be written, says the run was
    interrupted. Signals after the first are noted too, so that a second
    Ctrl-C cannot break the ending of the first. A SIGINT the process
    inherited ignored (a job started in the background) stays ignored.

    Invariant: ``received`` is the first signal received, or None.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self.ending = False

    def handle(self, number: int, frame: FrameType | None) -> None:
        first = self.received is None
        if first:
            self.received = number
        if first and not self.ending:
            raise _Interrupted(number)

    @classmethod
    @contextmanager
    def installed(cls, restore: bool) -> Iterator[_Signals]:
        """The handlers, installed for a run (from the main thread; elsewhere, none is), and put back
        afterwards if ``restore``."""
        signals = cls()
        if threading.current_thread() is not threading.main_thread():
            yield signals
            return
        taken = [signal.SIGTERM]
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            taken.append(signal.SIGINT)
        previous = {number: signal.signal(number, signals.handle) for number in taken}
        try:
            yield signals
        finally:
            if restore:
                for number, handler in previous.items():
                    signal.signal(number, handler)


class _Reported:
    """One ``check`` or ``fuzz`` run and its report, from its first line to its exit status.

    The report file is opened, and its header written, before anything can
    fail: a run that cannot start, or is stopped, leaves a report that says
    so rather than an earlier run's. However the run ends, its engine
    (``engine``, once made) is closed and the summary written, with signals
    only noted from then on (``_Signals.ending``), so that the exit status
    (``ended``) and the summary always agree. ``until`` is when the run's
    ``--deadline`` passes (a ``time.monotonic`` time), or None.
    """

    def __init__(self, report: Report, path: Path, signals: _Signals) -> None:
        self.report = report
        self.signals = signals
        self.until = None if report.deadline is None else time.monotonic() + report.deadline
        self.engine: Engine | None = None
        self.file = ReportFile(path, report)

    def __enter__(self) -> _Reported:
        return self

    def session(self, arguments: argparse.Namespace, total: int) -> _Session:
        """The session that judges this run's cases with its engine, into its report file."""
        assert self.engine is not None
        return _Session(self.engine, self.report, self.file, getattr(arguments, "record", None),
                        _progress(arguments.progress, total), self.until)

    def judging(self, work: Callable[[], None]) -> None:
        """Run ``work`` (judging cases, shrinking failures); Ctrl-C, SIGTERM or the deadline end it early,
        the verdicts so far kept, and the run goes on to print what it has."""
        try:
            work()
        except KeyboardInterrupt:
            self._stop("interrupted")
        except _DeadlineReached:
            self._stop("deadline")

    def _stop(self, why: str) -> None:
        self.report.stopped = why
        judged, selected = len(self.report.verdicts), self.report.selected
        of = "" if selected is None else f" of {len(selected)}"
        if why == "interrupted":
            print(f"\ninterrupted after {judged}{of} cases: the report holds every verdict so far", file=sys.stderr)
        else:
            print(f"\ndeadline: --deadline {self.report.deadline:g} s passed after {judged}{of} cases; the report "
                  "lists those not reached", file=sys.stderr)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> bool:
        self.signals.ending = True
        handled = error is None or isinstance(error, (KeyboardInterrupt, *START_ERRORS))
        if isinstance(error, KeyboardInterrupt):
            self._stop("interrupted")
        elif isinstance(error, START_ERRORS):
            self.report.stopped, self.report.error = "could not start", str(error)
            print(f"error: {error}", file=sys.stderr)
        if self.engine is not None:
            self.engine.close()
            self.report.escaped = list(getattr(self.engine, "escaped", ()))
            for escaped in self.report.escaped:
                print(f"warning: the engine left a process outside its process group, killed apart: {escaped}",
                      file=sys.stderr)
        if self.signals.received is not None and self.report.stopped is None:
            self.report.stopped = "interrupted"  # it came while the run was ending: the report says so
        if handled:
            self.file.close()
        else:  # a fault of the checker itself: no summary, so that no reader takes the run for complete
            self.file.abandon()
        return handled

    def ended(self) -> int:
        """The exit status, as the summary has it: 2 could not start, 130/143 interrupted, 1 not green."""
        if self.report.stopped != "could not start":
            print(self.report.summary_line())
        if self.report.stopped == "could not start":
            return 2
        if self.report.stopped == "interrupted":
            return 128 + (self.signals.received or signal.SIGINT)
        return 0 if self.report.ok() else 1


@dataclass
class _Session:
    """One run of an engine over cases: each verdict written to the report file as it comes, printed when
    it fails (or fails as expected, or passes while listed as failing), and counted on the progress bar;
    nothing judged past ``until`` (the run's deadline, a ``time.monotonic`` time)."""

    engine: Engine
    report: Report
    file: ReportFile
    record: Path | None
    show: Callable[[str], None]
    until: float | None = None

    def judge(self, case: Case) -> Verdict:
        """Run ``case`` and judge it.

        Raises:
            _DeadlineReached: the deadline passed before the case, or while the engine ran it.
        """
        run = self._run(case)
        if self.record:
            record(run, self.record, case)
        verdict = judge(case, run, self.report.frontier_contract)
        self.file.verdict(verdict)
        self.show(case.name)
        expected = self.report.expected
        listed = expected.failures.get(case.name) if expected else None
        if verdict.status == "failed" and listed and listed.matches(verdict.failure()):
            print(f"expected FAIL {case.name}: {listed.reason}")
            if listed.failure is None:  # the first format records no failure: show what this one is
                print(f"    {verdict.failure()}")
        elif verdict.status == "failed" and listed and expected:
            _print(f"FAIL {case.name}, listed in {expected.path} as failing with '{listed.failure}' "
                   f"({listed.reason}), now fails otherwise:", verdict.lines())
        elif verdict.status == "failed":
            _print(f"FAIL {case.name}", verdict.lines())
        elif listed and expected:
            print(f"{verdict.status.upper()} {case.name}, listed in {expected.path} as failing ({listed.reason}): "
                  "remove it from the file if the fault is fixed")
        return verdict

    def _run(self, case: Case) -> Run:
        """The engine's run of ``case``; an engine in a child process is stopped at the deadline, if it
        comes before the case's own, and the case is then not judged.

        Raises:
            _DeadlineReached: as ``judge``.
        """
        if self.until is None:
            return self.engine.run(case)
        left = self.until - time.monotonic()
        if left <= 0:
            raise _DeadlineReached
        if not isinstance(self.engine, CommandEngine) or left >= self.engine.timeout:
            return self.engine.run(case)
        run = self.engine.run(case, timeout=left)
        if run.timed_out:
            raise _DeadlineReached
        return run


def _print(head: str, lines: list[str]) -> None:
    print(head)
    for line in lines:
        print(f"    {line}")


def _progress(wanted: bool | None, total: int):
    """A tqdm bar on stderr when wanted (by default, when stderr is a terminal), else nothing."""
    if wanted is None:
        wanted = sys.stderr.isatty()
    try:
        from tqdm import tqdm
    except ImportError:  # an optional dependency (the "progress" extra): no bar without it
        wanted = False
    if not wanted:
        return lambda name: None

    bar = tqdm(total=total, unit="case", file=sys.stderr, leave=False)

    def advance(name: str) -> None:
        bar.set_postfix_str(name, refresh=False)
        bar.update()

    return advance


def catalog_text() -> str:
    return "\n\n".join(
        f"{p.name}({', '.join(p.inputs)})  [{p.source}]\n    {p.definition}" for p in PROGRAMS
    )


def catalog_markdown() -> str:
    """The README's catalog section: one entry per program, with its inputs, source and definition."""
    entries = []
    for program in PROGRAMS:
        needs = {(): "", ("iterate",): " Uses `iterate`.", ("final",): " Needs final's operators (no portable form)."}
        entries.append(f"- **`{program.name}`**({', '.join(f'`{name}`' for name in program.inputs)}), from "
                       f"{program.source}. {program.definition}{needs[program.concepts()]}")
    return "\n".join(entries)


if __name__ == "__main__":
    sys.exit(main())
