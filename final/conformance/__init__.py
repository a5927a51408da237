"""A conformance oracle for Differential Dataflow engines: named programs, cases as JSON, and a checker.

- ``catalog``: the programs, each defined in prose and implemented up to
  three times (002's operators, which every stage runs; final's own; and the
  definition in plain Python, the oracle's answer from scratch);
- ``cases``: a case (program, input messages, expected output at every
  version), read from JSON checked against ``schema.json``;
- ``generate``: cases from the documents' examples and seeded random
  histories, final's answers checked against each program's plain-Python
  definition from scratch; ``examples``: the documents' examples it makes
  cases of, as package data (``examples.json``);
- ``fuzz``: fresh random cases at run time, made and answered as
  ``generate`` makes its random ones, for as long as they are asked for;
- ``drive``: how a case runs on an engine written with this project's API
  (final here, the ladder's stages through the repository's ``ladder.py``),
  the one driver the test suite uses too;
- ``engines``: the engines a check can run (final in process, Python
  plug-ins and anything speaking the JSON-lines protocol in a child process,
  recorded outputs);
- ``check``: verdicts per case and version, shrinking, the report;
- ``expect``: the failures an engine's CI expects (``check --expect``);
- ``cache``: the user cache folder, where the adapters' installs and the
  digests of case files found valid are kept between runs;
- ``generic``: the programs as JSON operator graphs (``programs/``, checked
  against ``program.schema.json``) and an adapter that builds them on final.

``README.md`` beside this file documents the case format, the encoding of
tuples and NULL, and the protocol. The command line is ``dd-conformance``
(``python -m final.conformance`` in a clone); in Python this package is also
``differential_dataflow_stages.conformance``, the same modules.
"""

from .cases import CASES, Case, CaseError, load, load_all
from .catalog import PROGRAMS, Program
from .check import Report, Verdict, judge
from .engines import EngineError, engine_named

__all__ = [
    "CASES", "Case", "CaseError", "EngineError", "PROGRAMS", "Program", "Report", "Verdict", "engine_named", "judge",
    "load", "load_all",
]
