"""Expected failures: the faults an engine's CI knows of, so that its run is green on them and red on
anything else (``check --expect FILE``).

An expectations file is JSON::

    {
      "format": "dd-conformance-expect/2",
      "engine": "d2mini",
      "case_set": 3,
      "expected_failures": {
        "count_by_key/booleans-02": {
          "reason": "M1: count gives [key, 0] for a key whose records cancel",
          "failure": "at version 4: extra [1, 0] x1"
        }
      }
    }

Each entry is a case's name (its id: ``<program>/<name>``, as reports and
case sets name it), why it fails, in words a reader can check, and the
failure itself as ``check`` prints it first (``Verdict.failure``), in which
``*`` stands for any text (what changes from run to run: a count of steps,
seconds). The semantics are pytest's ``xfail(strict=True)``, strict both
ways: a listed case that fails as recorded is expected; a case that fails
and is not listed, or fails otherwise than recorded, is a new failure; a
listed case that runs and does not fail (it passes, or the engine now calls
it unsupported) is a fixed fault still listed. The run is green only
without the last two. A listed case the run does not reach (another
``--program``) says nothing, but a listed name that the case set does not
hold at all is refused before the run starts: a typo would otherwise
expect nothing, silently. ``engine`` and ``case_set`` are for the reader:
the checker prints a note when the case set differs from the one judged.

Format ``dd-conformance-expect/1`` gave each case its reason alone (a string):
it is still read, and any failure of a listed case is then expected.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cases import CaseError

FORMAT = "dd-conformance-expect/2"
FIRST_FORMAT = "dd-conformance-expect/1"
"""The format before failures were recorded, still read (``Expected.failure`` is then None)."""


class ExpectError(CaseError):
    """An expectations file that cannot be read, or does not say what the format asks for."""


@dataclass(frozen=True)
class Expected:
    """One expected failure: why the case fails (``reason``), and how (``failure``: the verdict's first
    line, ``*`` standing for any text; None when the file is of the first format, which recorded none)."""

    reason: str
    failure: str | None = None

    def matches(self, failure: str) -> bool:
        """Whether a verdict's first line (``Verdict.failure``) is the failure recorded: equal, but for
        what each ``*`` of the record stands for. Any failure matches when none is recorded."""
        if self.failure is None:
            return True
        pattern = ".*".join(re.escape(piece) for piece in self.failure.split("*"))
        return re.fullmatch(pattern, failure, re.DOTALL) is not None

    def to_json(self) -> dict[str, str]:
        return {"reason": self.reason, "failure": self.failure if self.failure is not None else "*"}


@dataclass(frozen=True)
class Expectations:
    """The failures an engine is known to have: case name -> what is expected of it (``load``)."""

    path: Path
    failures: dict[str, Expected]
    engine: str | None = None
    case_set: int | None = None
    format: str = FORMAT

    @classmethod
    def load(cls, path: Path) -> Expectations:
        """Read and check an expectations file (of this format or the first).

        Raises:
            ExpectError: the file is missing, not JSON, of another format, or an entry is not a case name
                with a reason (and, in this format, a failure); the message names the file, the entry and
                what to write.
        """
        path = Path(path)
        try:
            value: Any = json.loads(path.read_text())
        except OSError as error:
            raise ExpectError(f"--expect {path}: cannot read it ({error.strerror})") from None
        except json.JSONDecodeError as error:
            raise ExpectError(f"--expect {path}: not JSON ({error})") from None
        if not isinstance(value, dict) or value.get("format") not in (FORMAT, FIRST_FORMAT):
            raise ExpectError(f'--expect {path}: an expectations file is a JSON object with "format": "{FORMAT}" '
                              'and "expected_failures": {"<program>/<case>": {"reason": "why it fails", "failure": '
                              '"what check prints first"}, ...} (--write-expect writes one)')
        failures = value.get("expected_failures")
        if not isinstance(failures, dict):
            raise ExpectError(f'--expect {path}: "expected_failures" is an object of case names and what each '
                              "failure is")
        read = {name: _entry(path, name, entry, value["format"]) for name, entry in failures.items()}
        return cls(path, read, value.get("engine"), value.get("case_set"), value["format"])


def _entry(path: Path, name: str, entry: Any, format: str) -> Expected:
    """One entry of an expectations file of ``format``, checked.

    Raises:
        ExpectError: the name is not a case name, or the entry lacks a reason or (format 2) a failure.
    """
    if name.count("/") != 1 or not all(name.split("/")):
        raise ExpectError(f"--expect {path}: {name!r} is not a case name (<program>/<case>, as a report names it)")
    if format == FIRST_FORMAT:
        reason, failure = entry, None
    elif isinstance(entry, dict):
        reason, failure = entry.get("reason"), entry.get("failure")
        if not isinstance(failure, str) or not failure:
            raise ExpectError(f'--expect {path}: {name!r} has no failure; give "failure": the line check prints '
                              'first for it, * standing for what varies ("*" for any failure)')
    else:
        raise ExpectError(f'--expect {path}: {name!r} has no failure; in {FORMAT} each case is {{"reason": "why it '
                          'fails", "failure": "the line check prints first for it"}}')
    if not isinstance(reason, str) or not reason.strip():
        raise ExpectError(f"--expect {path}: {name!r} has no reason; say why it fails (a finding, a missing "
                          "feature) so that a reader can check it")
    return Expected(reason, failure)


def text(failures: dict[str, Expected], engine: str, case_set: int | None) -> str:
    """An expectations file listing ``failures`` (case name -> what is expected), sorted by case name."""
    return json.dumps({
        "format": FORMAT, "engine": engine, "case_set": case_set,
        "expected_failures": {name: failures[name].to_json() for name in sorted(failures)},
    }, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, failures: dict[str, Expected], engine: str, case_set: int | None) -> None:
    """Write ``text(failures, engine, case_set)`` to ``path``."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text(failures, engine, case_set))
