"""The documents' worked examples that become cases, as package data: ``examples.json``.

The examples are written once, in the repository's ``tests/examples.py``
(which the tests, the tour and the notebooks read), and that file is not part
of the package. ``generate`` needs, of each example ``EXAMPLE_PROGRAMS`` maps
to a program, only data: its input histories, the versions to evaluate at, and
the output its document gives (accumulated per version, and the differences
where the document prints them). ``examples.json`` holds exactly that, so
``generate`` reads one file whether it runs in a clone or installed.

The file is written from ``tests/examples.py`` in a clone (``python -m
final.conformance.examples --write``); ``--check`` says whether it still
matches, and a test does the same, so the two never drift apart. Those two
commands are the one place ``final`` imports the repository's code from
outside ``final``, and only when they run: ``load``, and so ``generate``,
need this package alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .encoding import (
    EncodingError,
    PlainVersion,
    decode,
    decode_collection,
    decode_version,
    encode,
    encode_collection,
    encode_version,
)
from .versions import Collection, History

FORMAT = "dd-conformance-examples/1"
EXAMPLES_PATH = Path(__file__).with_name("examples.json")
WRITE = "python -m final.conformance.examples --write"


class ExampleError(RuntimeError):
    """``examples.json`` cannot be read, or cannot be written from ``tests/examples.py``; the message says what
    to do."""


def _fares_row(record: tuple) -> tuple:
    """004's example writes a group as (key, (("distinct_distances", n), ("max_fare", x), ("min_fare", y)));
    the catalog's min_max_count_distinct writes (key, min, max, n)."""
    key, ((_, distinct), (_, high), (_, low)) = record
    return (key, low, high, distinct)


EXAMPLE_PROGRAMS: dict[str, tuple[str, Callable[[Any], Any] | None]] = {
    "difference_a_minus_b": ("difference", None),
    "add_one_iterate": ("add_one_squares", None),
    "plus_five_evens_graph": ("plus_five_evens", None),
    "concat_out_of_order": ("concat", None),
    "reduce_closed_versions_in_order": ("count_by_key", None),
    "geometric_series": ("geometric_series", None),
    "household_distinct": ("distinct", None),
    "distinct_lengths": ("distinct_lengths", None),
    "fraud_propagation": ("reachability", None),
    "noop_body_converges": ("noop_loop", None),
    "names_with_lengths": ("name_lengths", None),
    "join_function_copies": ("timed_copies", None),
    "explode_counts": ("explode", None),
    "temporal_filter_window": ("temporal_window", None),
    "fares_by_passengers": ("min_max_count_distinct", _fares_row),
    "three_hops_shared_links": ("three_hops", None),
    "enrichment_left_joins": ("enrichment", None),
}
"""Each documented example (by its name in ``tests/examples.py``) and the program that computes it, with a
translation of the example's records where the program writes them differently. ``examples.json`` holds
these examples, in this order."""


@dataclass(frozen=True)
class DocumentedExample:
    """What ``generate`` needs of one of the documents' examples: the inputs and the output the document gives."""

    name: str
    source: str
    """The document's short id and the passage the example is in."""
    inputs: list[History]
    """One history of ``(record, version, multiplicity)`` updates per input of the program, in the order sent."""
    expected: dict[PlainVersion, Collection]
    """The output the document gives, accumulated, at each version it gives one for."""
    at: tuple[PlainVersion, ...] | None = None
    """Versions to evaluate at beyond the input versions (and their joins), where the document looks there."""
    differences: dict[PlainVersion, Collection] | None = None
    """The document's output differences per version, where it prints them."""


# -- writing, from the repository's tests/examples.py ------------------------------------


def repository_examples() -> list[DocumentedExample]:
    """The examples ``EXAMPLE_PROGRAMS`` maps, as the repository's ``tests/examples.py`` writes them.

    Raises:
        ExampleError: ``tests`` is not importable (this needs a clone, run from its root), or
            ``tests/examples.py`` has an example that ``EXAMPLE_PROGRAMS`` does not map to a program.
    """
    try:
        from tests.examples import EXAMPLES
    except ImportError as error:
        raise ExampleError(
            f"the documents' examples are written in tests/examples.py, which needs a clone of the repository on "
            f"the path ({error}); run '{WRITE}' from the clone's root"
        ) from None
    by_name = {example.name: example for example in EXAMPLES}
    unmapped = sorted(set(by_name) - set(EXAMPLE_PROGRAMS))
    if unmapped:
        raise ExampleError(f"documented examples {unmapped} have no program: add each to EXAMPLE_PROGRAMS in "
                           f"{Path(__file__).name}")
    missing = sorted(set(EXAMPLE_PROGRAMS) - set(by_name))
    if missing:
        raise ExampleError(f"EXAMPLE_PROGRAMS names {missing}, which tests/examples.py does not have")
    return [
        DocumentedExample(example.name, example.source, example.inputs, example.expected, example.at,
                          example.differences)
        for example in (by_name[name] for name in EXAMPLE_PROGRAMS)
    ]


def text(examples: Sequence[DocumentedExample]) -> str:
    """``examples`` as ``examples.json`` holds them: one line per input history and per version, for readable
    diffs; collections sorted by their records' JSON text (``encode_collection``), so equal examples are equal
    files."""
    entries = []
    for example in examples:
        lines = [f'      "name": {json.dumps(example.name)}', f'      "source": {json.dumps(example.source)}']
        lines.append(_rows("inputs", [[[encode(r), encode_version(v), m] for r, v, m in history]
                                      for history in example.inputs]))
        if example.at is not None:
            lines.append(f'      "at": {json.dumps([encode_version(version) for version in example.at])}')
        lines.append(_rows("expected", _per_version(example.expected, "collection")))
        if example.differences is not None:
            lines.append(_rows("differences", _per_version(example.differences, "difference")))
        entries.append("    {\n" + ",\n".join(lines) + "\n    }")
    head = f'  "format": {json.dumps(FORMAT)},\n  "written_by": {json.dumps(WRITE + ", from tests/examples.py")},\n'
    return "{\n" + head + '  "examples": [\n' + ",\n".join(entries) + "\n  ]\n}\n"


def _per_version(collections: dict[PlainVersion, Collection], key: str) -> list[dict]:
    return [{"version": encode_version(version), key: encode_collection(collection)}
            for version, collection in collections.items()]


def _rows(key: str, rows: list) -> str:
    body = ",\n".join(f"        {json.dumps(row)}" for row in rows)
    return f'      "{key}": [\n{body}\n      ]' if rows else f'      "{key}": []'


# -- reading, in a clone or installed -------------------------------------------------------


def load(path: Path = EXAMPLES_PATH) -> list[DocumentedExample]:
    """The examples ``path`` holds: exactly those ``EXAMPLE_PROGRAMS`` maps, in its order.

    Raises:
        ExampleError: the file is missing or unreadable, or holds other examples than ``EXAMPLE_PROGRAMS``
            maps (then it is to be written again from ``tests/examples.py``).
    """
    redo = f"write it again with '{WRITE}' in a clone of the repository"
    try:
        value = json.loads(Path(path).read_text())
        if value.get("format") != FORMAT:
            raise ExampleError(f"{path}: its format is {value.get('format')!r}, not {FORMAT!r}; {redo}")
        examples = [_example(entry) for entry in value["examples"]]
    except (OSError, json.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError) as error:
        raise ExampleError(f"{path}: cannot read the documents' examples ({error!r}); {redo}") from None
    names = [example.name for example in examples]
    if names != list(EXAMPLE_PROGRAMS):
        raise ExampleError(f"{path} holds the examples {names}, but EXAMPLE_PROGRAMS maps {list(EXAMPLE_PROGRAMS)}; "
                           f"{redo}")
    return examples


def _example(entry: dict) -> DocumentedExample:
    at = entry.get("at")
    differences = entry.get("differences")
    return DocumentedExample(
        name=entry["name"],
        source=entry["source"],
        inputs=[[(decode(r), decode_version(v), m) for r, v, m in history] for history in entry["inputs"]],
        expected={decode_version(e["version"]): decode_collection(e["collection"]) for e in entry["expected"]},
        at=None if at is None else tuple(decode_version(version) for version in at),
        differences=None if differences is None else {
            decode_version(e["version"]): decode_collection(e["difference"]) for e in differences},
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``--write`` writes ``examples.json`` from ``tests/examples.py``; ``--check`` exits 1 if it differs from what
    ``--write`` would write."""
    parser = argparse.ArgumentParser(prog="python -m final.conformance.examples", description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"write {EXAMPLES_PATH.name} from tests/examples.py")
    action.add_argument("--check", action="store_true", help=f"whether {EXAMPLES_PATH.name} matches tests/examples.py")
    arguments = parser.parse_args(argv)
    try:
        written = text(repository_examples())
    except (ExampleError, EncodingError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if arguments.write:
        EXAMPLES_PATH.write_text(written)
        print(f"{EXAMPLES_PATH}: {len(EXAMPLE_PROGRAMS)} examples")
        return 0
    if not EXAMPLES_PATH.is_file() or EXAMPLES_PATH.read_text() != written:
        print(f"{EXAMPLES_PATH} differs from tests/examples.py: run '{WRITE}'", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
