"""A case: one program, the messages its inputs receive, and the output expected at every version.

On disk a case is a JSON file (the README's 'Case files'), checked against
``schema.json`` when it is read. In memory it is a ``Case``; records and
versions are decoded by the encoding rule (``encoding``), so a record read
back is the tuple it was written from.

Checking a case against the schema is most of what a check of one program
spends before its engine's first line (about 15 ms a case, a second for the
largest), so it is done once for given bytes: ``generate`` checks the cases
it writes and lists their digests with the schema's in the set's
``valid.sha256`` (``VALID_LIST``), and a file checked outside such a set is
remembered by its digest in the user cache (``cache``). What the schema
cannot say (the catalog, the frontiers, the sums) is checked at every read,
in far less.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .cache import Digests, cache_folder
from .catalog import BY_NAME
from .encoding import (
    PlainVersion,
    decode,
    decode_collection,
    decode_version,
    encode,
    encode_collection,
    encode_version,
)
from .versions import Collection, History, Update, accumulate, less_equal, sort_key

FORMAT = "dd-conformance-case/1"
SCHEMA_PATH = Path(__file__).with_name("schema.json")
CASES = Path(__file__).with_name("cases")
"""The committed case set, shipped with the package."""


class CaseError(ValueError):
    """A case file that cannot be read: not JSON, not valid against the schema, or inconsistent.

    Its message names the file and a JSON path to the bad spot (``$.messages[4].data[2][2]``),
    says what is wrong there and what to do.
    """


@dataclass(frozen=True)
class Message:
    """One message to an input: updates (``data``), or a new frontier (an antichain of versions)."""

    input: str
    data: tuple[Update, ...] | None = None
    frontier: tuple[PlainVersion, ...] | None = None

    def to_json(self) -> dict:
        if self.data is not None:
            return {"input": self.input, "data": [[encode(r), encode_version(v), m] for r, v, m in self.data]}
        return {"input": self.input, "frontier": [encode_version(v) for v in self.frontier or ()]}

    @classmethod
    def from_json(cls, value: dict) -> Message:
        if "data" in value:
            data = tuple((decode(r), decode_version(v), m) for r, v, m in value["data"])
            return cls(value["input"], data=data)
        return cls(value["input"], frontier=tuple(decode_version(v) for v in value["frontier"]))


@dataclass(frozen=True)
class Expected:
    """The output at one version: the accumulated collection, and the difference from the versions below."""

    version: PlainVersion
    collection: Collection
    difference: Collection
    output: str | None = None
    """Which output, for a program with several (None for a program's one output)."""


@dataclass(frozen=True)
class Case:
    """A program, its input messages in order, and what its output must be."""

    name: str
    program: str
    inputs: tuple[str, ...]
    dimensions: int
    """1: versions are ints; k > 1: versions are k-tuples of ints in the product order."""
    messages: tuple[Message, ...]
    expected: tuple[Expected, ...]
    """One entry per version at which the output may change, sorted: the join closure of the input
    versions and of the versions the output changes at."""
    source: str = ""
    tags: tuple[str, ...] = field(default=())
    outputs: tuple[str, ...] = ()
    """The program's outputs when it has several; ``expected`` then has entries for each (``Expected.output``).
    Empty for a program with one output."""

    def histories(self) -> list[History]:
        """Each input's updates, in the order they are sent."""
        by_input: dict[str, History] = {name: [] for name in self.inputs}
        for message in self.messages:
            if message.data is not None:
                by_input[message.input].extend(message.data)
        return [by_input[name] for name in self.inputs]

    def input_versions(self) -> list[PlainVersion]:
        """The versions the inputs change at, sorted by ``sort_key``."""
        return sorted({version for history in self.histories() for _, version, _ in history}, key=sort_key)

    def differences(self, output: str | None = None) -> dict[PlainVersion, Collection]:
        """The expected difference of ``output`` at each version where it is not empty."""
        return {entry.version: entry.difference for entry in self.expected if entry.difference
                and entry.output == output}

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "name": self.name,
            "program": self.program,
            "source": self.source,
            "tags": list(self.tags),
            "dimensions": self.dimensions,
            "inputs": list(self.inputs),
            **({"outputs": list(self.outputs)} if self.outputs else {}),
            "messages": [message.to_json() for message in self.messages],
            "expected": [
                {
                    **({} if entry.output is None else {"output": entry.output}),
                    "version": encode_version(entry.version),
                    "collection": encode_collection(entry.collection),
                    "difference": encode_collection(entry.difference),
                }
                for entry in self.expected
            ],
        }

    def text(self) -> str:
        """The case as it is written to a file: one line per message and per version, for readable diffs."""
        value = self.to_json()
        keys = ("format", "name", "program", "source", "tags", "dimensions", "inputs", "outputs")
        head = {key: value[key] for key in keys if key in value}
        lines = [f"  {json.dumps(key)}: {json.dumps(item)}," for key, item in head.items()]
        for key in ("messages", "expected"):
            rows = ",\n".join(f"    {json.dumps(item)}" for item in value[key])
            lines.append(f'  "{key}": [\n{rows}\n  ]' + ("," if key == "messages" else ""))
        return "{\n" + "\n".join(lines) + "\n}\n"

    @classmethod
    def from_json(cls, value: Any, origin: str = "case", schema_checked: bool = False) -> Case:
        """A case from its decoded JSON, validated against the schema and the catalog, and checked for
        consistency, so that no engine is ever run on a case that is wrong itself. ``schema_checked`` says
        the schema was checked already (``CaseFile.load``: these very bytes were found valid before).

        Raises:
            CaseError: naming ``origin``, the JSON path of what is wrong, and what to do.
        """
        problem = (None if schema_checked else schema_problem(value)) or catalog_problem(value)
        if problem:
            raise CaseError(f"{origin}: {problem}")
        case = cls(
            name=value["name"],
            program=value["program"],
            inputs=tuple(value["inputs"]),
            dimensions=value["dimensions"],
            messages=tuple(Message.from_json(message) for message in value["messages"]),
            expected=tuple(
                Expected(decode_version(e["version"]), decode_collection(e["collection"]),
                         decode_collection(e["difference"]), e.get("output"))
                for e in value["expected"]
            ),
            source=value.get("source", ""),
            tags=tuple(value.get("tags", ())),
            outputs=tuple(value.get("outputs", ())),
        )
        problem = case.inconsistency()
        if problem:
            raise CaseError(f"{origin}: {problem}")
        return case

    def inconsistency(self) -> str | None:
        """What the schema cannot say is wrong with this case, or None: unknown inputs, versions of the
        wrong shape, data sent at a version its input's frontier has passed, an input never closed, an
        expected collection that is not the sum of the expected differences."""
        frontiers: dict[str, tuple[PlainVersion, ...]] = {}
        for position, message in enumerate(self.messages):
            where = f"$.messages[{position}]"
            if message.input not in self.inputs:
                return f"{where}.input: {message.input!r} is not one of the case's inputs {list(self.inputs)}"
            versions = [v for _, v, _ in message.data] if message.data is not None else list(message.frontier or ())
            shape = next((v for v in versions if not self.fits(v)), None)
            if shape is not None:
                return f"{where}: version {shape!r} does not have {self.dimensions} coordinate(s) ($.dimensions)"
            if message.data is not None:
                frontier = frontiers.get(message.input)
                late = next((v for v in versions if frontier is not None and not allowed(frontier, v)), None)
                if late is not None:
                    return f"{where}: data at {late!r} after input {message.input!r}'s frontier passed it"
            else:
                frontiers[message.input] = message.frontier or ()
        still_open = [name for name in self.inputs if frontiers.get(name) != ()]
        if still_open:
            return (f"$.messages: inputs {still_open} are never closed: the last frontier message of every input "
                    "must be []")
        return self._accumulation_problem()

    def _accumulation_problem(self) -> str | None:
        """Where an expected collection is not the sum of the expected differences at the versions ``<=``
        its own (001's relation, which the README's 'What a case says' defines them by), or None.

        The checker judges an engine by the differences alone, so a collection that contradicts them
        would tell an engine's author something the checker does not hold them to.
        """
        for position, entry in enumerate(self.expected):
            if entry.output not in (self.outputs or (None,)):
                named = "has no output" if entry.output is None else f"names {entry.output!r}"
                return (f"$.expected[{position}]: {named}, but the case's outputs are "
                        f"{list(self.outputs) or 'one, unnamed'}: an entry names one of $.outputs exactly "
                        "when the case lists them")
            summed = accumulate(self.differences(entry.output), entry.version)
            if summed == entry.collection:
                continue
            wrong = sorted(summed.keys() | entry.collection.keys(), key=lambda r: json.dumps(encode(r)))
            shown = "; ".join(f"{json.dumps(encode(record))} is x{entry.collection.get(record, 0)} in the "
                              f"collection, x{summed.get(record, 0)} in the differences"
                              for record in wrong if summed.get(record, 0) != entry.collection.get(record, 0))
            return (f"$.expected[{position}].collection: at version {json.dumps(encode_version(entry.version))} "
                    f"the collection contradicts the differences ({shown}): the collection at a version is the "
                    "sum of the differences at every version <= it; correct whichever of the two is wrong")
        return None

    def fits(self, version: PlainVersion) -> bool:
        if self.dimensions == 1:
            return isinstance(version, int)
        return isinstance(version, tuple) and len(version) == self.dimensions


def allowed(frontier: tuple[PlainVersion, ...], version: PlainVersion) -> bool:
    """Whether data may still arrive at ``version``: some element of the frontier is ``<=`` it."""
    return any(less_equal(element, version) for element in frontier)


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def schema_problem(value: Any) -> str | None:
    """The first way ``value`` breaks ``schema.json``, as its JSON path and one sentence, or None."""
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema()).iter_errors(value))
    if error is None:
        return None
    if error.validator == "not" and error.instance == 0:  # the schema's one "not": a multiplicity of 0
        drop = ("remove the update" if error.absolute_path[0] == "messages" else
                "leave the record out (collections and differences list only records whose multiplicity is not 0)")
        return f"{error.json_path}: a multiplicity of 0 says nothing, and a case holds none: {drop}"
    return f"{error.json_path}: not a valid case: {error.message} (the README's 'Case files' says what a case holds)"


def catalog_problem(value: dict) -> str | None:
    """Whether a case that fits the schema names a program of the catalog and its inputs in the catalog's
    order (the order the checker sends them to an engine in), as a sentence, or None."""
    program = BY_NAME.get(value["program"])
    if program is None:
        close = difflib.get_close_matches(value["program"], BY_NAME, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"$.program: {value['program']!r} is not a program of the catalog: {hint}use one of those "
                "'python -m final.conformance programs' lists")
    if tuple(value["inputs"]) != program.inputs:
        return (f"$.inputs: {value['inputs']} are not {program.name}'s inputs in the catalog's order, "
                f"{list(program.inputs)}: list those, in that order")
    if tuple(value.get("outputs", ())) != program.outputs:
        return (f"$.outputs: {value.get('outputs', 'none')} are not {program.name}'s outputs in the catalog, "
                f"{list(program.outputs) or 'none (one unnamed output)'}")
    return None


@cache
def schema_digest() -> str:
    """The SHA-256 of ``schema.json``: what a case file was found valid against, with its own digest."""
    return hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest()


def digest(text: bytes) -> str:
    """The SHA-256 of a case file's bytes, by which it is known to be valid."""
    return hashlib.sha256(text).hexdigest()


VALID_LIST = "valid.sha256"
"""The file of a case set (beside its ``manifest.json``) that ``generate`` writes: ``schema <digest>`` for the
schema it checked the cases against, then ``<digest>  <file>`` for each case file (``sha256sum``'s lines)."""


def vouched_digests(path: Path) -> frozenset[str]:
    """The digests of the case files the ``VALID_LIST`` of the case set at or above ``path`` (the set's folder,
    a program's folder in it, or one of its files) says were found valid against this very schema; none when
    there is no such list, or it was written for another schema."""
    start = Path(path).resolve()
    for folder in ([start] if start.is_dir() else []) + list(start.parents)[:2]:
        listing = folder / VALID_LIST
        if not listing.is_file():
            continue
        try:
            lines = listing.read_text().splitlines()
        except (OSError, UnicodeDecodeError):
            return frozenset()
        said = [line.split() for line in lines if line.strip() and not line.startswith("#")]
        if not said or said[0] != ["schema", schema_digest()]:
            return frozenset()
        return frozenset(words[0] for words in said[1:])
    return frozenset()


_VALID: dict[Path, Digests] = {}
"""The digests of case files found valid, by the cache file that keeps them (the folder may change: tests
give each run a cache of its own)."""


def valid_digests() -> Digests:
    """The digests of the case files found valid against this ``schema.json``, in the user cache: a new schema
    starts anew."""
    path = cache_folder() / f"valid-cases-{schema_digest()[:16]}.txt"
    if path not in _VALID:
        _VALID[path] = Digests(path)
    return _VALID[path]


@dataclass(frozen=True)
class CaseFile:
    """A case file read but not yet checked: its bytes, and the name and program its JSON says it holds
    (None where it says none, or is not JSON at all: ``load`` then says what is wrong), so that a run can
    choose its cases before it checks them. ``vouched`` says its set's ``VALID_LIST`` lists these bytes."""

    path: Path
    text: bytes
    name: str | None
    program: str | None
    vouched: bool = False

    def known_valid(self) -> bool:
        """Whether these very bytes were found valid against the schema before: by ``generate``, which
        listed them (``vouched``), or by a run on this machine (``valid_digests``)."""
        return self.vouched or digest(self.text) in valid_digests()

    def load(self) -> Case:
        """The case, checked (against the schema only if these bytes were not found valid before).

        Raises:
            CaseError: the file is not JSON, breaks the schema, or is inconsistent.
        """
        try:
            value = json.loads(self.text)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise CaseError(f"{self.path}: cannot read a case: {error}") from None
        if self.known_valid():
            try:
                return Case.from_json(value, str(self.path), schema_checked=True)
            except (ValueError, LookupError, TypeError, AttributeError):
                pass  # a list edited by hand vouched for bytes the schema refuses: check them, for its message
        case = Case.from_json(value, str(self.path))
        valid_digests().add(digest(self.text))
        return case


def read_case_file(path: Path, vouched: frozenset[str] = frozenset()) -> CaseFile:
    """A case file's bytes, and the name and program it says it holds, unchecked; ``vouched`` are the digests
    its set's ``VALID_LIST`` gives (``vouched_digests``).

    Raises:
        CaseError: the file cannot be read.
    """
    try:
        text = Path(path).read_bytes()
    except OSError as error:
        raise CaseError(f"{path}: cannot read a case: {error}") from None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        value = None
    said = value if isinstance(value, dict) else {}
    name, program = said.get("name"), said.get("program")
    return CaseFile(Path(path), text, name if isinstance(name, str) else None,
                    program if isinstance(program, str) else None, digest(text) in vouched)


def read_case_files(path: Path) -> list[CaseFile]:
    """The case file ``path``, or every case file under the directory ``path`` in name order, unchecked.

    Raises:
        CaseError: there is no case file there, or one cannot be read.
    """
    vouched = vouched_digests(path)
    if Path(path).is_file():
        return [read_case_file(path, vouched)]
    files = case_files(path) if Path(path).is_dir() else []
    if not files:
        raise CaseError(f"{path} holds no case files (*.json); make some with 'generate --out {path}'")
    return [read_case_file(file, vouched) for file in files]


def load(path: Path) -> Case:
    """Read and validate one case file.

    Raises:
        CaseError: the file is not JSON, breaks the schema, or is inconsistent.
    """
    return read_case_file(path, vouched_digests(path)).load()


def case_files(directory: Path) -> list[Path]:
    """Every case file under ``directory``, in name order (the manifest is not a case)."""
    return sorted(path for path in Path(directory).rglob("*.json") if path.name != "manifest.json")


def case_set(path: Path) -> dict[str, Any]:
    """What a report names the cases by: the ``case_set`` version and ``seed`` of the manifest of the set that
    ``path`` (a case set, a program's folder or one case file) belongs to; None for cases outside any set."""
    path = Path(path).resolve()
    for folder in [path, *path.parents][:3]:
        manifest = folder / "manifest.json"
        if manifest.is_file():
            try:
                value = json.loads(manifest.read_text())
            except (OSError, json.JSONDecodeError):
                break
            return {"case_set": value.get("case_set"), "seed": value.get("seed")}
    return {"case_set": None, "seed": None}


def load_all(directory: Path) -> Iterator[Case]:
    """The cases under ``directory``, in file name order.

    Raises:
        CaseError: the directory holds no case files, or one of them cannot be read.
    """
    for file in read_case_files(directory):
        yield file.load()


def file_name(case_name: str) -> str:
    """Where a case lives under a case directory: ``program/name.json``."""
    return f"{case_name}.json"

