"""Every engine judged on the committed case set: the README's table of engines, and each peer's results.

    python -m final.conformance.judged           # run every engine and rewrite the tables (about 3 minutes)
    python -m final.conformance.judged --check   # run them and only compare: exit 1 naming what differs

The tables are generated, so that they can be rewritten in one command when
the case set changes: the README's 'Engines judged' table (this project's
stages, d2ts, d2mini, pathway and pydbsp: passed, failed and unsupported),
and the results block of the d2mini, pathway and pydbsp REPORTs (per program,
and for d2mini with its adapter's ``--workarounds`` too). Each sits between
two HTML comments that name this command; the prose around them (the
findings, argued from the documents) is written by hand, and a test checks
that the tables match a run. Each peer's ``expected-failures.json`` (for
``check --expect``) is checked the same way: it lists exactly the cases the
peer fails, each failing as recorded, and a rewrite keeps the reasons
written by hand and the recorded failures that still match (with the ``*``
written by hand where a failure's text varies between runs), records each
failure that does not as the run gives it, and marks a new failure ``not
yet explained``. A run needs node and npm (d2ts, d2mini) and a
Python 3.12 (pathway, pydbsp), and installs them on first use as ``check``
does. The engines run side by side; most of the time is d2ts's loops that
never settle, each given its adapter's 5 s (its REPORT, F2).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .cases import CASES, Case, case_set, load_all
from .catalog import BY_NAME
from .check import Verdict, judge
from .engines import D2MINI, D2TS, PATHWAY, PYDBSP, STAGES, Engine, engine_named
from .expect import Expectations, Expected
from .expect import text as expectations_text

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
STATUSES = ("passed", "failed", "unsupported")


@dataclass(frozen=True)
class Judged:
    """One engine as the tables show it: its label, how to start it, what it is, and its report."""

    label: str
    make: Callable[[], Engine]
    version: str
    report: str = ""
    """The engine's report, relative to the README ('' for this project's stages)."""


def _npm_version(folder: Path, package: str) -> str:
    """``package@version`` as the adapter in ``folder`` pins it in its package.json."""
    version = json.loads((folder / "package.json").read_text())["dependencies"][package]
    return f"{package} {version}"


def _pip_version(folder: Path, package: str) -> str:
    """``package version`` as the adapter in ``folder`` pins it in its requirements.txt."""
    for line in (folder / "requirements.txt").read_text().splitlines():
        if line.startswith(f"{package}=="):
            return f"{package} {line.split('==', 1)[1]}"
    raise ValueError(f"{folder / 'requirements.txt'} pins no {package}")


def _workarounds() -> Engine:
    """d2mini through its adapter with ``--workarounds`` (installed like ``--engine d2mini``)."""
    return engine_named("d2mini --workarounds")


def engines() -> list[Judged]:
    """The engines of the README's table, in its order, and d2mini with its workarounds (for its REPORT)."""
    stages = [Judged(name, lambda name=name: engine_named(name), "this project") for name in (*STAGES, "final")]
    return [
        *stages,
        Judged("d2ts", lambda: engine_named("d2ts"), _npm_version(D2TS, "@electric-sql/d2ts"), "d2ts/REPORT.md"),
        Judged("d2mini", lambda: engine_named("d2mini"), _npm_version(D2MINI, "@electric-sql/d2mini"),
               "d2mini/REPORT.md"),
        Judged("pathway", lambda: engine_named("pathway"), _pip_version(PATHWAY, "pathway"), "pathway/REPORT.md"),
        Judged("pydbsp", lambda: engine_named("pydbsp"), _pip_version(PYDBSP, "pydbsp"), "pydbsp/REPORT.md"),
        Judged("d2mini --workarounds", _workarounds, _npm_version(D2MINI, "@electric-sql/d2mini")),
    ]


def run_all(judged: Sequence[Judged], cases: Sequence[Case]) -> dict[str, list[Verdict]]:
    """Every engine's verdict on every case, the engines run side by side (each in a thread of its own).

    The engines are made one after another first, since making one may install it (d2mini and its
    workarounds share one ``npm ci``)."""
    made = [one.make() for one in judged]

    def verdicts(engine: Engine) -> list[Verdict]:
        try:
            return [judge(case, engine.run(case)) for case in cases]
        finally:
            engine.close()

    with ThreadPoolExecutor(max_workers=len(made)) as pool:
        return dict(zip((one.label for one in judged), pool.map(verdicts, made), strict=True))


def counts(verdicts: Sequence[Verdict], program: str | None = None) -> tuple[int, int, int]:
    """How many of ``verdicts`` (of ``program``'s cases, if given) passed, failed and were unsupported."""
    statuses = [verdict.status for verdict in verdicts if program is None or verdict.program == program]
    return statuses.count("passed"), statuses.count("failed"), statuses.count("unsupported")


def _the_set(cases: Sequence[Case]) -> str:
    about = case_set(CASES)
    return f"case set {about['case_set']} (seed {about['seed']}, {len(cases)} cases)"


def readme_table(judged: Sequence[Judged], results: dict[str, list[Verdict]], cases: Sequence[Case]) -> str:
    """The README's table of engines: passed, failed and unsupported on the committed set."""
    lines = [f"On {_the_set(cases)}:", "",
             "| engine | what | passed | failed | unsupported | findings |",
             "| --- | --- | --- | --- | --- | --- |"]
    for one in judged:
        if one.label.endswith("--workarounds"):
            continue
        passed, failed, unsupported = counts(results[one.label])
        report = f"[{one.report}]({one.report})" if one.report else "—"
        lines.append(f"| {one.label} | {one.version} | {passed} | {failed} | {unsupported} | {report} |")
    return "\n".join(lines)


def report_block(label: str, results: dict[str, list[Verdict]], cases: Sequence[Case],
                 fails_by: dict[str, str]) -> str:
    """The results block of a peer's REPORT: totals, then per program (with ``--workarounds`` where the
    adapter has them), and which finding explains each program that fails (``fails_by``)."""
    variants = [name for name in (label, f"{label} --workarounds") if name in results]
    how = {label: " as it is" if len(variants) > 1 else "", f"{label} --workarounds": " with `--workarounds`"}
    totals = "; ".join("**{} passed, {} failed, {} unsupported**".format(*counts(results[name])) + how[name]
                       for name in variants)
    columns = ("as it is", "`--workarounds`") if len(variants) > 1 else ("passed / failed / unsupported",)
    header = ["program", *columns, "fails by"]
    lines = [f"On {_the_set(cases)}: {totals}.", "", "| " + " | ".join(header) + " |",
             "|" + " --- |" * len(header)]
    for program in sorted(BY_NAME):
        cells = [" / ".join(str(n) for n in counts(results[name], program)) for name in variants]
        failing = counts(results[label], program)[1] > 0
        why = fails_by.get(program, "not yet explained") if failing else "—"
        lines.append(f"| {program} | " + " | ".join(cells) + f" | {why} |")
    return "\n".join(lines)


PEERS = {"d2mini": D2MINI, "pathway": PATHWAY, "pydbsp": PYDBSP}
"""The peers whose REPORT holds a generated results block, by label, and their folders."""


def _fails_by(label: str) -> dict[str, str]:
    """A peer's explanation of its failing programs: ``FAILS_BY`` in its findings module."""
    if label == "d2mini":
        from .d2mini.findings import FAILS_BY
    elif label == "pathway":
        from .pathway.findings import FAILS_BY
    else:
        from .pydbsp.findings import FAILS_BY
    return FAILS_BY


def _replace(text: str, name: str, block: str, path: Path) -> str:
    """``text`` with the block between ``<!-- name: generated ... -->`` and ``<!-- end of name -->`` replaced.

    Raises:
        ValueError: ``path`` lacks the markers.
    """
    pattern = re.compile(rf"(<!-- {name}: generated [^\n]*-->\n).*?(<!-- end of {name} -->)", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path} has no '<!-- {name}: generated ... -->' ... '<!-- end of {name} -->' markers")
    return pattern.sub(lambda match: match.group(1) + block + "\n" + match.group(2), text, count=1)


GENERATED = ((README, "engines"), *((folder / "REPORT.md", "results") for folder in PEERS.values()))
"""The files holding generated blocks, and each block's name."""


EXPECTED = {"d2ts": D2TS, **PEERS}
"""The peers that ship an expectations file (``<folder>/expected-failures.json``, for ``check --expect``)."""


def expected_failures(label: str, verdicts: Sequence[Verdict], path: Path) -> str:
    """A peer's expectations file as a run says it should be: every case it failed, each with the reason
    the file gives already (written by hand from its REPORT's findings) and the failure it records if the
    run's matches it (``Expected.matches``: a ``*`` written by hand stands for what varies), else the run's;
    a failure the file does not list yet is ``not yet explained`` and what the failure says."""
    known = Expectations.load(path).failures if path.exists() else {}
    failures = {}
    for verdict in verdicts:
        if verdict.status != "failed":
            continue
        listed = known.get(verdict.case)
        if listed is None:
            failures[verdict.case] = Expected(f"not yet explained: {verdict.failure()}", verdict.failure())
        elif listed.failure is None or not listed.matches(verdict.failure()):
            failures[verdict.case] = Expected(listed.reason, verdict.failure())
        else:
            failures[verdict.case] = listed
    return expectations_text(failures, label, case_set(CASES)["case_set"])


def rendered(judged: Sequence[Judged], results: dict[str, list[Verdict]], cases: Sequence[Case]) -> dict[Path, str]:
    """Each generated file's text as a run says it should be: the README, each peer's REPORT, and each peer's
    expectations file."""
    texts = {README: _replace(README.read_text(), "engines", readme_table(judged, results, cases), README)}
    for label, folder in PEERS.items():
        path = folder / "REPORT.md"
        block = report_block(label, results, cases, _fails_by(label))
        texts[path] = _replace(path.read_text(), "results", block, path)
    for label, folder in EXPECTED.items():
        path = folder / "expected-failures.json"
        texts[path] = expected_failures(label, results[label], path)
    return texts


def main(argv: Sequence[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(prog="python -m final.conformance.judged", description=__doc__.split("\n\n")[0])
    arguments.add_argument("--check", action="store_true", help="only compare the tables with a run; exit 1 if "
                           "one differs")
    options = arguments.parse_args(argv)
    for path, name in GENERATED:  # before the engines run: a file without its markers would waste the run
        _replace(path.read_text(), name, "", path)
    cases = list(load_all(CASES))
    judged = engines()
    texts = rendered(judged, run_all(judged, cases), cases)
    stale = [path for path, text in texts.items() if path.read_text() != text]
    if options.check:
        for path in stale:
            print(f"{path.relative_to(HERE)} differs from a run: python -m final.conformance.judged rewrites it",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(texts[path])
        print(f"rewrote {path.relative_to(HERE)}")
    if not stale:
        print("every table matches the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
