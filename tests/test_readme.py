"""The README's programs for final run, and print what the README says they print.

Each ``python`` block that starts ``from final import`` is run, and what it
prints (one ``Version(v) {changes}`` line per finished version) is compared,
as values, with the block that follows it: dict order may differ between runs
(``hash(None)`` is not fixed), multiplicities may not.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from final import Version

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"```python\n(from final import .*?)```.*?```\n(.*?)```", re.DOTALL)
PROGRAMS = BLOCK.findall(README.read_text())


def _line(line: str) -> tuple:
    """A printed ``Version(v) {changes}`` line as ``(Version, dict)``."""
    version, _, changes = line.partition(" ")
    return eval(version, {"Version": Version}), eval(changes, {})


def test_the_readme_has_programs_for_final() -> None:
    assert len(PROGRAMS) >= 2


@pytest.mark.parametrize(("program", "printed"), PROGRAMS, ids=[f"program{n}" for n in range(len(PROGRAMS))])
def test_a_readme_program_prints_what_the_readme_says(program: str, printed: str) -> None:
    code = program.strip().splitlines()
    assert len([line for line in code[1:] if line.strip()]) < 15, "the README promises programs under 15 lines"
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(program, "README.md", "exec"), {})
    assert [_line(line) for line in output.getvalue().strip().splitlines()] == [
        _line(line) for line in printed.strip().splitlines()
    ]
