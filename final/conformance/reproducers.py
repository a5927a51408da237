"""Reproducers: the smallest cases found on which an engine disagrees with the expected output.

An engine's ``findings.py`` (``d2mini/``, ``pathway/``) lists its reproducers
as input messages; this module turns each into an ordinary case, its
expected output computed the way ``generate`` computes every case's (final's
answer, checked against the from-scratch answer at every version), and
writes them under the engine's ``findings/`` folder, which ``check --cases``
reads like any case set. The engine's ``REPORT.md`` explains each one.
"""

from __future__ import annotations

from pathlib import Path

from .cases import Case, Message, file_name
from .catalog import program_named
from .generate import answer, tags_of

Reproducer = tuple[str, int, str, list[dict]]
"""(program, dimensions, what it shows, messages): one reproducer, by the name of its case."""


def data(input_name: str, *updates: list) -> dict:
    """A data message: ``updates`` are ``[record, version, multiplicity]``."""
    return {"input": input_name, "data": [list(update) for update in updates]}


def frontier(input_name: str, *versions: object) -> dict:
    """A frontier message; no versions closes the input."""
    return {"input": input_name, "frontier": list(versions)}


def reproducer(engine: str, name: str, spec: Reproducer) -> Case:
    """The case ``name`` of ``engine``'s findings, with its expected output and tags (``engine`` among them)."""
    program_name, dimensions, source, raw = spec
    program = program_named(program_name)
    messages = tuple(Message.from_json(message) for message in raw)
    bare = Case(name, program_name, program.inputs, dimensions, messages, (), f"{engine}/REPORT.md: {source}")
    tags = tags_of(program, dimensions, bare.histories(), messages)
    return answer(Case(name, program_name, program.inputs, dimensions, messages, (), bare.source, (engine, *tags)))


def write_findings(engine: str, reproducers: dict[str, Reproducer], out: Path) -> int:
    """Write ``reproducers`` as case files under ``out`` (removing stale ones); returns how many."""
    for stale in out.rglob("*.json") if out.exists() else ():
        stale.unlink()
    for name, spec in reproducers.items():
        case = reproducer(engine, name, spec)
        path = out / file_name(case.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case.text())
    return len(reproducers)
