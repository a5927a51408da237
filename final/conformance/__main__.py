"""The oracle's command line: ``generate``, ``check``, ``programs`` and ``serve``.

``check`` runs an engine on a case set, prints where it differs, a table per
program and the smallest failing case per program, writes a JSON report, and
ends with ``<P> passed, <F> failed, <U> unsupported``; it exits 1 when any
case failed and 2 when it could not start (an unknown engine, unreadable
cases). ``generate`` writes a case set; ``programs`` prints the catalog;
``serve`` answers the protocol with final, a stage or a Python plug-in.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from .cases import CASES, Case, CaseError, case_set, load, load_all
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
from .expect import Expectations
from .expect import write as write_expectations
from .fuzz import fuzz_cases
from .generate import CASE_SET, DEFAULT_SEED, GenerationError, default_out, generate, write

REPORTS = Path("out") / "conformance"


def command() -> str:
    """How the user started the oracle, for the commands it prints: the console script when installed
    (``dd-conformance``), else ``python -m final.conformance``."""
    return "dd-conformance" if Path(sys.argv[0]).name == "dd-conformance" else "python -m final.conformance"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=command(), description=__doc__.split("\n\n")[0])
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
        if arguments.command == "fuzz":
            return _fuzz(arguments)
        return _check(arguments)
    except (CaseError, EngineError, ExampleError, GenerationError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


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


def _load_cases(path: Path, programs: Sequence[str]) -> list[Case]:
    cases = [load(path)] if path.is_file() else list(load_all(path))
    unknown = set(programs) - {program.name for program in PROGRAMS}
    if unknown:
        raise CaseError(f"--program {sorted(unknown)}: no such program; see '{command()} programs'")
    chosen = [case for case in cases if not programs or case.program in programs]
    if not chosen:
        raise CaseError(f"no cases of {list(programs)} under {path}")
    return chosen


def _check(arguments: argparse.Namespace) -> int:
    cases = _load_cases(arguments.cases, arguments.program)
    expected = Expectations.load(arguments.expect) if arguments.expect else None
    engine = RecordedEngine(arguments.outputs) if arguments.outputs else engine_named(
        arguments.engine, arguments.timeout, arguments.max_output_lines, arguments.max_output_bytes)
    label = _label(arguments)
    report = Report(engine.name, label, case_set(arguments.cases), not arguments.waive_frontier_contract,
                    expected=expected)
    if expected is not None and expected.case_set not in (None, report.case_set["case_set"]):
        print(f"note: {expected.path} lists failures of case set {expected.case_set}; this is case set "
              f"{report.case_set['case_set']}", file=sys.stderr)
    path = arguments.report or REPORTS / f"{label}.jsonl"

    def work(session: _Session) -> None:
        for case in cases:
            session.judge(case)
        if not arguments.outputs and not arguments.no_shrink and report.new_failures():
            smallest_failing(report, cases, _attempt(engine), arguments.shrink_budget,
                             progress=lambda p: print(f"shrinking {p} ...", file=sys.stderr),
                             shrunk=session.file.shrunk)

    stopped = _session(engine, report, path, arguments, len(cases), work)
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
    print(f"report: {path} (engine {label}, case set {report.case_set['case_set']}, seed {report.case_set['seed']})")
    print(report.summary_line())
    return stopped or (0 if report.ok() else 1)


def _fuzz(arguments: argparse.Namespace) -> int:
    seed = random.SystemRandom().randrange(1_000_000) if arguments.seed is None else arguments.seed
    cases = fuzz_cases(seed, arguments.histories, arguments.program)
    engine = engine_named(arguments.engine, arguments.timeout, arguments.max_output_lines, arguments.max_output_bytes)
    label = _label(arguments)
    report = Report(engine.name, label, {"case_set": "fuzz", "seed": seed}, not arguments.waive_frontier_contract)
    path = arguments.report or REPORTS / f"fuzz-{label}.jsonl"
    out = arguments.out or REPORTS / f"fuzz-{label}"
    count = arguments.histories * len(set(arguments.program) or PROGRAMS)
    print(f"fuzz: seed {seed}, {arguments.histories} histories per program ({count} cases at most)", file=sys.stderr)
    found: list[tuple[Path, Shrunk]] = []

    def work(session: _Session) -> None:
        seen: set[str] = set()
        for case in cases:
            if session.judge(case).status != "failed":
                continue
            if arguments.no_shrink:
                shrunk = Shrunk(case, stopped="not shrunk")
            else:
                print(f"shrinking {case.name} ...", file=sys.stderr)
                shrunk = shrink_failure(report, case, _attempt(engine), arguments.shrink_budget)
            history = shrunk.case.program + json.dumps([message.to_json() for message in shrunk.case.messages])
            if history not in seen:  # two failures shrunk to one history: one file
                seen.add(history)
                written = write_case(shrunk.case, out)
                session.file.found(shrunk, written)
                found.append((written, shrunk))
            if shrunk.stopped == "interrupted":
                raise KeyboardInterrupt
            if len(found) >= arguments.failures:
                print(f"fuzz: stopping after {len(found)} failures (--failures)", file=sys.stderr)
                return

    stopped = _session(engine, report, path, arguments, count, work)
    print()
    print(report.table())
    if found:
        print(f"\nfailures, each shrunk and written as a case (under {out}; check --cases {out} runs them all):")
        for written, shrunk in found:
            print(f"  {shrunk.case.program}: {size(shrunk.case)} updates{_how_shrunk(shrunk)} — "
                  f"{_rerun(arguments, label, written)}")
    print(f"report: {path} (engine {label}, fuzz seed {seed}; --seed {seed} draws the same histories)")
    print(report.summary_line())
    return stopped or (0 if report.ok() else 1)


def _label(arguments: argparse.Namespace) -> str:
    """The engine's label: ``--label``, else its name before any ``:`` (``outputs`` for recorded outputs),
    in characters a file name can hold."""
    label = arguments.label or ("outputs" if getattr(arguments, "outputs", None) else arguments.engine.split(":")[0])
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label)


def _rerun(arguments: argparse.Namespace, label: str, case_file: Path) -> str:
    """The command that checks the engine on one written case again, under the same label (so that it
    files its report beside this one's, not under a name of its own)."""
    return (f"{command()} check --engine {shlex.quote(arguments.engine)} --label {shlex.quote(label)} "
            f"--cases {shlex.quote(str(Path(case_file).resolve()))}")


def _how_shrunk(shrunk: Shrunk) -> str:
    """What a printed shrink result adds when it is not the end of shrinking: why it stopped."""
    why = {"done": "", "not shrunk": " (--no-shrink)",
           "budget": f", the smallest found in the {shrunk.seconds:.0f} s budget (--shrink-budget)",
           "runs": f", the smallest found in {shrunk.runs} runs",
           "interrupted": ", the smallest found when interrupted"}
    return why[shrunk.stopped]


def _write_expect(path: Path, report: Report) -> None:
    failures = {verdict.case: (report.expected.failures.get(verdict.case) if report.expected else None)
                or (verdict.lines() or ["failed"])[0] for verdict in report.verdicts if verdict.status == "failed"}
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
    """SIGTERM, taken as Ctrl-C is: the run ends with the report so far."""


def _terminate(signal_number: int, frame: object) -> None:
    raise _Interrupted


@dataclass
class _Session:
    """One run of an engine over cases: each verdict written to the report file as it comes, printed when
    it fails (or fails as expected, or passes while listed as failing), and counted on the progress bar."""

    engine: Engine
    report: Report
    file: ReportFile
    record: Path | None
    show: Callable[[str], None]

    def judge(self, case: Case) -> Verdict:
        run = self.engine.run(case)
        if self.record:
            record(run, self.record, case)
        verdict = judge(case, run, self.report.frontier_contract)
        self.file.verdict(verdict)
        self.show(case.name)
        expected = self.report.expected
        listed = expected.failures.get(case.name) if expected else None
        if verdict.status == "failed" and listed:
            print(f"expected FAIL {case.name}: {listed}")
        elif verdict.status == "failed":
            _print(f"FAIL {case.name}", verdict.lines())
        elif listed and expected:
            print(f"{verdict.status.upper()} {case.name}, listed in {expected.path} as failing ({listed}): "
                  "remove it from the file if the fault is fixed")
        return verdict


def _session(engine: Engine, report: Report, path: Path, arguments: argparse.Namespace, total: int,
             work: Callable[[_Session], None]) -> int | None:
    """Run ``work`` with a report file at ``path`` (``ReportFile``), and end it whatever happens: the
    engine closed (its process group killed), the summary written. Ctrl-C or SIGTERM end the work early,
    with the verdicts so far; returns then the exit status for it (130, 143), else None."""
    file = ReportFile(path, report)
    session = _Session(engine, report, file, getattr(arguments, "record", None), _progress(arguments.progress, total))
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    stopped = None
    try:
        work(session)
    except KeyboardInterrupt as interrupt:
        report.interrupted = True
        stopped = 128 + (signal.SIGTERM if isinstance(interrupt, _Interrupted) else signal.SIGINT)
        print(f"\ninterrupted after {len(report.verdicts)} cases: the report holds every verdict so far",
              file=sys.stderr)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        engine.close()
        report.escaped = list(getattr(engine, "escaped", ()))
        file.close()
    for escaped in report.escaped:
        print(f"warning: the engine left a process outside its process group, killed apart: {escaped}",
              file=sys.stderr)
    return stopped


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
