"""The conformance oracle's line protocol, spoken by pydbsp (run by the Python of this folder's own venv).

Reads cases from standard input (a start line, the case's input messages,
``{"end": true}``), builds each case's program as a pydbsp circuit of DBSP
operators, and writes the output updates, the output frontier and one closing line per case. See
``../README.md``, 'The protocol an engine speaks', and ``REPORT.md`` beside
this file.

pydbsp 2 evaluates a circuit over DBSP's two-dimensional time lattice: the
outer axis counts input changes, the inner axis the rounds of a fixed point.
Its evaluator takes each input change at the next outer tick, in order
("Inputs are 1-D streams. Events arrive in order. ... No explicit
timestamps, no out-of-order arrivals", its ``Evaluator.push``), so:

- **Versions to ticks.** The case is read whole (the protocol lets an
  engine answer after ``{"end": true}``); its versions, sorted, become the
  ticks 0, 1, 2, ..., and every input gets its net change at every tick (an
  empty Z-set when it has none). Integer versions are always a chain; a case
  whose versions are pairs runs when they form a chain, and is unsupported
  when two of them are incomparable.
- **Multiplicities are weights.** A Z-set maps each record to an integer
  weight, negative ones included, so a change is sent as it is.
- **Output.** The circuit's output is doubly incremental: its value at
  ``(tick, round)`` is a change. A program without a loop is read at
  ``(tick, 0)``; a loop is run the way pydbsp runs its own recursive
  queries, ``Evaluator.saturate_inner`` reading round after round and
  pushing each round's change into the loop's state, and its changes over
  the rounds add up to the version's.
- **Records.** JSON arrays become tuples (Z-set elements must be hashable),
  and index keys are JSON text, since pydbsp's indexes sort their keys and
  a key may be null or a tuple.

Standard output carries only the protocol: file descriptor 1 is pointed at
standard error before pydbsp is imported.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any

PROTOCOL = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)  # anything else written to standard output goes to standard error

from pydbsp.circuit import Circuit  # noqa: E402 (after the redirection above, on purpose)
from pydbsp.compute import ComputeCtx  # noqa: E402
from pydbsp.core import Antichain, dbsp_time  # noqa: E402
from pydbsp.evaluate import Evaluator  # noqa: E402
from pydbsp.indexed_relational_operators import (  # noqa: E402
    DeltaLiftedDeltaLiftedGroupBy,
    IndexedDeltaLiftedDeltaLiftedJoin,
    LiftIndex,
)
from pydbsp.indexed_zset import IndexedZSetAddition  # noqa: E402
from pydbsp.operator import Input, Lift1, Lift2, LiftDelay, LiftStreamIntroduction  # noqa: E402
from pydbsp.relational_operators import DeltaLiftedDeltaLiftedDistinct, LiftProject, LiftSelect  # noqa: E402
from pydbsp.storage import DictStorage  # noqa: E402
from pydbsp.zset import ZSet, ZSetAddition  # noqa: E402

ZSETS: ZSetAddition = ZSetAddition()
MAX_ROUNDS = int(os.environ.get("PYDBSP_ADAPTER_MAX_ROUNDS", 10_000))
"""Rounds of a loop at one version after which the case answers an error: a loop that never settles."""
COMPACT = bool(os.environ.get("PYDBSP_ADAPTER_COMPACT"))
"""Set: ``Evaluator.compact()`` after each version, as a long-running user would to bound memory."""


class Unsupported(Exception):
    """The case asks for what pydbsp cannot be given; the message says why."""


def to_value(record: Any) -> Any:
    """A JSON record as a Z-set element: arrays become tuples."""
    return tuple(to_value(item) for item in record) if isinstance(record, list) else record


def to_json(value: Any) -> Any:
    """A Z-set element as a JSON record: tuples become arrays."""
    return [to_json(item) for item in value] if isinstance(value, tuple) else value


def enc(value: Any) -> str:
    """An index key: the value's JSON text (sortable, whatever the value)."""
    return json.dumps(to_json(value))


def dec(text: str) -> Any:
    return to_value(json.loads(text))


# -- a circuit, and the operators the programs are written with ---------------------------------


class Program:
    """One case's circuit: its inputs, its output node, and (for a loop) the state the output feeds."""

    def __init__(self) -> None:
        self.evaluator = Evaluator(circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=dbsp_time(2)),
                                   group=ZSETS)
        self.circuit = self.evaluator.circuit
        self.inputs: list[int] = []
        self.state: int | None = None  # a loop's state: its output's changes, pushed back round by round
        self.loop_body: int | None = None  # the node whose changes are pushed into the state

    def input(self) -> int:
        """A new input, as a two-dimensional stream (its changes at round 0 of each tick)."""
        node = Input(frontier=Antichain(dbsp_time(1))).connect(self.circuit, ())
        self.inputs.append(node)
        return LiftStreamIntroduction(group=ZSETS).connect(self.circuit, (node,))

    # linear operators: a single lift each, doubly incremental as they are
    def map(self, stream: int, f: Callable[[Any], Any]) -> int:
        return LiftProject(f=f).connect(self.circuit, (stream,))

    def filter(self, stream: int, keep: Callable[[Any], bool]) -> int:
        return LiftSelect(pred=keep).connect(self.circuit, (stream,))

    def flat_map(self, stream: int, f: Callable[[Any], Iterable[tuple[Any, int]]]) -> int:
        """Each record r of weight w becomes the records of f(r), each (value, n) with weight n * w."""

        def apply(zset: ZSet) -> ZSet:
            out: dict[Any, int] = {}
            for record, weight in zset.items():
                for value, n in f(record):
                    out[value] = out.get(value, 0) + n * weight
            return ZSet({value: weight for value, weight in out.items() if weight != 0})

        return Lift1(f=apply).connect(self.circuit, (stream,))

    def add(self, a: int, b: int) -> int:
        return Lift2(op=ZSETS.add).connect(self.circuit, (a, b))

    def negate(self, stream: int) -> int:
        return Lift1(f=ZSETS.neg).connect(self.circuit, (stream,))

    # the non-linear ones: pydbsp's doubly incremental operators
    def distinct(self, stream: int) -> int:
        return DeltaLiftedDeltaLiftedDistinct(inner_group=ZSETS).connect(self.circuit, (stream,))

    def join(self, a: int, b: int, key_a: Callable, key_b: Callable, out: Callable[[Any, Any], Any]) -> int:
        """Every pair of records of a and b with equal keys, as out(a, b), weights multiplied."""
        by_a, by_b = (lambda r: enc(key_a(r))), (lambda r: enc(key_b(r)))
        indexed_a = LiftIndex(indexer=by_a).connect(self.circuit, (a,))
        indexed_b = LiftIndex(indexer=by_b).connect(self.circuit, (b,))
        return IndexedDeltaLiftedDeltaLiftedJoin(
            proj=lambda _key, x, y: out(x, y), group_a=IndexedZSetAddition(ZSETS, by_a),
            group_b=IndexedZSetAddition(ZSETS, by_b), out_group=ZSETS,
        ).connect(self.circuit, (indexed_a, indexed_b))

    def group_by(self, stream: int, key: Callable, aggregate: Callable[[list[tuple[Any, int]]], Any]) -> int:
        """(key, aggregate of the key's (record, weight) pairs) for every key with records."""
        by = lambda r: enc(key(r))  # noqa: E731
        indexed = LiftIndex(indexer=by).connect(self.circuit, (stream,))
        grouped = DeltaLiftedDeltaLiftedGroupBy(aggregate=aggregate, group=IndexedZSetAddition(ZSETS, by),
                                                out_group=ZSETS).connect(self.circuit, (indexed,))
        return self.map(grouped, lambda pair: (dec(pair[0]), pair[1]))

    def iterate(self, start: int, body: Callable[[int], int]) -> int:
        """002's iterate: x_0 = start, x_(k+1) = body(x_k), to the fixed point.

        pydbsp's recursion (its own reachability): the loop's state is a two-dimensional input into which
        the adapter pushes each round's change of the loop's collection, read back one round later
        (``LiftDelay``). The collection's change at round k is start's at round 0, minus it at round 1
        (so that x_1 is body(x_0) alone, as 002's ingress does), plus body's change."""
        if self.state is not None:
            raise Unsupported("this adapter runs one loop per circuit")
        self.state = Input(frontier=Antichain(dbsp_time(2))).connect(self.circuit, ())
        previous = LiftDelay(group=ZSETS).connect(self.circuit, (self.state,))
        ingress = self.add(start, self.negate(LiftDelay(group=ZSETS).connect(self.circuit, (start,))))
        self.loop_body = self.add(ingress, body(previous))
        return self.loop_body


def present(values: list[tuple[Any, int]]) -> list[Any]:
    """The records of a group with positive weight."""
    return [value for value, weight in values if weight > 0]


def word_count(p: Program, lines: int) -> int:
    words = p.flat_map(lines, lambda line: [(word, 1) for word in line.split()])
    return p.group_by(words, lambda word: word, lambda values: sum(weight for _, weight in values))


def count_by_key(p: Program, records: int) -> int:
    return p.group_by(records, lambda r: r[0], lambda values: sum(weight for _, weight in values))


def sum_by_key(p: Program, records: int) -> int:
    def total(values: list[tuple[Any, int]]) -> Any:
        numbers = [(r[1], weight) for r, weight in values if r[1] is not None]
        return sum(value * weight for value, weight in numbers) if numbers else None

    return p.group_by(records, lambda r: r[0], total)


def distinct(p: Program, records: int) -> int:
    return p.distinct(records)


def join(p: Program, left: int, right: int) -> int:
    return p.join(left, right, lambda a: a[0], lambda b: b[0], lambda a, b: (a[0], (a[1], b[1])))


def semijoin(p: Program, left: int, keys: int) -> int:
    return p.join(left, p.distinct(keys), lambda a: a[0], lambda key: key, lambda a, _key: a)


def antijoin(p: Program, left: int, keys: int) -> int:
    return p.add(left, p.negate(semijoin(p, left, keys)))


def left_outer_join(p: Program, left: int, right: int) -> int:
    """Inner join plus the left rows whose key is null or has no right row (003's 'Step one')."""
    usable = p.filter(right, lambda b: b[0] is not None)
    matched = p.join(left, usable, lambda a: a[0], lambda b: b[0], lambda a, b: (a[0], (a[1], b[1])))
    unmatched = antijoin(p, left, p.map(usable, lambda b: b[0]))
    return p.add(matched, p.map(unmatched, lambda a: (a[0], (a[1], None))))


def reachability(p: Program, roots: int, edges: int) -> int:
    def body(reached: int) -> int:
        targets = p.join(reached, edges, lambda node: node, lambda edge: edge[0], lambda _node, edge: edge[1])
        return p.distinct(p.add(roots, targets))

    return p.iterate(roots, body)


def connected_components(p: Program, edges: int) -> int:
    both = p.add(edges, p.map(edges, lambda edge: (edge[1], edge[0])))
    labels = p.map(p.distinct(p.map(both, lambda edge: edge[0])), lambda node: (node, node))

    def body(labels: int) -> int:
        offered = p.join(labels, both, lambda label: label[0], lambda edge: edge[0],
                         lambda label, edge: (edge[1], label[1]))
        return p.group_by(p.add(labels, offered), lambda label: label[0],
                          lambda values: min(label for (_, label) in present(values)))

    return p.iterate(labels, body)


def bounded(p: Program, numbers: int, step: Callable[[int], int], bound: int) -> int:
    """002's loop: iterate(x -> distinct(x + step(x), kept while <= bound))."""
    return p.iterate(numbers, lambda x: p.distinct(p.filter(p.add(x, p.map(x, step)), lambda n: n <= bound)))


def geometric_series(p: Program, numbers: int) -> int:
    return bounded(p, numbers, lambda n: n * 2, 50)


def add_one_squares(p: Program, numbers: int) -> int:
    return p.map(bounded(p, numbers, lambda n: n + 1, 5), lambda n: (n, n * n))


def noop_loop(p: Program, numbers: int) -> int:
    return p.iterate(numbers, lambda x: p.add(p.negate(p.map(p.map(x, lambda n: n + 1), lambda n: n - 1)), x))


def distinct_lengths(p: Program, strings: int) -> int:
    lengths = p.group_by(p.distinct(strings), len, lambda values: sum(weight for _, weight in values))
    return p.map(lengths, lambda pair: (f"length: {pair[0]}", pair[1]))


def min_max_count_distinct(p: Program, trips: int) -> int:
    def summary(values: list[tuple[Any, int]]) -> tuple:
        rows = present(values)
        fares = sorted(fare for _, fare, _ in rows if fare is not None)
        distances = {distance for _, _, distance in rows if distance is not None}
        return (fares[0] if fares else None, fares[-1] if fares else None, len(distances))

    groups = p.group_by(trips, lambda row: row[0], summary)
    return p.map(groups, lambda pair: (pair[0], *pair[1]))


def difference(p: Program, a: int, b: int) -> int:
    return p.add(a, p.negate(b))


def concat(p: Program, a: int, b: int) -> int:
    return p.add(a, b)


def plus_five_evens(p: Program, numbers: int) -> int:
    return p.filter(p.map(numbers, lambda n: n + 5), lambda n: n % 2 == 0)


def name_lengths(p: Program, names: int) -> int:
    return p.map(names, lambda name: (name, len(name)))


def three_hops(p: Program, query: int, links: int) -> int:
    walks = p.map(query, lambda node: (node, node))
    for _ in range(3):
        walks = p.join(walks, links, lambda walk: walk[0], lambda link: link[0],
                       lambda walk, link: (link[1], walk[1]))
    return walks


def enrichment(p: Program, facts: int, users: int, addrs: int, agents: int) -> int:
    rows = p.map(facts, lambda fact: (fact[1], (fact,)))  # (the next join's key, the row so far)
    for table in (users, addrs, agents):
        joined = left_outer_join(p, rows, p.map(table, lambda row: (row[0], row)))
        rows = p.map(joined, lambda pair: (None if pair[1][1] is None else pair[1][1][1], (*pair[1][0], pair[1][1])))
    return p.map(rows, lambda pair: pair[1])


def explode(p: Program, pairs: int) -> int:
    return p.flat_map(pairs, lambda pair: [(pair[0], pair[1])])


NO_TIMES = ("pydbsp's operators never move a change to another time: a change at outer tick t stays at t (its "
            "delays shift a whole stream by one tick, not a record by a computed amount), so an output that appears "
            "and leaves at versions computed from the data, as document 000's {what} needs, cannot be written")

PROGRAMS: dict[str, Callable[..., int] | str] = {
    "word_count": word_count,
    "count_by_key": count_by_key,
    "sum_by_key": sum_by_key,
    "distinct": distinct,
    "join": join,
    "semijoin": semijoin,
    "antijoin": antijoin,
    "left_outer_join": left_outer_join,
    "reachability": reachability,
    "connected_components": connected_components,
    "geometric_series": geometric_series,
    "distinct_lengths": distinct_lengths,
    "min_max_count_distinct": min_max_count_distinct,
    "difference": difference,
    "concat": concat,
    "add_one_squares": add_one_squares,
    "plus_five_evens": plus_five_evens,
    "name_lengths": name_lengths,
    "noop_loop": noop_loop,
    "three_hops": three_hops,
    "enrichment": enrichment,
    "explode": explode,
    "timed_copies": NO_TIMES.format(what="join_function"),
    "temporal_window": NO_TIMES.format(what="temporal filter"),
}


# -- versions ----------------------------------------------------------------------


def less_equal(a: Any, b: Any) -> bool:
    """Document 001's product order on versions (integers compare as numbers)."""
    if isinstance(a, int):
        return a <= b
    return all(x <= y for x, y in zip(a, b, strict=True))


def chain(versions: list) -> list:
    """The versions in order, when every two of them are comparable.

    Raises:
        Unsupported: two incomparable versions, which one tick after another cannot keep apart.
    """
    for i, a in enumerate(versions):
        for b in versions[i + 1:]:
            if not less_equal(a, b) and not less_equal(b, a):
                raise Unsupported(
                    f"versions {json.dumps(a)} and {json.dumps(b)} are incomparable, and pydbsp's inputs take one "
                    "change after another (its outer axis is one total order): the later would see the earlier")
    return sorted(versions, key=lambda v: v if isinstance(v, int) else sum(v))  # on a chain, the sum is monotone


# -- one case --------------------------------------------------------------------------


def answer(start: dict, messages: list[dict]) -> list[dict]:
    """The protocol lines answering one case: output data, the closing output frontier `[]`, the closing line."""
    builder = PROGRAMS.get(start["program"])
    if builder is None:
        return [{"unsupported": f"no program {json.dumps(start['program'])} in this adapter"}]
    if isinstance(builder, str):
        return [{"unsupported": builder}]
    changes: dict[str, dict[str, dict[Any, int]]] = {name: {} for name in start["inputs"]}
    versions: dict[str, Any] = {}
    for message in messages:
        for record, version, multiplicity in message.get("data", []):
            versions[json.dumps(version)] = version
            at = changes[message["input"]].setdefault(json.dumps(version), {})
            value = to_value(record)
            at[value] = at.get(value, 0) + multiplicity
    try:
        order = chain(list(versions.values()))
        program = Program()
        output = builder(program, *(program.input() for _ in start["inputs"]))
        updates = []
        deepest = -1  # the deepest round any earlier version's loop reached
        for tick, version in enumerate(order):
            text = json.dumps(version)
            for name, node in zip(start["inputs"], program.inputs, strict=True):
                zset = {value: m for value, m in changes[name].get(text, {}).items() if m != 0}
                program.evaluator.push(node, ZSet(zset), t=(tick,))
            if program.state is None or program.loop_body is None:
                deltas = [program.evaluator.read(output, (tick, 0))]
            else:
                # Rounds until the loop's collection changes no more, and no fewer than an earlier version ran:
                # its state reaches this version's rounds only up to the depth it went to (saturate_inner's
                # min_inner). Each round's change goes back into the state; the output (the loop's collection,
                # or a map of it) is read at every round.
                deltas = []
                rounds = program.evaluator.saturate_inner(program.loop_body, tick, is_empty=lambda d: not d.inner,
                                                          min_inner=deepest)
                for k, change in rounds:
                    if k >= MAX_ROUNDS:
                        return [{"error": f"the loop still changed after {MAX_ROUNDS} rounds at version {text}"}]
                    program.evaluator.push(program.state, change, t=(tick, k))
                    deltas.append(program.evaluator.read(output, (tick, k)))
                    deepest = max(deepest, k)
            updates += [[to_json(record), version, weight] for delta in deltas for record, weight in delta.items()]
            if COMPACT:
                program.evaluator.compact()
    except Unsupported as reason:
        return [{"unsupported": str(reason)}]
    except Exception as error:  # pydbsp's own failure is the finding, reported with its type
        message = "".join(traceback.format_exception_only(error)).strip()
        return [{"error": f"pydbsp raised {message[:1500]}"}]
    # The whole case is answered at its end: every version is complete at once, which the output frontier says.
    return ([{"data": updates}] if updates else []) + [{"frontier": []}, {"done": True}]


def write(message: dict) -> None:
    PROTOCOL.write(json.dumps(message) + "\n")


def main() -> None:
    start: dict | None = None
    messages: list[dict] = []
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as error:
            write({"error": f"unreadable line: {error}"})
            start = None
            continue
        if "case" in message:
            start, messages = message, []
        elif message.get("end"):
            if start is None:
                write({"error": "end of a case that never started"})
                continue
            for reply in answer(start, messages):
                write(reply)
            start = None
        elif start is not None:
            messages.append(message)


if __name__ == "__main__":
    main()
