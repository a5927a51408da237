"""Expected failures: the faults an engine's CI knows of, so that its run is green on them and red on
anything else (``check --expect FILE``).

An expectations file is JSON::

    {
      "format": "dd-conformance-expect/1",
      "engine": "d2mini",
      "case_set": 3,
      "expected_failures": {
        "count_by_key/booleans-00": "M1: count gives [key, 0] for a key whose records cancel",
        "semijoin/random-02": "M3: filterBy keeps a record once per record of the other side with its key"
      }
    }

Each entry is a case's name (its id: ``<program>/<name>``, as reports and
case sets name it) and why it fails, in words a reader can check. The
semantics are pytest's ``xfail(strict=True)`` and sqllogictest's per-engine
``skipif``, made strict: a listed case that fails is expected; a case that
fails and is not listed is a new failure; a listed case that runs and does
not fail (it passes, or the engine now calls it unsupported) is a fixed
fault still listed. The run is green only without the last two. A listed
case the run does not reach (another ``--program``, another case set) says
nothing. ``engine`` and ``case_set`` are for the reader: the checker prints
a note when the case set differs from the one judged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cases import CaseError

FORMAT = "dd-conformance-expect/1"


class ExpectError(CaseError):
    """An expectations file that cannot be read, or does not say what the format asks for."""


@dataclass(frozen=True)
class Expectations:
    """The failures an engine is known to have: case name -> why (``load``)."""

    path: Path
    failures: dict[str, str]
    engine: str | None = None
    case_set: int | None = None

    @classmethod
    def load(cls, path: Path) -> Expectations:
        """Read and check an expectations file.

        Raises:
            ExpectError: the file is missing, not JSON, of another format, or an entry is not a case name
                with a reason; the message names the file, the entry and what to write.
        """
        path = Path(path)
        try:
            value: Any = json.loads(path.read_text())
        except OSError as error:
            raise ExpectError(f"--expect {path}: cannot read it ({error.strerror})") from None
        except json.JSONDecodeError as error:
            raise ExpectError(f"--expect {path}: not JSON ({error})") from None
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise ExpectError(f'--expect {path}: an expectations file is a JSON object with "format": "{FORMAT}" '
                              'and "expected_failures": {"<program>/<case>": "why it fails", ...}')
        failures = value.get("expected_failures")
        if not isinstance(failures, dict):
            raise ExpectError(f'--expect {path}: "expected_failures" is an object of case names and reasons')
        for name, reason in failures.items():
            if name.count("/") != 1 or not all(name.split("/")):
                raise ExpectError(f"--expect {path}: {name!r} is not a case name (<program>/<case>, as a report "
                                  "names it)")
            if not isinstance(reason, str) or not reason.strip():
                raise ExpectError(f"--expect {path}: {name!r} has no reason; say why it fails (a finding, a "
                                  "missing feature) so that a reader can check it")
        return cls(path, dict(failures), value.get("engine"), value.get("case_set"))


def text(failures: dict[str, str], engine: str, case_set: int | None) -> str:
    """An expectations file listing ``failures`` (case name -> reason), sorted by case name."""
    return json.dumps({
        "format": FORMAT, "engine": engine, "case_set": case_set, "expected_failures": dict(sorted(failures.items())),
    }, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, failures: dict[str, str], engine: str, case_set: int | None) -> None:
    """Write ``text(failures, engine, case_set)`` to ``path``."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text(failures, engine, case_set))
