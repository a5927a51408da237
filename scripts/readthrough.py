"""Time a read-through of each workshop notebook, and print the estimate as a Markdown table.

For each notebook in notebooks/ (or those named on the command line, by module: v0, final2, ...):

- counts the words of its Markdown cells (the prose a learner reads) and the non-blank lines of its
  code cells, leaving out the solution cells (tagged ``solution``, hidden until asked for);
- executes it as the site's build does (``build_site.execute``: a fresh kernel, notebooks/ as the
  working directory), and sums the wall-clock time of its cells from the kernel's
  ``execute_input`` and ``execute_reply`` timestamps;
- finds its exercises (the ``### Exercise N: ...`` headings) and sorts each into a build-it exercise,
  when its answer cell (the first code cell after the heading that calls ``check(``) asks for a
  function (a ``def``), or a prediction (a value).

The estimate is reading time at ``WORDS_PER_MINUTE`` plus code reading at ``LINES_PER_MINUTE``, plus
the measured execution, plus ``PREDICTION_MINUTES`` per prediction and ``BUILD_MINUTES`` per build-it
exercise, rounded up to 5 minutes. Run it from the repository:

    PYTHONPATH=.:notebooks .venv/bin/python scripts/readthrough.py [--sections] [v0 v1 ...]
"""

from __future__ import annotations

import datetime as dt
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from build_site import execute, route

WORDS_PER_MINUTE = 150
"""Technical prose read with care, formulas and code names included (slower than the 200 to 250 of ordinary
prose)."""
LINES_PER_MINUTE = 10
"""Code read well enough to say what a cell will do before running it."""
PREDICTION_MINUTES = 6
"""An exercise that asks for an operator's output: read, predict, run the check, read its answer."""
BUILD_MINUTES = 15
"""An exercise that asks for a piece of the engine (a method, a graph), checked against v0 on random histories."""

EXERCISE = re.compile(r"^### Exercise \d+: (.*)$", re.M)
ANSWER = re.compile(r"^check\(", re.M)
"""An exercise's answer cell hands the learner's answer to ``workshop.check``; a cell between the heading and it
(the code the exercise is about, say) is reading."""
WORD = re.compile(r"[\w`'\u2019-]+")


@dataclass
class Readthrough:
    name: str
    words: int
    code_lines: int
    predictions: int
    builds: int
    seconds: float

    @property
    def reading(self) -> float:
        return self.words / WORDS_PER_MINUTE

    @property
    def code(self) -> float:
        return self.code_lines / LINES_PER_MINUTE

    @property
    def exercises(self) -> int:
        return self.predictions * PREDICTION_MINUTES + self.builds * BUILD_MINUTES

    @property
    def total(self) -> int:
        minutes = self.reading + self.code + self.seconds / 60 + self.exercises
        return 5 * math.ceil(minutes / 5)


def solution(cell: nbformat.NotebookNode) -> bool:
    return "solution" in cell.metadata.get("tags", [])


def seconds(cell: nbformat.NotebookNode) -> float:
    """How long an executed cell ran, from the kernel's timestamps (0 for a cell that did not run)."""
    timing = cell.metadata.get("execution", {})
    started, ended = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (started and ended):
        return 0.0
    return (dt.datetime.fromisoformat(ended.replace("Z", "+00:00"))
            - dt.datetime.fromisoformat(started.replace("Z", "+00:00"))).total_seconds()


def measure(path: Path, notebook: nbformat.NotebookNode | None = None) -> dict[str, Readthrough]:
    """One read-through per ``##`` section, in order (the cells before the first ``##`` under the title),
    from ``notebook`` as executed (executed here when not given)."""
    notebook = notebook if notebook is not None else execute(path)
    sections: dict[str, Readthrough] = {}
    section = "(opening cells)"
    awaiting = False  # an exercise heading whose answer cell (the one calling check) is still to come
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            heading = re.search(r"^## (.*)$", cell.source, re.M)
            if heading:
                section = heading.group(1).strip()
        part = sections.setdefault(section, Readthrough(section, 0, 0, 0, 0, 0.0))
        if cell.cell_type == "markdown":
            part.words += len(WORD.findall(cell.source))
            awaiting = awaiting or bool(EXERCISE.search(cell.source))
        elif cell.cell_type == "code":
            part.seconds += seconds(cell)
            if solution(cell):
                continue
            part.code_lines += sum(1 for line in cell.source.splitlines() if line.strip())
            if awaiting and ANSWER.search(cell.source):
                if re.search(r"^\s*def ", cell.source, re.M):
                    part.builds += 1
                else:
                    part.predictions += 1
                awaiting = False
    return sections


def whole(name: str, parts: list[Readthrough]) -> Readthrough:
    """The sum of some sections' read-throughs."""
    return Readthrough(name, sum(p.words for p in parts), sum(p.code_lines for p in parts),
                       sum(p.predictions for p in parts), sum(p.builds for p in parts),
                       sum(p.seconds for p in parts))


def table(rows: list[Readthrough], cumulative: bool = False) -> str:
    """A Markdown table of read-throughs; with ``cumulative``, also the minutes from the first row to the end of
    each (the unrounded sum, rounded up to 5), which is what a part of a notebook takes."""
    head = "| notebook | prose words | code lines | exercises (predict + build) | execution | read-through |"
    lines = [head + (" from the start |" if cumulative else ""),
             "| --- " * (7 if cumulative else 6) + "|"]
    for index, row in enumerate(rows):
        line = (f"| {row.name} | {row.words:,} | {row.code_lines} | {row.predictions} + {row.builds} "
                f"| {row.seconds:.0f} s | {row.total} min |")
        if cumulative:
            line += f" {whole('', rows[:index + 1]).total} min |"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """``readthrough.py [--sections] [module ...]``: one row per notebook, or with ``--sections`` also one
    table per notebook with a row per ``##`` section."""
    by_section = "--sections" in argv
    modules = [arg for arg in argv if arg != "--sections"]
    rows, details = [], []
    for stop in route():  # in ladder order
        if modules and stop.module not in modules:
            continue
        started = time.perf_counter()
        sections = list(measure(stop.path).values())
        rows.append(whole(stop.module, sections))
        details.append((stop.module, sections))
        print(f"{stop.path.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(f"Measured {dt.date.today().isoformat()}: {WORDS_PER_MINUTE} words and {LINES_PER_MINUTE} code lines "
          f"a minute, {PREDICTION_MINUTES} minutes a prediction, {BUILD_MINUTES} a build-it exercise.\n")
    print(table(rows))
    if by_section:
        for name, sections in details:
            print(f"\n{name}, section by section (each rounded up on its own):\n")
            print(table(sections, cumulative=True))


if __name__ == "__main__":
    main(sys.argv[1:])
