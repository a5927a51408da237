"""Programs as JSON, and a generic adapter that builds any of them on final's public API.

Every catalog program has, besides its prose ``definition``, a machine-readable
one: ``programs/<name>.json``, an operator graph valid against
``program.schema.json`` (the README's 'Programs as JSON' defines the
vocabulary). An adapter for another engine can then build every program by
interpreting the graph with its own operators, instead of implementing each
program by hand from its prose.

This module is that interpreter for final: ``Definition.from_json`` checks a
definition (the schema, then what the schema cannot say: names defined before
they are read, no name defined twice) and compiles its expressions into
Python functions; ``build`` wires the nodes as final streams; and
``GenericEngine`` runs a case on the result with the oracle's one driver (``drive``), so the
checker judges the JSON definitions by the committed cases.
The checker takes it as a Python plug-in (``check --engine
final.conformance.generic:GenericEngine``); ``python -m
final.conformance.generic`` serves it by the protocol for other checkers.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .cases import Case
from .drive import Run, run_case, unsupported
from .encoding import Boolean
from .engines import serve

SCHEMA_PATH = Path(__file__).with_name("program.schema.json")
PROGRAMS = Path(__file__).with_name("programs")
"""The committed definitions, one file per catalog program, shipped with the package."""

WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What ``split`` splits on: the characters Python's ``str.split()`` (no arguments) treats as whitespace,
listed so that an engine in another language can split the same way."""

Function = Callable[[Any], Any]
"""A compiled expression: the record in, a value out."""


class ProgramError(ValueError):
    """A definition that cannot be built: not JSON, not valid against the schema, or inconsistent.

    Its message names the file, the JSON path of the bad spot (``$.nodes[2].inputs[0]``), what is
    wrong there and what to do.
    """


class EvaluationError(ValueError):
    """An expression applied to a value it is not defined for (``add`` on a string, ``arg`` past the end of
    a tuple, a predicate that is not a boolean): the message names the expression's JSON path."""


# -- expressions ----------------------------------------------------------------------------


def describe(value: Any) -> str:
    """``value`` for a message: its kind as the vocabulary names it, and the value as JSON."""
    if value is None:
        return "null"
    names = {Boolean: "a boolean", int: "an integer", str: "a string", tuple: "a tuple"}
    return f"{names.get(type(value), type(value).__name__)} ({json.dumps(_plain(value))})"


def _plain(value: Any) -> Any:
    """``value`` as JSON can show it: tuples as arrays (a value the vocabulary cannot make is shown as text)."""
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, Boolean):
        return value.value
    return value if value is None or isinstance(value, (int, str)) else repr(value)


def same(a: Any, b: Any) -> bool:
    """``eq``: the same kind and the same value, tuples element by element; ``1``, ``true`` and ``"1"``
    all differ (Python's ``==`` alone would make ``1 == True``), and null equals null."""
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _integers(where: str, name: str, a: Any, b: Any) -> None:
    if type(a) is not int or type(b) is not int:
        raise EvaluationError(f"{where}: {name} takes two integers, not {describe(a)} and {describe(b)}")


def _ordered(where: str, name: str, a: Any, b: Any) -> None:
    if not (type(a) is type(b) and type(a) in (int, str)):
        raise EvaluationError(
            f"{where}: {name} compares two integers or two strings, not {describe(a)} and {describe(b)}; "
            "test for null first with is_null"
        )


def _boolean(where: str, value: Any, what: str) -> bool:
    if type(value) is not Boolean:
        raise EvaluationError(f"{where}: {what} must be a boolean, not {describe(value)}")
    return value.value


def _modulo(where: str, a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError(f"{where}: mod by 0")
    return a % b


ARITHMETIC: dict[str, Callable[[str, int, int], int]] = {
    "add": lambda _, a, b: a + b,
    "sub": lambda _, a, b: a - b,
    "mul": lambda _, a, b: a * b,
    "mod": _modulo,
}
"""Integer arithmetic, exact; ``mod`` is floored (its result has the divisor's sign, as Python's ``%``)."""

ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
"""Comparisons of two integers, or of two strings by Unicode code points."""


def compile_expression(value: Any, where: str) -> Function:
    """``value``, an expression of the vocabulary at JSON path ``where``, as a function of the record.

    Raises:
        ProgramError: ``value`` holds a float or an object that is not one operation (the schema
            refuses these too; this also holds for expressions that never met it).
    """
    if type(value) is bool:  # as records hold it (``encoding.Boolean``): true is not 1
        truth = Boolean(value)
        return lambda _: truth
    if value is None or type(value) in (int, str):
        return lambda _: value
    if isinstance(value, list):
        parts = [compile_expression(item, f"{where}[{position}]") for position, item in enumerate(value)]
        return lambda record: tuple(part(record) for part in parts)
    if isinstance(value, dict) and len(value) == 1:
        ((name, operand),) = value.items()
        if name in COMPILERS:
            return COMPILERS[name](operand, f"{where}.{name}")
        raise ProgramError(f"{where}: {name!r} is not an operation; use one of {', '.join(COMPILERS)}")
    raise ProgramError(
        f"{where}: {json.dumps(value)} is not an expression: use null, true, false, an integer, a string, an "
        "array (a tuple) or an object with one operation"
    )


def _operands(operand: Any, where: str, count: int | None = None) -> list[Function]:
    if not isinstance(operand, list) or (count is not None and len(operand) != count):
        raise ProgramError(f"{where}: takes an array of {count or 'several'} expressions, not {json.dumps(operand)}")
    return [compile_expression(item, f"{where}[{position}]") for position, item in enumerate(operand)]


def _compile_arg(path: Any, where: str) -> Function:
    if not isinstance(path, list) or not all(type(step) is int and step >= 0 for step in path):
        raise ProgramError(f"{where}: takes an array of element positions (non-negative integers), not {path!r}")

    def arg(record: Any) -> Any:
        value = record
        for depth, position in enumerate(path):
            if type(value) is not tuple or position >= len(value):
                reached = "the argument" if depth == 0 else f"element {path[:depth]} of the argument"
                raise EvaluationError(f"{where}: {reached} is {describe(value)}, which has no element {position}")
            value = value[position]
        return value

    return arg


def _compile_arithmetic(name: str) -> Callable[[Any, str], Function]:
    def compile_(operand: Any, where: str) -> Function:
        left, right = _operands(operand, where, 2)
        apply = ARITHMETIC[name]

        def arithmetic(record: Any) -> int:
            a, b = left(record), right(record)
            _integers(where, name, a, b)
            return apply(where, a, b)

        return arithmetic

    return compile_


def _compile_order(name: str) -> Callable[[Any, str], Function]:
    def compile_(operand: Any, where: str) -> Function:
        left, right = _operands(operand, where, 2)
        compare = ORDER[name]

        def order(record: Any) -> Boolean:
            a, b = left(record), right(record)
            _ordered(where, name, a, b)
            return Boolean(compare(a, b))

        return order

    return compile_


def _compile_equal(negated: bool) -> Callable[[Any, str], Function]:
    def compile_(operand: Any, where: str) -> Function:
        left, right = _operands(operand, where, 2)
        return lambda record: Boolean(same(left(record), right(record)) is not negated)

    return compile_


def _compile_and(operand: Any, where: str) -> Function:
    parts = _operands(operand, where)
    return lambda record: Boolean(all(_boolean(where, part(record), "each operand of and") for part in parts))


def _compile_or(operand: Any, where: str) -> Function:
    parts = _operands(operand, where)
    return lambda record: Boolean(any(_boolean(where, part(record), "each operand of or") for part in parts))


def _compile_not(operand: Any, where: str) -> Function:
    inner = compile_expression(operand, where)
    return lambda record: Boolean(not _boolean(where, inner(record), "the operand of not"))


def _compile_if(operand: Any, where: str) -> Function:
    condition, then, otherwise = _operands(operand, where, 3)
    return lambda record: (then if _boolean(where, condition(record), "the condition") else otherwise)(record)


def _compile_is_null(operand: Any, where: str) -> Function:
    inner = compile_expression(operand, where)
    return lambda record: Boolean(inner(record) is None)


def _string(where: str, value: Any, name: str) -> str:
    if type(value) is not str:
        raise EvaluationError(f"{where}: {name} takes a string, not {describe(value)}")
    return value


def _compile_len(operand: Any, where: str) -> Function:
    inner = compile_expression(operand, where)
    return lambda record: len(_string(where, inner(record), "len"))


def split(text: str) -> tuple[str, ...]:
    """The maximal runs of characters not in ``WHITESPACE``, in order: Python's ``text.split()``."""
    words, word = [], []
    for character in text:
        if character in WHITESPACE:
            if word:
                words.append("".join(word))
            word = []
        else:
            word.append(character)
    if word:
        words.append("".join(word))
    return tuple(words)


def _compile_split(operand: Any, where: str) -> Function:
    inner = compile_expression(operand, where)
    return lambda record: split(_string(where, inner(record), "split"))


def _text(where: str, value: Any) -> str:
    if type(value) is str:
        return value
    if type(value) is int:
        return str(value)
    raise EvaluationError(f"{where}: format joins strings and integers, not {describe(value)}")


def _compile_format(operand: Any, where: str) -> Function:
    parts = _operands(operand, where)
    return lambda record: "".join(_text(where, part(record)) for part in parts)


COMPILERS: dict[str, Callable[[Any, str], Function]] = {
    "arg": _compile_arg,
    **{name: _compile_arithmetic(name) for name in ARITHMETIC},
    "eq": _compile_equal(negated=False),
    "ne": _compile_equal(negated=True),
    **{name: _compile_order(name) for name in ORDER},
    "and": _compile_and,
    "or": _compile_or,
    "not": _compile_not,
    "if": _compile_if,
    "is_null": _compile_is_null,
    "len": _compile_len,
    "split": _compile_split,
    "format": _compile_format,
}
"""Each operation's compiler: its operand (the JSON value under its key) and JSON path in, a function out."""


# -- definitions ----------------------------------------------------------------------------

EXPRESSIONS = ("function", "predicate", "from", "until", "key")
"""The fields of a node that hold an expression."""


@dataclass(frozen=True)
class Node:
    """One operator of a definition, its expressions compiled."""

    name: str
    op: str
    inputs: tuple[str, ...]
    where: str
    """Its JSON path, which error messages name."""
    functions: Mapping[str, Function] = field(default_factory=dict)
    """Its expressions by field (``function``, ``predicate``, ``from``, ``until``, ``key``)."""
    aggregates: tuple[tuple[str, Function], ...] = ()
    """An ``aggregate``'s ``(kind, value)`` pairs, in order."""
    variable: str = ""
    body: tuple[Node, ...] = ()
    result: str = ""
    """An ``iterate``'s loop variable, body and the name of the body's result."""


@dataclass(frozen=True)
class Definition:
    """A program as an operator graph: its inputs, its nodes in order, and its outputs (name -> node)."""

    program: str
    inputs: tuple[str, ...]
    nodes: tuple[Node, ...]
    outputs: Mapping[str, str]

    @classmethod
    def from_json(cls, value: Any, origin: str = "definition") -> Definition:
        """A definition from its decoded JSON: checked against the schema, then for names read before
        they are defined or defined twice, its expressions compiled.

        Raises:
            ProgramError: naming ``origin``, the JSON path of what is wrong, and what to do.
        """
        problem = schema_problem(value)
        if problem:
            raise ProgramError(f"{origin}: {problem}")
        try:
            top = _Scope(dict.fromkeys(value["inputs"], "$.inputs"), set(value["inputs"]),
                         _names(value["nodes"], "$.nodes"))
            nodes = top.nodes(value["nodes"], "$.nodes")
            for name, node in value["outputs"].items():
                if node not in top.visible:
                    raise ProgramError(
                        f"$.outputs.{name}: {node!r} is {top.unknown(node)}; an output reads an input or a "
                        "node of $.nodes"
                    )
        except ProgramError as error:
            raise ProgramError(f"{origin}: {error}") from None
        return cls(value["program"], tuple(value["inputs"]), nodes, dict(value["outputs"]))


def _names(nodes: list, where: str) -> dict[str, str]:
    """Every name ``nodes`` define, nested bodies included, and the JSON path of where (the first, if twice)."""
    names: dict[str, str] = {}
    for position, node in enumerate(nodes):
        at = f"{where}[{position}]"
        if node["op"] == "iterate":
            names.setdefault(node["variable"], f"{at}.variable")
            for name, path in _names(node["body"], f"{at}.body").items():
                names.setdefault(name, path)
        names.setdefault(node["name"], f"{at}.name")
    return names


@dataclass
class _Scope:
    """The names a list of nodes may read: those of every enclosing scope defined before it, and its own
    as they are defined. ``defined`` (shared by every scope) says where each name defined so far is
    defined, so that a name is defined once in the whole program; ``everywhere`` where every name is."""

    defined: dict[str, str]
    visible: set[str]
    everywhere: dict[str, str]

    def unknown(self, name: str) -> str:
        """Why ``name`` cannot be read here, as the end of a sentence."""
        if name in self.everywhere:
            return (f"defined at {self.everywhere[name]}, which cannot be read here: it comes later, or inside "
                    "an iterate body this spot is not in")
        return "not defined anywhere in the program"

    def define(self, name: str, where: str) -> None:
        if name in self.defined:
            raise ProgramError(f"{where}: {name!r} is already defined at {self.defined[name]}; give it another name")
        self.defined[name] = where
        self.visible.add(name)

    def nodes(self, values: list, where: str) -> tuple[Node, ...]:
        return tuple(self.node(value, f"{where}[{position}]") for position, value in enumerate(values))

    def node(self, value: dict, where: str) -> Node:
        for position, name in enumerate(value["inputs"]):
            if name not in self.visible:
                raise ProgramError(
                    f"{where}.inputs[{position}]: {name!r} is {self.unknown(name)}; a node reads the program's "
                    "inputs, the nodes listed before it, and inside an iterate body also the loop variable"
                )
        functions = {
            key: compile_expression(value[key], f"{where}.{key}") for key in EXPRESSIONS if key in value
        }
        aggregates = tuple(
            (spec["kind"], compile_expression(spec["value"], f"{where}.aggregates[{position}].value"))
            for position, spec in enumerate(value.get("aggregates", ()))
        )
        variable, body, result = value.get("variable", ""), (), value.get("result", "")
        if value["op"] == "iterate":
            inner = _Scope(self.defined, set(self.visible), self.everywhere)
            inner.define(variable, f"{where}.variable")
            body = inner.nodes(value["body"], f"{where}.body")
            if result not in inner.visible:
                raise ProgramError(
                    f"{where}.result: {result!r} is {inner.unknown(result)}; the result is the loop variable, a "
                    "node of this body, or a name the body can read"
                )
        self.define(value["name"], f"{where}.name")
        return Node(value["name"], value["op"], tuple(value["inputs"]), where, functions, aggregates, variable, body,
                    result)


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def schema_problem(value: Any) -> str | None:
    """The first way ``value`` breaks ``program.schema.json``, as its JSON path and one sentence, or None."""
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema()).iter_errors(value))
    if error is None:
        return None
    return (f"{error.json_path}: not a valid program definition: {error.message} (the README's 'Programs as "
            "JSON' says what a definition holds)")


def load(path: Path) -> Definition:
    """Read and check one definition file.

    Raises:
        ProgramError: the file cannot be read, is not JSON, or is not a valid definition.
    """
    try:
        value = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ProgramError(f"{path}: cannot read a program definition: {error}") from None
    return Definition.from_json(value, str(path))


def definition_path(program: str, directory: Path = PROGRAMS) -> Path:
    """Where the definition of ``program`` lives in ``directory``."""
    return Path(directory) / f"{program}.json"


# -- building on final -------------------------------------------------------------------------


def build(definition: Definition, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The definition's outputs (name -> final stream), built from ``inputs`` (input name -> final stream).

    Raises:
        ProgramError: ``inputs`` are not the definition's inputs.
    """
    if set(inputs) != set(definition.inputs):
        raise ProgramError(
            f"{definition.program} reads the inputs {list(definition.inputs)}, but was given {list(inputs)}"
        )
    streams = _wire(definition.nodes, dict(inputs))
    return {name: streams[node] for name, node in definition.outputs.items()}


def _wire(nodes: tuple[Node, ...], streams: dict[str, Any]) -> dict[str, Any]:
    """``streams`` with every node of ``nodes`` added, in order, each read from those before it."""
    for node in nodes:
        streams[node.name] = _operator(node, streams)
    return streams


METHODS = {
    "negate": "negate", "distinct": "distinct_keys", "count": "count_total", "sum": "sum_total", "min": "min",
    "max": "max", "join": "join", "left_join": "left_join",
}
"""The stream method of final each operator without expressions is (``count`` and ``sum`` are final's in-place
totals, which keep no key whose multiplicities sum to 0, as the vocabulary says)."""


def _operator(node: Node, streams: dict[str, Any]) -> Any:
    """The stream ``node`` makes of the streams it reads."""
    first, *others = (streams[name] for name in node.inputs)
    functions, where = node.functions, node.where
    if node.op == "map":
        return first.map(functions["function"])
    if node.op == "filter":
        predicate = functions["predicate"]
        return first.filter(lambda record: _boolean(f"{where}.predicate", predicate(record), "a filter's predicate"))
    if node.op == "flat_map":
        return first.flat_map(_returning_tuple(functions["function"], f"{where}.function", 0))
    if node.op == "explode":
        return first.explode(_returning_tuple(functions["function"], f"{where}.function", 2))
    if node.op == "join_function":
        function = _returning_tuple(functions["function"], f"{where}.function", 3)
        return first.join_function(lambda record: [(value, _version(f"{where}.function", at), multiplicity)
                                                   for value, at, multiplicity in function(record)])
    if node.op == "temporal_filter":
        lower, upper = functions["from"], functions["until"]
        return first.temporal_filter(lambda record: _version(f"{where}.from", lower(record)),
                                     lambda record: _version(f"{where}.until", upper(record)))
    if node.op == "concat":
        for other in others:
            first = first.concat(other)
        return first
    if node.op == "aggregate":
        return _aggregate(first, node)
    if node.op == "iterate":
        return first.iterate(lambda variable: _wire(node.body, {**streams, node.variable: variable})[node.result])
    if node.op in ("min", "max"):
        first = first.map(lambda record: _extreme_pair(where, record))
    return getattr(first, METHODS[node.op])(*others)


def _returning_tuple(function: Function, where: str, width: int) -> Function:
    """``function``, checked to return a tuple; with ``width``, a tuple of tuples of that many elements."""
    items = {2: "[record, multiplicity]", 3: "[record, version, multiplicity]"}.get(width)

    def checked(record: Any) -> tuple:
        result = function(record)
        if type(result) is not tuple or (items and not all(type(i) is tuple and len(i) == width for i in result)):
            shape = f"an array of {items}" if items else "a tuple (its elements are the output records)"
            raise EvaluationError(f"{where}: must make {shape}, but made {describe(result)}")
        if width and not all(type(item[-1]) is int for item in result):
            raise EvaluationError(f"{where}: a multiplicity must be an integer, but one is not in {describe(result)}")
        return result

    return checked


def _version(where: str, value: Any) -> int | tuple[int, ...]:
    """``value`` checked to be a version: a non-negative integer, or a tuple of them (as many as the case's)."""
    coordinates = value if type(value) is tuple else (value,)
    if not coordinates or not all(type(c) is int and c >= 0 for c in coordinates):
        raise EvaluationError(f"{where}: a version is a non-negative integer or a tuple of them, not {describe(value)}")
    return value


def _comparable(where: str, value: Any) -> Any:
    """``value``, checked to be what ``min`` and ``max`` compare: an integer or a string."""
    if type(value) not in (int, str):
        raise EvaluationError(f"{where}: min and max compare integers or strings, not {describe(value)}")
    return value


def _extreme_pair(where: str, record: Any) -> Any:
    """A ``min``/``max`` input record, checked: ``[key, value]`` with an integer or string value."""
    if type(record) is not tuple or len(record) != 2:
        raise EvaluationError(f"{where}: min and max read [key, value] records, not {describe(record)}")
    _comparable(where, record[1])
    return record


def _aggregate(stream: Any, node: Node) -> Any:
    """``[key, a1, ..., an]``: final's ``aggregate``, whose result holds ``(name, value)`` pairs sorted by
    name, so each aggregate is named by its zero-padded position."""
    key = node.functions["key"]

    def checked(kind: str, value: Function, position: int) -> Function:
        if kind == "count_distinct":
            return value
        where = f"{node.where}.aggregates[{position}].value"
        return lambda record: None if (result := value(record)) is None else _comparable(where, result)

    named = {f"{position:06d}": (kind, checked(kind, value, position))
             for position, (kind, value) in enumerate(node.aggregates)}
    return stream.aggregate(key, named).map(lambda pair: (pair[0], *(value for _, value in pair[1])))


# -- the engine ---------------------------------------------------------------------------------


class GenericEngine:
    """Runs each case's program built from its JSON definition (``programs/<name>.json``) on final.

    The definitions are read from ``directory`` on first use. A program without one is unsupported;
    one whose definition is invalid, or does not read the case's inputs, is an error.
    """

    def __init__(self, directory: Path = PROGRAMS) -> None:
        self.name = "generic"
        self.directory = Path(directory)
        self._definitions: dict[str, Definition] = {}

    def run(self, case: Case) -> Run:
        path = definition_path(case.program, self.directory)
        if not path.exists():
            return unsupported(f"no JSON definition of {case.program} ({path} is missing)")
        try:
            definition = self._definitions.get(case.program) or load(path)
        except ProgramError as error:
            return Run(status="error", reason=str(error))
        self._definitions[case.program] = definition
        if definition.program != case.program:
            return Run(status="error", reason=f"{path}: $.program: {definition.program!r} is not {case.program!r}, "
                                              "the program this file is named for")
        if definition.inputs != case.inputs:
            return Run(status="error", reason=f"{path}: $.inputs: {list(definition.inputs)} are not the case's "
                                              f"inputs {list(case.inputs)}; list those, in that order")
        several = len(definition.outputs) > 1
        if (tuple(definition.outputs) if several else ()) != case.outputs:
            return Run(status="error", reason=f"{path}: $.outputs: {list(definition.outputs)} are not the case's "
                                              f"outputs {list(case.outputs) or 'one, unnamed'}")

        def implementation(*streams: Any) -> Any:
            outputs = build(definition, dict(zip(case.inputs, streams, strict=True)))
            return outputs if several else next(iter(outputs.values()))

        try:
            return run_case(importlib.import_module("..", __package__), implementation, case)
        except Exception as error:  # the definition's failure on this case is the finding (final names the cause)
            return Run(status="error", reason=f"{path.name} on final raised {type(error).__name__}: {error}")

    def close(self) -> None:
        pass


def main() -> None:
    """Serve ``GenericEngine`` by the protocol on standard input and output."""
    serve(GenericEngine())


if __name__ == "__main__":
    main()
