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
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .cases import CASES, Case, CaseError, case_set, load, load_all
from .catalog import PROGRAMS
from .check import Report, judge, size, smallest_failing, write_smallest
from .engines import (
    DEFAULT_TIMEOUT,
    MAX_OUTPUT_BYTES,
    MAX_OUTPUT_LINES,
    STAGES,
    EngineError,
    RecordedEngine,
    engine_named,
    record,
    serve,
    serving,
)
from .examples import ExampleError
from .generate import DEFAULT_SEED, GenerationError, default_out, generate, write

REPORTS = Path("out") / "conformance"


def command() -> str:
    """How the user started the oracle, for the commands it prints: the console script when installed
    (``dd-conformance``), else ``python -m final.conformance``."""
    return "dd-conformance" if Path(sys.argv[0]).name == "dd-conformance" else "python -m final.conformance"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=command(), description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    make = commands.add_parser("generate", help="write a case set: the documents' examples and random histories")
    make.add_argument("--out", type=Path, help="where to write it (default in a clone of the repository: the "
                      "committed case set; required once installed)")
    make.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"seed of the random histories ({DEFAULT_SEED})")
    check = commands.add_parser("check", help="run an engine on a case set and report where it differs")
    engine = check.add_mutually_exclusive_group(required=True)
    engine.add_argument("--engine", help=f"final, {', '.join(STAGES)} (from a clone), module:factory (a Python "
                        "plug-in), d2ts, d2mini, pathway, pydbsp, or cmd:<command line>")
    engine.add_argument("--outputs", type=Path, help="read an engine's recorded outputs from DIR/<case>.jsonl")
    check.add_argument("--cases", type=Path, default=CASES, help="a case file or a directory of them (default: the "
                       "committed set)")
    check.add_argument("--program", action="append", default=[], help="only this program's cases (repeatable)")
    check.add_argument("--label", help="the engine's name in the report and its file name (default: from --engine, "
                       "e.g. d2ts, cmd)")
    check.add_argument("--report", type=Path, help=f"the JSON report (default {REPORTS}/<label>.json)")
    check.add_argument("--record", type=Path, help="also write the engine's outputs to DIR/<case>.jsonl")
    check.add_argument("--timeout", type=_positive(float), default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help="seconds an engine may take per case, from its first line to the closing line, however "
                       f"much it writes ({DEFAULT_TIMEOUT:g})")
    check.add_argument("--max-output-lines", type=_positive(int), default=MAX_OUTPUT_LINES, metavar="N",
                       help=f"most lines an engine may write for one case ({MAX_OUTPUT_LINES:,})")
    check.add_argument("--max-output-bytes", type=_positive(int), default=MAX_OUTPUT_BYTES, metavar="N",
                       help=f"most bytes an engine may write for one case ({MAX_OUTPUT_BYTES:,})")
    check.add_argument("--no-shrink", action="store_true", help="do not shrink failing cases")
    check.add_argument("--waive-frontier-contract", action="store_true",
                       help="judge the output's data alone: an engine that sends no output frontier is not failed "
                       "for it (the report says the contract was waived)")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="a progress bar (default: when stderr is a terminal)")
    programs = commands.add_parser("programs", help="print the catalog of programs")
    programs.add_argument("--markdown", action="store_true", help="as the README's catalog section")
    answer = commands.add_parser("serve", help="answer the protocol on stdin/stdout with final, a stage or a Python "
                                 "plug-in")
    answer.add_argument("--engine", required=True, help=f"final, {', '.join(STAGES)}, or module:factory")
    return top


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
    engine = RecordedEngine(arguments.outputs) if arguments.outputs else engine_named(
        arguments.engine, arguments.timeout, arguments.max_output_lines, arguments.max_output_bytes)
    label = arguments.label or ("outputs" if arguments.outputs else arguments.engine.split(":")[0])
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)
    report = Report(engine.name, label, case_set(arguments.cases), not arguments.waive_frontier_contract)
    show = _progress(arguments.progress, len(cases))
    try:
        for case in cases:
            run = engine.run(case)
            if arguments.record:
                record(run, arguments.record, case)
            verdict = judge(case, run, report.frontier_contract)
            report.verdicts.append(verdict)
            show(case.name)
            if verdict.status == "failed":
                _print(f"FAIL {case.name}", verdict.lines())
        if not arguments.outputs and not arguments.no_shrink and report.counts()[1]:
            smallest_failing(report, cases, engine.run, progress=lambda p: print(f"shrinking {p} ...",
                                                                                  file=sys.stderr))
    finally:
        engine.close()
    print()
    print(report.table())
    path = arguments.report or REPORTS / f"{label}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_json(), indent=1) + "\n")
    if report.smallest:
        shrunk = path.parent / f"{path.stem}-shrunk"
        print(f"\nsmallest failing case per program (under {shrunk}):")
        for written, case in zip(write_smallest(report, shrunk), report.smallest.values(), strict=True):
            rerun = (f"{command()} check --engine {shlex.quote(arguments.engine)} "
                     f"--cases {shlex.quote(str(Path(written).resolve()))}")
            print(f"  {case.program}: {size(case)} updates — {rerun}")
    print(f"report: {path} (engine {label}, case set {report.case_set['case_set']}, seed {report.case_set['seed']})")
    print(report.summary_line())
    return 1 if report.counts()[1] else 0


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
