"""Cases from the documents' examples and from seeded random histories, each answer computed twice.

Every case's expected output is what final computes, fed the case's
messages, and it is written only if it equals the answer from scratch at
every version: the program's ``reference``, its definition written as plain
Python over the inputs accumulated at that version, which shares no code with
any engine. A disagreement raises ``GenerationError`` naming the case and the
version; no case is written for it. A documented example must moreover give
the output its document gives.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cases import (
    CASES,
    VALID_LIST,
    Case,
    Expected,
    Message,
    case_files,
    digest,
    file_name,
    read_case_file,
    schema_digest,
)
from .catalog import PROGRAMS, Program, RandomRecord, pair_of, pick, program_named
from .drive import FinalEngine
from .encoding import FALSE, TRUE, Boolean, PlainVersion, add
from .versions import Collection, History, accumulate, consolidate, differences, join_closure, less_equal, sort_key

if TYPE_CHECKING:
    from .examples import DocumentedExample

DEFAULT_SEED = 2026
RANDOM_CASES = 10
"""Random cases per program: half with int versions, half with pairs (where the program allows them)."""
CASE_SET = 3
"""The version of the committed case set: raised whenever a regenerated set differs from the last one."""


class GenerationError(RuntimeError):
    """final and the from-scratch answer disagree on a case (or a documented example's output): an engine bug."""


# -- messages from histories ------------------------------------------------------


def batches(history: Iterable[tuple[Hashable, PlainVersion, int]]) -> list[tuple[PlainVersion, list]]:
    """Runs of consecutive updates at one version, in the order given."""
    runs: list[tuple[PlainVersion, list]] = []
    for record, version, multiplicity in history:
        if runs and runs[-1][0] == version:
            runs[-1][1].append((record, version, multiplicity))
        else:
            runs.append((version, [(record, version, multiplicity)]))
    return runs


def minimal(versions: Iterable[PlainVersion]) -> tuple[PlainVersion, ...]:
    """The antichain of the least of ``versions``: the frontier of an input that has yet to send them."""
    distinct = set(versions)
    least = [v for v in distinct if not any(o != v and less_equal(o, v) for o in distinct)]
    return tuple(sorted(least, key=sort_key))


def script(inputs: Sequence[str], histories: Sequence[History], rng: random.Random | None = None) -> list[Message]:
    """The messages that send ``histories``: each input's runs of updates in the order given, each
    followed by that input's frontier, the least versions it has yet to send (``[]`` once it has sent all).

    Without ``rng`` the inputs take turns, one run each. With it they are
    interleaved at random and some frontier messages are held back, so that
    several versions close at once.
    """
    pending = [batches(history) for history in histories]
    messages: list[Message] = []
    turn = 0
    while any(pending):
        choices = [i for i, runs in enumerate(pending) if runs]
        index = rng.choice(choices) if rng else choices[turn % len(choices)]
        turn += 1
        _, updates = pending[index].pop(0)
        messages.append(Message(inputs[index], data=tuple(updates)))
        remaining = minimal(version for version, _ in pending[index])
        if not remaining or rng is None or rng.random() < 0.7:
            messages.append(Message(inputs[index], frontier=remaining))
    for index, name in enumerate(inputs):
        if not histories[index] or not any(m.input == name and m.frontier == () for m in messages):
            messages.append(Message(name, frontier=()))
    return messages


# -- the answer, twice ------------------------------------------------------------


def answer(case: Case, at: Iterable[PlainVersion] = ()) -> Case:
    """``case`` with its expected output: final's, checked against from scratch at every version.

    Raises:
        GenerationError: final fails, or its output differs from scratch at some version.
    """
    program = program_named(case.program)
    run = FinalEngine().run(case)
    if run.status != "done":
        raise GenerationError(f"{case.name}: final could not run it ({run.status}: {run.reason})")
    outputs = program.outputs or (None,)
    computed = {output: consolidate(run.updates(output)) for output in outputs}
    versions = join_closure({*case.input_versions(), *at, *(v for output in outputs for v in computed[output])})
    entries = []
    for output in outputs:
        collections = scratch(program, case.histories(), versions, output)
        expected = differences(collections)
        for version in versions:
            if computed[output].get(version, {}) != expected[version]:
                where = "" if output is None else f" output {output!r}"
                raise GenerationError(
                    f"{case.name}:{where} at version {version!r} final's output difference is "
                    f"{computed[output].get(version, {})}, but from scratch it is {expected[version]}; no case "
                    "is written for it"
                )
        entries += [Expected(version, collections[version], expected[version], output) for version in versions]
    return dataclasses.replace(case, expected=tuple(entries), outputs=program.outputs)


def scratch(program: Program, histories: Sequence[History], versions: list[PlainVersion],
            output: str | None = None) -> dict[PlainVersion, Collection]:
    """The output (``output``, of a program with several) at each version from nothing: the program's
    definition in plain Python (its ``reference``), over the inputs accumulated there."""
    if output is None:
        return {version: program.reference(histories, version) for version in versions}
    return {version: program.reference(histories, version)[output] for version in versions}


def tags_of(program: Program, dimensions: int, histories: Sequence[History], messages: Sequence[Message]) -> tuple:
    """What a case exercises, for reading a report: retractions, partial orders, out-of-order sends, loops
    (and loops in loops)."""
    tags = []
    if any(m < 0 for history in histories for _, _, m in history):
        tags.append("retractions")
    tags.append("product-order" if dimensions > 1 else "total-order")
    if out_of_order(messages):
        tags.append("out-of-order")
    if program.iterates:
        tags.append("iterate")
    if program.nested:
        tags.append("nested-iterate")
    return tuple(tags)


def out_of_order(messages: Sequence[Message]) -> bool:
    """Whether some input sends data at a version not at or after every version it sent before."""
    sent: dict[str, list] = {}
    for message in messages:
        for _, version, _ in message.data or ():
            if any(not less_equal(earlier, version) for earlier in sent.get(message.input, ())):
                return True
            sent.setdefault(message.input, []).append(version)
    return False


def make_case(
    name: str, program: Program, histories: Sequence[History], source: str,
    rng: random.Random | None = None, at: Iterable[PlainVersion] = (), extra_tags: tuple = (),
) -> Case:
    """A case sending ``histories`` to ``program``, with its expected output (``answer``)."""
    versions = [version for history in histories for _, version, _ in history]
    dimensions = len(versions[0]) if versions and isinstance(versions[0], tuple) else 1
    messages = script(program.inputs, histories, rng)
    tags = extra_tags + tags_of(program, dimensions, histories, messages)
    bare = Case(name, program.name, program.inputs, dimensions, tuple(messages), (), source, tags, program.outputs)
    return answer(bare, at)


# -- random histories ---------------------------------------------------------------


LONG = 300
"""How many versions a ``long`` history spreads over."""
GROW_ONLY = 0.3
"""The share of random histories that only insert (the rest retract some of what they insert)."""


def random_version(rng: random.Random, kind: str, at_least: PlainVersion | None = None) -> PlainVersion:
    """An int in 0..4 (``int``) or 0..LONG-1 (``long``), a pair in 0..2 x 0..2 (``product``) or a triple in
    0..1 x 0..1 x 0..1 (``triple``); at or above ``at_least`` when given."""
    if kind == "int":
        return rng.randint(0 if at_least is None else at_least, 4 if at_least is None else 5)
    if kind == "long":
        return rng.randint(0, LONG - 1) if at_least is None else rng.randint(at_least, at_least + LONG // 10)
    top = 2 if kind == "product" else 1
    low = at_least or (0,) * (2 if kind == "product" else 3)
    return tuple(rng.randint(coordinate, top) for coordinate in low)


def random_history(
    rng: random.Random, record: Callable[[random.Random], Hashable], kind: str, grow_only: bool,
    records: tuple[int, int] = (1, 6),
) -> History:
    """Records inserted (once, or twice at one version) and some retracted at the same or a later version,
    in shuffled order: accumulated multiplicities never go negative, the shape of real data. The number
    of records inserted is drawn from ``records``."""
    history: History = []
    for _ in range(rng.randint(*records)):
        item, version = record(rng), random_version(rng, kind)
        history.append((item, version, 2 if rng.random() < 0.15 else 1))
        if not grow_only and rng.random() < 0.4:
            history.append((item, random_version(rng, kind, version), -1))
    rng.shuffle(history)
    return history


def random_cases(program: Program, seed: int, count: int = RANDOM_CASES) -> list[Case]:
    """``count`` random cases of ``program``, each from its own generator seeded by (seed, program, number)."""
    cases = []
    for number in range(count):
        rng = random.Random(f"{seed}:{program.name}:{number}")
        kind = program.versions[number % len(program.versions)]
        grow_only = rng.random() < GROW_ONLY
        histories = [random_history(rng, record, kind, grow_only) for record in program.records]
        cases.append(make_case(
            f"{program.name}/random-{number:02d}", program, histories,
            f"random history (seed {seed}, case {number})", rng,
        ))
    return cases


# -- where engines break ----------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """Random cases aimed where engines break, tagged with the family's name.

    ``records`` gives, per program, a random record for each of its inputs
    (``None``: the program's own); each program gets ``cases`` cases, their
    versions drawn as ``versions`` says, ``updates`` records inserted per
    input.
    """

    name: str
    why: str
    records: dict[str, tuple[Callable[[random.Random], Any], ...] | None]
    versions: tuple[str, ...] = ("int", "product")
    updates: tuple[int, int] = (1, 6)
    cases: int = 2
    every_input: Callable[[Any], bool] | None = None
    """What some record of every input of every case must be (a history without one is drawn again):
    for ``null-keys``, a record with a NULL, which is always in a join key there."""
    every_case: Callable[[Program, list[History]], bool] | None = None
    """What the histories of every case must do together (they are all drawn again until they do): for
    ``booleans``, give an engine that takes ``true`` for ``1``, or ``false`` for ``0``, a wrong answer."""

    def make(self, seed: int) -> list[Case]:
        made = []
        for name, records in self.records.items():
            program = program_named(name)
            kinds = [kind for kind in self.versions if KIND_NEEDS[kind] in program.versions]
            for number in range(self.cases):
                rng = random.Random(f"{seed}:{self.name}:{name}:{number}")
                kind = kinds[number % len(kinds)]
                histories = self.histories(rng, program, records or program.records, kind)
                made.append(make_case(f"{name}/{self.name}-{number:02d}", program, histories,
                                      f"{self.why} (seed {seed}, case {number})", rng, extra_tags=(self.name,)))
        return made

    def histories(self, rng: random.Random, program: Program, records: Sequence[Callable[[random.Random], Any]],
                  kind: str) -> list[History]:
        """A history for each of ``records``, all drawn again until ``every_case`` holds of them."""
        while True:
            histories = [self.history(rng, record, kind) for record in records]
            if self.every_case is None or self.every_case(program, histories):
                return histories

    def history(self, rng: random.Random, record: Callable[[random.Random], Any], kind: str) -> History:
        while True:
            history = random_history(rng, record, kind, False, self.updates)
            if self.every_input is None or any(self.every_input(item) for item, _, _ in history):
                return history


KIND_NEEDS = {"int": "int", "long": "int", "product": "product", "triple": "product"}
"""The kind of versions a program must allow for a family's: any integers, or any tuples."""
NULLABLE = pick(0, 1, None)
MIXED = pick(TRUE, FALSE, 1, 0, "1", "true", None)
"""JSON's true and false beside 1, 0, "1" and "true": six different values (Python's True == 1 is not)."""


def read_as_integer(boolean: Boolean, record: Hashable) -> Hashable:
    """``record`` with ``boolean`` in it, at any depth of tuples, read as the integer Python takes it for
    (``true`` as ``1``, ``false`` as ``0``): the record an engine that merges the two sees."""
    if isinstance(record, tuple):
        return tuple(read_as_integer(boolean, item) for item in record)
    return int(boolean.value) if record is boolean else record


def _merged(boolean: Boolean, collection: Collection) -> Collection:
    """``collection`` with ``boolean`` read as its integer: records that become equal add up."""
    merged: Collection = {}
    for record, multiplicity in collection.items():
        add(merged, read_as_integer(boolean, record), multiplicity)
    return merged


def merging_fails(program: Program, histories: Sequence[History], boolean: Boolean) -> bool:
    """Whether an engine that takes ``boolean`` and its integer for one value must answer ``histories`` wrongly.

    It must at a version where the answer from scratch over the inputs with
    the two made one is not the expected answer with the two made one (a
    ``true`` key among the keys of antijoin, a record keyed ``1`` beside it
    and no key ``1``, say): whichever of the two it keeps, its answer read
    that way is the former. It must too where the expected difference at a
    version holds two records that only ``boolean`` and its integer tell
    apart (``true`` and ``1`` added by ``concat``): its consolidated output
    has one record there.
    """
    merged = [[(read_as_integer(boolean, record), version, m) for record, version, m in history]
              for history in histories]
    versions = join_closure(version for history in histories for _, version, _ in history)
    for output in program.outputs or (None,):
        expected = scratch(program, histories, versions, output)
        answered = scratch(program, merged, versions, output)
        if any(_merged(boolean, expected[version]) != answered[version] for version in versions):
            return True
        if any(len({read_as_integer(boolean, record) for record in difference}) < len(difference)
               for difference in differences(expected).values()):
            return True
    return False


def merging_booleans_fails(program: Program, histories: Sequence[History]) -> bool:
    """Whether an engine that takes ``true`` for ``1`` must answer ``histories`` wrongly, and one that takes
    ``false`` for ``0`` too (``merging_fails``)."""
    return all(merging_fails(program, histories, boolean) for boolean in (TRUE, FALSE))


def row_of(*fields: RandomRecord) -> RandomRecord:
    """A random tuple: a record from each of ``fields``, in order."""
    return lambda rng: tuple(field(rng) for field in fields)


BIG = pick(2**31 - 6, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**53 - 5, 2**53, 2**53 + 1, -(2**53) - 1, -7)
"""Integers near 2^31 (32-bit overflow) and 2^53 (a double's exact integers end there: 2^53 + 1 is not one)."""
COLLIDING = pick("w65014", "w107666", ("user", 38266), ("user", 77076), 29517, 87960)
"""Three pairs of records whose 32-bit murmur3 hashes of their JSON text collide (as d2ts's ``hash`` computes
them: ``["user", 38266]`` and ``["user", 77076]``, ``"w65014"`` and ``"w107666"``, ``29517`` and ``87960``)."""
SPACES = (" ", "  ", "\t", "\n", "\r\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2003", "\u2028", "\u3000")
"""What Python's str.split() splits on, in variety (the ASCII separators \\x1c-\\x1f and NEL among them)."""
NOT_SPACES = ("\u200b", "\ufeff", "\u180e")
"""Characters some languages' whitespace includes but str.split() does not: they belong to words."""


def _spaced_line(rng: random.Random) -> str:
    """One to three words, some ending in a character that is not whitespace to str.split(), between runs of
    whitespace; sometimes leading or trailing whitespace too."""
    words = [rng.choice(("the", "cat", "a")) + rng.choice(("", "", *NOT_SPACES)) for _ in range(rng.randint(1, 3))]
    line = words[0]
    for word in words[1:]:
        line += rng.choice(SPACES) + rng.choice(("", rng.choice(SPACES))) + word
    if rng.random() < 0.4:
        line = rng.choice(SPACES) + line
    if rng.random() < 0.4:
        line += rng.choice(SPACES)
    return line


UNICODE = pick("e", "\u00e9", "e\u0301", "\U0001f600", "\u65e5\u672c", "", "a\u0000b", "\U0001d11e\U0001d11e")
"""Strings whose length in code points differs from their length in UTF-16 units or bytes (astral characters,
combining marks), the empty string, and a NUL inside."""

FAMILIES: tuple[Family, ...] = (
    Family("null-keys", "NULL keys on both sides of a join", every_input=lambda record: (
        record is None or (isinstance(record, tuple) and None in record)), records={
        "join": (pair_of(NULLABLE, pick(1, 2)), pair_of(NULLABLE, pick("x", "y"))),
        "semijoin": (pair_of(NULLABLE, pick(1, 2)), NULLABLE),
        "antijoin": (pair_of(NULLABLE, pick(1, 2)), NULLABLE),
        "left_outer_join": (pair_of(NULLABLE, pick(1, 2)), pair_of(NULLABLE, pick("x", "y"))),
        "three_hops": (pick("a", None), pair_of(pick("a", "b", None), pick("a", "b", None))),
        "enrichment": (
            pair_of(pick(1, 2), pick(10, None)), pair_of(pick(10, None), pick(100, None)),
            pair_of(pick(100, None), pick("x", None)), pair_of(pick("x", None), pick("ann", "bob")),
        ),
    }),
    Family("booleans", "true and false beside 1, 0, \"1\" and \"true\", where merging them changes the answer", {
        "distinct": (MIXED,), "concat": (MIXED, MIXED), "difference": (MIXED, MIXED),
        "explode": (pair_of(MIXED, pick(-1, 1, 2)),),
        "count_by_key": (pair_of(MIXED, pick(1, TRUE)),), "sum_by_key": (pair_of(MIXED, pick(-2, 1, 3, None)),),
        "counts_and_keys": (pair_of(MIXED, pick(1, TRUE)),),
        "min_max_count_distinct": (row_of(MIXED, pick(-3, 5, 7, None), MIXED),),
        "join": (pair_of(MIXED, MIXED), pair_of(MIXED, pick("x"))),
        "semijoin": (pair_of(MIXED, pick(1)), MIXED), "antijoin": (pair_of(MIXED, pick(1)), MIXED),
        "left_outer_join": (pair_of(MIXED, pick(1, 2)), pair_of(MIXED, pick("x", None))),
        "three_hops": (MIXED, pair_of(MIXED, MIXED)), "reachability": (MIXED, pair_of(MIXED, MIXED)),
        "enrichment": (pair_of(pick(1, 2), MIXED), pair_of(MIXED, MIXED), pair_of(MIXED, MIXED),
                       pair_of(MIXED, pick("ann", "bob"))),
    }, cases=4, every_case=merging_booleans_fails),
    Family("large-integers", "integers near 2^31 and 2^53, and negative ones", {
        "plus_five_evens": (BIG,), "distinct": (BIG,), "count_by_key": (pair_of(BIG, pick(0)),),
        "sum_by_key": (pair_of(pick(0, 1), BIG),), "join": (pair_of(BIG, pick(1)), pair_of(BIG, pick(2))),
    }),
    Family("whitespace", "lines split on every kind of whitespace str.split() knows, and on no other",
           {"word_count": (_spaced_line,)}, cases=4),
    Family("unicode", "strings whose code points are not their UTF-16 units", {
        "name_lengths": (UNICODE,), "distinct_lengths": (UNICODE,), "distinct": (UNICODE,),
    }),
    Family("hash-collision", "records whose 32-bit murmur3 hashes collide", {
        "distinct": (COLLIDING,), "concat": (COLLIDING, COLLIDING), "difference": (COLLIDING, COLLIDING),
        "count_by_key": (pair_of(COLLIDING, pick(1)),),
        "join": (pair_of(COLLIDING, pick(1)), pair_of(COLLIDING, pick(2))),
    }),
    Family("large", "thousands of updates over hundreds of versions", {
        "count_by_key": None, "distinct": None, "sum_by_key": None, "concat": None,
    }, versions=("long",), updates=(1000, 1200), cases=1),
    Family("three-dimensions", "versions of three coordinates", {
        "count_by_key": None, "join": None, "distinct": None, "reachability": None, "nested_closure": None,
    }, versions=("triple",)),
)
"""The families of ``generate``'s cases aimed at where engines have broken (the README's 'Coverage')."""


def long_iterate_cases() -> list[Case]:
    """Long loops: reachability along a path of 240 edges from its first node (240 rounds), and connected
    components of a path of 120 edges (120 rounds: each round of label propagation costs v5 far more than
    one of reachability), each path cut in the middle at version 1 and mended at version 2."""
    cases = []
    for name, length in (("reachability", 240), ("connected_components", 120)):
        path = [((node, node + 1), 0, 1) for node in range(length)]
        middle = (length // 2, length // 2 + 1)
        edges = [*path, (middle, 1, -1), (middle, 2, 1)]
        histories = [[(0, 0, 1)], edges] if name == "reachability" else [edges]
        cases.append(make_case(f"{name}/long-iterate-00", program_named(name), histories,
                               f"a path of {length} edges, cut and mended", extra_tags=("long-iterate",)))
    return cases


# -- the documents' examples ----------------------------------------------------------


def example_cases() -> list[Case]:
    """One case per documented example, its messages in the document's order, its output checked against
    what the document gives. The examples are the package's ``examples.json`` (``examples``), in a clone as
    installed.

    Raises:
        ExampleError: ``examples.json`` is missing or unreadable.
        GenerationError: a case's output is not what its document gives.
    """
    # Imported here: the package imports this module, and 'python -m final.conformance.examples' would
    # otherwise find examples already imported before it runs as the program.
    from .examples import EXAMPLE_PROGRAMS, load

    cases = []
    for example in load():
        program_name, translate = EXAMPLE_PROGRAMS[example.name]
        program = program_named(program_name)
        case = make_case(f"{program_name}/doc-{example.name}", program, example.inputs, example.source,
                         at=example.at or (), extra_tags=("document",))
        check_against_document(case, example, translate or (lambda record: record))
        cases.append(case)
    return cases


def check_against_document(case: Case, example: DocumentedExample, translate: Callable[[Any], Any]) -> None:
    """Raises GenerationError where the case's output is not what the document gives."""

    def translated(collection: dict) -> dict:
        return {translate(record): multiplicity for record, multiplicity in collection.items()}

    ours = case.differences()
    for version, collection in example.expected.items():
        if accumulate(ours, version) != translated(collection):
            raise GenerationError(
                f"{case.name}: at {version!r} the document gives {collection} but final and from scratch give "
                f"{accumulate(ours, version)}"
            )
    for version, difference in (example.differences or {}).items():
        if ours.get(version, {}) != translated(difference):
            raise GenerationError(f"{case.name}: the document's difference at {version!r} is {difference}, "
                                  f"ours is {ours.get(version, {})}")


# -- the case set -------------------------------------------------------------------------


def generate(seed: int = DEFAULT_SEED, progress: Callable[[str], None] | None = None) -> list[Case]:
    """The whole case set: the documents' examples, ``RANDOM_CASES`` random cases per program, then the
    ``FAMILIES`` aimed where engines break and the loops of 200+ rounds."""
    cases = example_cases()
    if progress:
        progress("the documents' examples")
    for program in PROGRAMS:
        cases += random_cases(program, seed)
        if progress:
            progress(program.name)
    for family in FAMILIES:
        cases += family.make(seed)
        if progress:
            progress(family.name)
    cases += long_iterate_cases()
    if progress:
        progress("long-iterate")
    return cases


def default_out() -> Path | None:
    """Where ``generate`` writes when no ``--out`` is given: the committed case set, but only where the package
    sits in a clone of the repository (a ``.git`` beside ``final/``), to be committed. Installed, the package
    is in site-packages, where a case set written over the shipped one would be lost at the next install: None,
    and ``--out`` is required."""
    return CASES if (CASES.parents[2] / ".git").exists() else None


def write(cases: Sequence[Case], out: Path, seed: int) -> Path:
    """Write ``cases`` under ``out`` (one file per case, by program) with a manifest, and the set's list of
    valid digests (``VALID_LIST``); returns the manifest.

    Each file written is read back and checked as ``check`` checks a case,
    its schema included, before the list vouches for it: so ``check``
    need not check these bytes against the schema again, on any machine.
    A directory that already holds a case set has it replaced; any other
    non-empty directory is refused, so nothing else is ever deleted.

    Raises:
        FileExistsError: ``out`` holds files but no ``manifest.json``.
        CaseError: a case written does not read back as valid (a fault of the generator).
    """
    out = Path(out)
    manifest = out / "manifest.json"
    if out.exists() and any(out.iterdir()) and not manifest.exists():
        raise FileExistsError(f"{out} holds files but is not a case set (no manifest.json); choose another --out")
    for path in case_files(out) if out.exists() else ():
        path.unlink()
    for directory in sorted((p for p in out.glob("*") if p.is_dir()), reverse=True) if out.exists() else ():
        if not any(directory.iterdir()):
            shutil.rmtree(directory)
    vouched: list[tuple[str, str]] = []
    for case in cases:
        path = out / file_name(case.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case.text())
        written = read_case_file(path)
        written.load()
        vouched.append((file_name(case.name), digest(written.text)))
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.program] = counts.get(case.program, 0) + 1
    manifest.write_text(json.dumps({
        "case_set": CASE_SET, "format": "dd-conformance-case/1", "seed": seed, "cases": len(cases),
        "generated_by": "python -m final.conformance generate", "programs": dict(sorted(counts.items())),
    }, indent=2) + "\n")
    (out / VALID_LIST).write_text(
        "# Each case file of this set, written and found valid against the schema of the digest below by `generate`:\n"
        "# check does not check these very bytes against the schema again. A file edited since is checked.\n"
        f"schema {schema_digest()}\n" + "".join(f"{hexdigest}  {name}\n" for name, hexdigest in sorted(vouched)))
    return manifest
