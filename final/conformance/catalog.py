"""The named programs the cases run, each defined in prose and implemented two or three times.

A ``Program`` has a ``definition`` precise enough for another engine's
authors to implement it (input shapes, output shape, NULLs), and up to three
implementations that the generator checks against one another:

- ``portable`` uses only document 002's operators (``map``, ``filter``,
  ``flat_map``, ``negate``, ``concat``, ``join``, ``reduce`` and its
  shorthands, ``iterate``), so it runs on every stage of this project, v0
  (from scratch) included; programs built on document 000's operators
  (``explode``, ``join_function``, the temporal filter) have none;
- ``final`` uses final/'s own operators where it has one for the job
  (``count_total``, ``semijoin``, ``left_join``, ``aggregate``, ...), so
  the two are different code that must agree;
- ``reference``, which every program has, is the definition written as plain
  Python over the input collections accumulated at one version (sets, dicts,
  a breadth-first search for a loop's fixed point), using no dataflow operator
  at all: the oracle's own answer from scratch, a computation independent of
  every engine it judges.

Records follow the encoding rule in ``encoding``: tuples, strings, ints,
booleans and ``None`` (SQL's NULL).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from .encoding import PlainVersion, add
from .versions import Update, less_equal

Histories = Sequence[Sequence[Update]]
RandomRecord = Callable[[random.Random], Hashable]
Reference = Callable[[Histories, PlainVersion], dict]
"""The output collection at a version, ``{record: multiplicity}``, from each input's updates."""



@dataclass(frozen=True)
class Program:
    """A named computation from input collections to one output collection."""

    name: str
    inputs: tuple[str, ...]
    """The names of the inputs, in the order the implementations take them."""
    definition: str
    """What the program computes, for an engine's authors: input shapes, output shape, NULLs."""
    source: str
    """Where it comes from: a document (by its short id) or SQL."""
    records: tuple[RandomRecord, ...]
    """A random record for each input, for random histories: small domains, so updates collide and cancel."""
    reference: Reference
    """The output at a version, from the input updates: the definition in plain Python (``from_scratch``)."""
    portable: Callable[..., Any] | None = None
    final: Callable[..., Any] | None = None
    iterates: bool = False
    """Whether the program has a loop (``iterate``)."""
    nested: bool = False
    """Whether a loop of the program sits inside another (its versions inside have three coordinates or more)."""
    versions: tuple[str, ...] = ("int", "product")
    """The kinds of versions random histories use: ``int``, and ``product`` (pairs of ints)."""
    outputs: tuple[str, ...] = ()
    """The names of the outputs of a program with several (its implementations return ``{name: stream}``
    and its reference ``{name: collection}``); empty for a program with one output."""

    def on_final(self) -> Callable[..., Any]:
        """The implementation final runs: its own operators where it has them, else the portable one."""
        implementation = self.final or self.portable
        if implementation is None:
            raise ValueError(f"{self.name} has neither a final nor a portable implementation")
        return implementation

    def concepts(self) -> tuple[str, ...]:
        """What a stage needs to run the portable implementation (``final`` when there is none)."""
        if self.portable is None:
            return ("final",)
        return ("iterate",) if self.iterates else ()


# -- random records ---------------------------------------------------------------


def pick(*choices: Any) -> RandomRecord:
    """A random record: one of ``choices``."""
    return lambda rng: rng.choice(choices)


def pair_of(key: RandomRecord, value: RandomRecord) -> RandomRecord:
    """A random pair: a record from ``key``, then one from ``value``."""
    return lambda rng: (key(rng), value(rng))


def _int(low: int, high: int) -> RandomRecord:
    return lambda rng: rng.randint(low, high)


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(("the", "cat", "dog", "a")) for _ in range(rng.randint(1, 3)))


def _trip(rng: random.Random) -> tuple:
    return (rng.choice((1, 2, None)), rng.choice((-3, 5, 7, 10, 25, None)), rng.choice((1, 2, 5, None)))


def _window(rng: random.Random) -> tuple:
    start = rng.randint(0, 5)
    return (rng.choice(("ad", "promo")), start, start + rng.randint(0, 3))


SMALL_KEYS = _int(0, 3)
SMALL_VALUES = _int(0, 4)
NODES = _int(0, 5)
NULLABLE_KEYS = pick(0, 1, 2, None)
NULLABLE_VALUES = pick(0, 1, 3, None)

# -- the implementations ----------------------------------------------------------


def word_count(lines: Any) -> Any:
    return lines.flat_map(lambda line: line.split()).map(lambda word: (word, ())).count()


def count_by_key(records: Any) -> Any:
    return records.count()


def sql_sum_values(values: list) -> list:
    """SUM over one group's ``(value, multiplicity)`` pairs: NULLs skipped, NULL when every value is NULL."""
    numbers = [(value, multiplicity) for value, multiplicity in values if value is not None]
    return [(sum(value * multiplicity for value, multiplicity in numbers) if numbers else None, 1)]


def sum_by_key(records: Any) -> Any:
    return records.reduce(sql_sum_values)


def distinct(records: Any) -> Any:
    return records.map(lambda record: (record, ())).distinct().map(lambda pair: pair[0])


def join(left: Any, right: Any) -> Any:
    return left.join(right)


def semijoin(left: Any, keys: Any) -> Any:
    present = keys.map(lambda key: (key, ())).distinct()
    return left.join(present).map(lambda pair: (pair[0], pair[1][0]))


def antijoin(left: Any, keys: Any) -> Any:
    return left.concat(semijoin(left, keys).negate())


def left_outer_join(left: Any, right: Any) -> Any:
    """The inner join of non-NULL keys, plus every left record with no match (NULL keys included), padded."""
    keyed = left.filter(lambda pair: pair[0] is not None)
    others = right.filter(lambda pair: pair[0] is not None)
    matched = semijoin(keyed, others.map(lambda pair: pair[0]))
    unmatched = left.concat(matched.negate()).map(lambda pair: (pair[0], (pair[1], None)))
    return keyed.join(others).concat(unmatched)


def reachability(roots: Any, edges: Any) -> Any:
    return roots.iterate(
        lambda reached: reached.map(lambda node: (node, ())).join(edges).map(lambda pair: pair[1][1])
        .concat(roots).map(lambda node: (node, ())).distinct().map(lambda pair: pair[0])
    )


def connected_components(edges: Any) -> Any:
    both_ways = edges.concat(edges.map(lambda edge: (edge[1], edge[0])))
    labels = both_ways.map(lambda edge: (edge[0], edge[0])).distinct()
    return labels.iterate(
        lambda inner: inner.join(both_ways).map(lambda pair: (pair[1][1], pair[1][0])).concat(inner).min()
    )


def geometric_series_body(collection: Any) -> Any:
    """002's ``geometric_series`` body: every record doubled, added back, kept while <= 50, distinct."""
    return (
        collection.map(lambda data: data * 2).concat(collection).filter(lambda data: data <= 50)
        .map(lambda data: (data, ())).distinct().map(lambda data: data[0]).consolidate()
    )


def geometric_series(numbers: Any) -> Any:
    return numbers.iterate(geometric_series_body)


def distinct_lengths(strings: Any) -> Any:
    """001's operator: strings keyed by length, ``("length: n", number of distinct strings)``."""
    return (
        strings.map(lambda string: (len(string), string))
        .reduce(lambda values: [(len([v for v, m in values if m > 0]), 1)])
        .map(lambda pair: (f"length: {pair[0]}", pair[1]))
    )


def trip_summary(values: list) -> list:
    """004's aggregates over one group's ``((fare, distance), multiplicity)`` pairs, NULLs skipped."""
    present = [value for value, multiplicity in values if multiplicity > 0]
    fares = [fare for fare, _ in present if fare is not None]
    distances = {distance for _, distance in present if distance is not None}
    return [((min(fares) if fares else None, max(fares) if fares else None, len(distances)), 1)]


def min_max_count_distinct(trips: Any) -> Any:
    return (
        trips.map(lambda trip: (trip[0], (trip[1], trip[2]))).reduce(trip_summary)
        .map(lambda pair: (pair[0], *pair[1]))
    )


def difference(a: Any, b: Any) -> Any:
    return a.concat(b.negate())


def concat(a: Any, b: Any) -> Any:
    return a.concat(b)


def add_one_body(collection: Any) -> Any:
    """002's ``add_one``: the numbers and their successors, kept while <= 5, distinct."""
    return (
        collection.map(lambda data: data + 1).concat(collection).filter(lambda data: data <= 5)
        .map(lambda data: (data, ())).distinct().map(lambda data: data[0]).consolidate()
    )


def add_one_squares(numbers: Any) -> Any:
    return numbers.iterate(add_one_body).map(lambda data: (data, data * data))


def plus_five_evens(numbers: Any) -> Any:
    return numbers.map(lambda data: data + 5).filter(lambda data: data % 2 == 0)


def name_lengths(names: Any) -> Any:
    return names.map(lambda name: (name, len(name)))


def noop_loop(numbers: Any) -> Any:
    return numbers.iterate(
        lambda inner: inner.map(lambda data: data + 1).map(lambda data: data - 1).negate().concat(inner)
    )


def counts_and_keys(records: Any) -> dict:
    """Two outputs of one input: each key's count, and the keys present."""
    keys = records.map(lambda pair: (pair[0], ())).distinct().map(lambda pair: pair[0])
    return {"counts": records.count(), "keys": keys}


def _distinct_numbers(collection: Any) -> Any:
    return collection.map(lambda n: (n, ())).distinct().map(lambda pair: pair[0])


def nested_closure(numbers: Any) -> Any:
    """A loop inside a loop: the inner closes a set under n -> min(n + 1, 6), the outer adds 2m mod 7 for
    every m the inner reached."""
    return numbers.iterate(
        lambda outer: _distinct_numbers(
            _distinct_numbers(outer)
            .iterate(lambda inner: _distinct_numbers(inner.map(lambda n: min(n + 1, 6)).concat(inner)))
            .map(lambda n: n * 2 % 7)
            .concat(outer)
        )
    )


def three_hops(query: Any, links: Any) -> Any:
    hop = lambda pair: (pair[1][1], pair[1][0])  # noqa: E731 - one step: (reached, origin)
    return query.map(lambda node: (node, node)).join(links).map(hop).join(links).map(hop).join(links).map(hop)


def _enrichment(left_join: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """003's chain of LEFT JOINs, each step by ``left_join`` (portable or final's)."""

    def enrichment(facts: Any, users: Any, addrs: Any, agents: Any) -> Any:
        rows = facts.map(lambda fact: (fact[1], (fact,)))
        rows = left_join(rows, users.map(lambda user: (user[0], user))).map(
            lambda pair: ((pair[1][1] or (None, None))[1], (*pair[1][0], pair[1][1]))
        )
        rows = left_join(rows, addrs.map(lambda addr: (addr[0], addr))).map(
            lambda pair: ((pair[1][1] or (None, None))[1], (*pair[1][0], pair[1][1]))
        )
        return left_join(rows, agents.map(lambda zone: (zone[0], zone))).map(lambda pair: (*pair[1][0], pair[1][1]))

    return enrichment


# -- final's own operators ----------------------------------------------------------


def _final_reachability(roots: Any, edges: Any) -> Any:
    return roots.iterate(
        lambda reached: reached.map(lambda node: (node, ())).join(edges).map(lambda pair: pair[1][1])
        .concat(roots).distinct_keys()
    )


def _final_distinct_lengths(strings: Any) -> Any:
    return (
        strings.map(lambda string: (len(string), string)).count_distinct()
        .map(lambda pair: (f"length: {pair[0]}", pair[1]))
    )


def _final_min_max_count_distinct(trips: Any) -> Any:
    named = {
        "min": ("min", lambda trip: trip[1]),
        "max": ("max", lambda trip: trip[1]),
        "distinct": ("count_distinct", lambda trip: trip[2]),
    }
    # aggregate gives (key, (("distinct", n), ("max", x), ("min", y))): names sorted.
    return trips.aggregate(lambda trip: trip[0], named).map(
        lambda pair: (pair[0], pair[1][2][1], pair[1][1][1], pair[1][0][1])
    )


def _copies_logic(x: int) -> list:
    """000's ``join_function`` example: ``x`` copies of ``2x`` from version ``3x`` until ``4x``."""
    return [(2 * x, 3 * x, x), (2 * x, 4 * x, -x)]


# -- from scratch: each definition in plain Python ---------------------------------------------------------


def accumulated(history: Sequence[tuple[Hashable, PlainVersion, int]], version: PlainVersion) -> dict:
    """An input's collection at ``version``: its updates at versions ``<=`` it, summed per record."""
    totals: dict = {}
    for record, at, multiplicity in history:
        if less_equal(at, version):
            add(totals, record, multiplicity)
    return totals


def positive(collection: dict) -> list:
    """The records of ``collection`` with a positive multiplicity: a set's members."""
    return [record for record, multiplicity in collection.items() if multiplicity > 0]


def _static(compute: Callable[..., dict]) -> Reference:
    """A reference for a program whose output at a version depends only on its inputs' collections there:
    ``compute`` takes one ``{record: multiplicity}`` per input and returns the output's; zeros dropped."""

    def reference(histories: Histories, version: PlainVersion) -> dict:
        output = compute(*(accumulated(history, version) for history in histories))
        return {record: multiplicity for record, multiplicity in output.items() if multiplicity}

    reference.__doc__ = compute.__doc__
    return reference


def _static_outputs(compute: Callable[..., dict]) -> Reference:
    """``_static`` for a program with several outputs: ``compute`` returns ``{output: collection}``."""

    def reference(histories: Histories, version: PlainVersion) -> dict:
        outputs = compute(*(accumulated(history, version) for history in histories))
        return {name: {r: m for r, m in output.items() if m} for name, output in outputs.items()}

    reference.__doc__ = compute.__doc__
    return reference


def _counts_and_keys(records: dict) -> dict:
    return {"counts": _count_by_key(records), "keys": {key: 1 for key, _ in positive(records)}}


def _word_count(lines: dict) -> dict:
    counts: dict = {}
    for line, multiplicity in lines.items():
        for word in line.split():
            add(counts, word, multiplicity)
    return {(word, n): 1 for word, n in counts.items()}


def _count_by_key(records: dict) -> dict:
    counts: dict = {}
    for (key, _), multiplicity in records.items():
        add(counts, key, multiplicity)
    return {(key, n): 1 for key, n in counts.items()}


def _sum_by_key(records: dict) -> dict:
    sums: dict = {}
    for (key, value), multiplicity in records.items():
        total = sums.setdefault(key, None)
        if value is not None:
            sums[key] = (total or 0) + value * multiplicity
    return {(key, total): 1 for key, total in sums.items()}


def _distinct(records: dict) -> dict:
    return {record: 1 for record in positive(records)}


def _join(left: dict, right: dict) -> dict:
    output: dict = {}
    for (key, a), m in left.items():
        for (other, b), n in right.items():
            if key == other:
                add(output, (key, (a, b)), m * n)
    return output


def _semijoin(left: dict, keys: dict) -> dict:
    present = set(positive(keys))
    return {(key, a): m for (key, a), m in left.items() if key in present}


def _antijoin(left: dict, keys: dict) -> dict:
    present = set(positive(keys))
    return {(key, a): m for (key, a), m in left.items() if key not in present}


def _sql_left_join(left: dict, right: dict) -> dict:
    """SQL's LEFT JOIN of ``(key, a)`` and ``(key, b)`` records: pairs with equal non-null keys, and each left
    record whose key is null or matches no right record present, padded with null."""
    present = {key for key, _ in positive(right) if key is not None}
    output: dict = {}
    for (key, a), m in left.items():
        if key is None or key not in present:
            add(output, (key, (a, None)), m)
            continue
        for (other, b), n in right.items():
            if other == key:
                add(output, (key, (a, b)), m * n)
    return output


def _reachability(roots: dict, edges: dict) -> dict:
    successors: dict = {}
    for source, target in positive(edges):
        successors.setdefault(source, []).append(target)
    reached = set(positive(roots))
    todo = list(reached)
    while todo:
        for target in successors.get(todo.pop(), ()):
            if target not in reached:
                reached.add(target)
                todo.append(target)
    return {node: 1 for node in reached}


def _connected_components(edges: dict) -> dict:
    neighbours: dict = {}
    for a, b in positive(edges):
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    labels: dict = {}
    for start in neighbours:
        if start in labels:
            continue
        component, todo = {start}, [start]
        while todo:
            for other in neighbours[todo.pop()] - component:
                component.add(other)
                todo.append(other)
        least = min(component)
        labels.update((node, least) for node in component)
    return {(node, label): 1 for node, label in labels.items()}


def _geometric_series(numbers: dict) -> dict:
    output: dict = {}
    for n in positive(numbers):
        if n <= 0:
            raise ValueError(f"geometric_series takes positive integers, not {n!r}: n * 2^k never grows past 50")
        while n <= 50:
            output[n] = 1
            n *= 2
    return output


def _distinct_lengths(strings: dict) -> dict:
    by_length: dict = {}
    for string in positive(strings):
        by_length.setdefault(len(string), set()).add(string)
    return {(f"length: {length}", len(group)): 1 for length, group in by_length.items()}


def _min_max_count_distinct(trips: dict) -> dict:
    groups: dict = {}
    for key, fare, distance in positive(trips):
        fares, distances = groups.setdefault(key, ([], set()))
        if fare is not None:
            fares.append(fare)
        if distance is not None:
            distances.add(distance)
    return {
        (key, min(fares, default=None), max(fares, default=None), len(distances)): 1
        for key, (fares, distances) in groups.items()
    }


def _difference(a: dict, b: dict) -> dict:
    output = dict(a)
    for record, multiplicity in b.items():
        add(output, record, -multiplicity)
    return output


def _concat(a: dict, b: dict) -> dict:
    output = dict(a)
    for record, multiplicity in b.items():
        add(output, record, multiplicity)
    return output


def _add_one_squares(numbers: dict) -> dict:
    reached = {n for n in positive(numbers) if n <= 5}
    todo = list(reached)
    while todo:
        successor = todo.pop() + 1
        if successor <= 5 and successor not in reached:
            reached.add(successor)
            todo.append(successor)
    return {(n, n * n): 1 for n in reached}


def _plus_five_evens(numbers: dict) -> dict:
    output: dict = {}
    for n, multiplicity in numbers.items():
        if (n + 5) % 2 == 0:
            add(output, n + 5, multiplicity)
    return output


def _name_lengths(names: dict) -> dict:
    return {(name, len(name)): multiplicity for name, multiplicity in names.items()}


def _noop_loop(numbers: dict) -> dict:
    return {}


def _steps_up(n: int) -> set[int]:
    """n and what n -> min(n + 1, 6) reaches from it: the inner loop's closure of one number."""
    reached = {n}
    while min(n + 1, 6) not in reached:
        n = min(n + 1, 6)
        reached.add(n)
    return reached


def _nested_closure(numbers: dict) -> dict:
    reached = set(positive(numbers))
    while True:
        grown = reached | {m * 2 % 7 for n in reached for m in _steps_up(n)}
        if grown == reached:
            return {n: 1 for n in reached}
        reached = grown


def _three_hops(query: dict, links: dict) -> dict:
    walks: dict = {}  # (node reached, origin) -> the product of multiplicities so far
    for origin, multiplicity in query.items():
        add(walks, (origin, origin), multiplicity)
    for _ in range(3):
        steps: dict = {}
        for (node, origin), m in walks.items():
            for (source, target), n in links.items():
                if source == node:
                    add(steps, (target, origin), m * n)
        walks = steps
    return walks


def _enrichment_rows(facts: dict, users: dict, addrs: dict, agents: dict) -> dict:
    rows: dict = {}
    for fact, multiplicity in facts.items():
        add(rows, (fact,), multiplicity)
    # Each LEFT JOIN's key is the second field of the row's last part (null when that part is null).
    for table in (users, addrs, agents):
        present = {record[0] for record in positive(table) if record[0] is not None}
        joined: dict = {}
        for row, m in rows.items():
            key = None if row[-1] is None else row[-1][1]
            if key is None or key not in present:
                add(joined, (*row, None), m)
                continue
            for record, n in table.items():
                if record[0] == key:
                    add(joined, (*row, record), m * n)
        rows = joined
    return rows


def _explode(pairs: dict) -> dict:
    output: dict = {}
    for (key, count), multiplicity in pairs.items():
        add(output, key, count * multiplicity)
    return output


def _timed_copies(histories: Histories, version: PlainVersion) -> dict:
    """Each update ``(x, s, m)`` counts at ``t`` when ``s <= t`` and ``3x <= t < 4x``: ``x * m`` copies of ``2x``."""
    output: dict = {}
    for x, at, multiplicity in histories[0]:
        if at <= version and 3 * x <= version < 4 * x:
            add(output, 2 * x, x * multiplicity)
    return output


def _temporal_window(histories: Histories, version: PlainVersion) -> dict:
    """Each update ``(event, s, m)`` counts at ``t`` when ``s <= t`` and ``from <= t < until``."""
    output: dict = {}
    for event, at, multiplicity in histories[0]:
        if at <= version and event[1] <= version < event[2]:
            add(output, event, multiplicity)
    return output


# -- the catalog -------------------------------------------------------------------

KEYED = "Input records are pairs [key, value]."

PROGRAMS: tuple[Program, ...] = (
    Program(
        name="word_count", inputs=("lines",), source="the classic first dataflow",
        definition="Input records are strings (lines). Output [word, n] for every word (a maximal run of "
        "non-whitespace, as Python's str.split()) whose total count n over all lines, times their "
        "multiplicities, is not zero; a word that no longer occurs has no record.",
        records=(_line,), portable=word_count,
        reference=_static(_word_count),
    ),
    Program(
        name="count_by_key", inputs=("records",), source="002, v3 ('reduce') and SQL's COUNT(*) ... GROUP BY",
        definition=f"{KEYED} Output [key, n], n the sum of the multiplicities of the records with that key, "
        "for every key whose records do not cancel out; a key whose records all went has no record "
        "(not [key, 0]).",
        records=(pair_of(SMALL_KEYS, SMALL_VALUES),), portable=count_by_key,
        final=lambda records: records.count_total(),
        reference=_static(_count_by_key),
    ),
    Program(
        name="sum_by_key", inputs=("records",), source="SQL's SUM ... GROUP BY",
        definition=f"{KEYED} Values are integers or null. Output [key, s] for every key with records: s is "
        "the sum of value times multiplicity over the non-null values, or null when every value of the key "
        "is null (SQL's SUM). A key with no records has no output.",
        records=(pair_of(SMALL_KEYS, pick(-2, 1, 3, 4, None)),), portable=sum_by_key,
        final=lambda records: records.sum_total(),
        reference=_static(_sum_by_key),
    ),
    Program(
        name="distinct", inputs=("records",), source="002, v5 (the household items) and SQL's DISTINCT",
        definition="Input records are any values. Output every record whose accumulated multiplicity is "
        "positive, once (multiplicity 1).",
        records=(pick("chair", "desk", "couch", ("towel", 2)),), portable=distinct,
        final=lambda records: records.distinct_keys(),
        reference=_static(_distinct),
    ),
    Program(
        name="join", inputs=("left", "right"), source="002, v0 ('join') and SQL's inner JOIN",
        definition="Inputs are pairs [key, a] and [key, b]. Output [key, [a, b]] for every pair of records "
        "with equal keys, with the product of their multiplicities. null is an ordinary value here.",
        records=(pair_of(SMALL_KEYS, SMALL_VALUES), pair_of(SMALL_KEYS, pick("x", "y", "z"))), portable=join,
        final=lambda left, right: left.arrange().join(right),
        reference=_static(_join),
    ),
    Program(
        name="semijoin", inputs=("left", "keys"), source="003 (semijoin) and SQL's WHERE key IN (...)",
        definition="Inputs are pairs [key, a] and keys. Output every [key, a] record, with its multiplicity, "
        "whose key has a positive accumulated multiplicity among the keys.",
        records=(pair_of(SMALL_KEYS, SMALL_VALUES), SMALL_KEYS), portable=semijoin,
        final=lambda left, keys: left.semijoin(keys.distinct_keys()),
        reference=_static(_semijoin),
    ),
    Program(
        name="antijoin", inputs=("left", "keys"), source="003 (antijoin) and SQL's WHERE key NOT IN (...)",
        definition="Inputs are pairs [key, a] and keys. Output every [key, a] record, with its multiplicity, "
        "whose key does not have a positive accumulated multiplicity among the keys.",
        records=(pair_of(SMALL_KEYS, SMALL_VALUES), SMALL_KEYS), portable=antijoin,
        final=lambda left, keys: left.antijoin(keys.distinct_keys()),
        reference=_static(_antijoin),
    ),
    Program(
        name="left_outer_join", inputs=("left", "right"), source="003 ('Left Outer Joins') and SQL's LEFT JOIN",
        definition="Inputs are pairs [key, a] and [key, b]; keys may be null. Output [key, [a, b]] for every "
        "pair of records with equal non-null keys (product of multiplicities), and [key, [a, null]] for every "
        "left record, with its multiplicity, whose key is null or is the key of no right record with a "
        "positive accumulated multiplicity (SQL's LEFT JOIN: null equals nothing).",
        records=(pair_of(NULLABLE_KEYS, SMALL_VALUES), pair_of(NULLABLE_KEYS, pick("x", "y", None))),
        portable=left_outer_join, final=lambda left, right: left.left_join(right),
        reference=_static(_sql_left_join),
    ),
    Program(
        name="reachability", inputs=("roots", "edges"), source="001 ('Limitations': fraud propagation); Rust DD",
        definition="Inputs are nodes (roots) and edges [source, target]. Output every node reachable from a "
        "root with positive multiplicity along edges with positive multiplicity (the roots included), once. "
        "Implemented with iterate: reached = distinct(roots + targets of edges from reached).",
        records=(NODES, pair_of(NODES, NODES)), portable=reachability, final=_final_reachability, iterates=True,
        reference=_static(_reachability),
    ),
    Program(
        name="connected_components", inputs=("edges",), source="label propagation, as in Rust DD's examples",
        definition="Input records are edges [a, b], read as undirected. Output [node, label] for every node "
        "on an edge, label being the least node of its connected component. Implemented with iterate: "
        "labels start as [node, node] and each round every node takes the least label among its own and "
        "its neighbours' (min by key).",
        records=(pair_of(NODES, NODES),), portable=connected_components, iterates=True,
        reference=_static(_connected_components),
    ),
    Program(
        name="geometric_series", inputs=("numbers",), source="002, v4 and v5 ('geometric_series')",
        definition="Input records are positive integers. Output, once each, every n * 2^k (k >= 0) that is at "
        "most 50, for every input number n with positive multiplicity. Implemented as 002's loop: "
        "iterate(x -> distinct(x + 2x, kept while <= 50)).",
        records=(pick(1, 3, 5, 16, 20, 51),), portable=geometric_series, iterates=True,
        reference=_static(_geometric_series),
    ),
    Program(
        name="distinct_lengths", inputs=("strings",), source="001 ('Trying it out!')",
        definition='Input records are strings. Output ["length: n", c] for every length n of a string with '
        "positive multiplicity, c the number of distinct such strings of that length; a length counts Unicode "
        "code points (Python's len), not UTF-16 units or bytes.",
        records=(pick("a", "b", "cc", "dd", "eee"),), portable=distinct_lengths, final=_final_distinct_lengths,
        reference=_static(_distinct_lengths),
    ),
    Program(
        name="min_max_count_distinct", inputs=("trips",),
        source="004 ('Downsides': MIN, MAX and COUNT(DISTINCT) ... GROUP BY passenger_count)",
        definition="Input records are rows [key, fare, distance]; any of them may be null. Over the rows with "
        "positive multiplicity, grouped by key (null is a group of its own), output [key, min, max, n]: the "
        "least and greatest non-null fare (null when every fare of the group is null) and the number of "
        "distinct non-null distances. A key with no rows has no output.",
        records=(_trip,), portable=min_max_count_distinct, final=_final_min_max_count_distinct,
        reference=_static(_min_max_count_distinct),
    ),
    Program(
        name="difference", inputs=("a", "b"), source="002, v0 ('the difference between a and b')",
        definition="Inputs are any records. Output a minus b: each record with its multiplicity in a less its "
        "multiplicity in b, which may be negative (SQL's EXCEPT ALL, without dropping negatives).",
        records=(pick("apple", "banana", "coconut"), pick("apple", "banana", "coconut")), portable=difference,
        reference=_static(_difference),
    ),
    Program(
        name="concat", inputs=("a", "b"), source="002, v3 (concat of out-of-order inputs)",
        definition="Inputs are any records. Output both inputs together: multiplicities add (SQL's UNION ALL).",
        records=(pick("a0", "a1", "b0"), pick("a0", "b0", "b1")), portable=concat,
        reference=_static(_concat),
    ),
    Program(
        name="add_one_squares", inputs=("numbers",), source="002, v0 ('def add_one(collection)')",
        definition="Input records are integers. With S the least set holding the inputs of positive "
        "multiplicity that are at most 5 and, with every n in S, n + 1 when it is at most 5: output [n, n*n] "
        "once for every n in S. Implemented as 002's loop: iterate(x -> distinct(x + (x + 1), kept while <= 5)).",
        records=(pick(0, 1, 3, 4, 7),), portable=add_one_squares, iterates=True,
        reference=_static(_add_one_squares),
    ),
    Program(
        name="plus_five_evens", inputs=("numbers",), source="002, v2 (the first dataflow graph)",
        definition="Input records are integers. Output n + 5 for every input n for which n + 5 is even, with "
        "n's multiplicity.",
        records=(_int(0, 9),), portable=plus_five_evens,
        reference=_static(_plus_five_evens),
    ),
    Program(
        name="name_lengths", inputs=("names",), source="000 ('Differential dataflow background')",
        definition="Input records are strings. Output [name, length of name] with the name's multiplicity; a "
        "length counts Unicode code points (Python's len), not UTF-16 units or bytes.",
        records=(pick("frank", "david", "al"),), portable=name_lengths,
        reference=_static(_name_lengths),
    ),
    Program(
        name="noop_loop", inputs=("numbers",), source="002 (liveness: 'should converge in two iterations')",
        definition="Input records are integers. A loop whose body maps x to x + 1 and back, negates that and "
        "adds the loop's collection: its fixed point is empty, so the output is always empty. It checks that "
        "a loop whose body cancels ends.",
        records=(_int(0, 3),), portable=noop_loop, iterates=True,
        reference=_static(_noop_loop),
    ),
    Program(
        name="nested_closure", inputs=("numbers",), source="002, v5 (loops in loops: versions of three "
        "coordinates and more)",
        definition="Input records are integers. With S the least set holding the inputs of positive "
        "multiplicity and, for every n in S and every m that steps m -> min(m + 1, 6) reach from n (n "
        "itself included), 2m mod 7: output every n in S once. Implemented as a loop inside a loop: the outer "
        "iterate(x -> distinct(x + inner(distinct(x)) mapped by m -> 2m mod 7)), the inner "
        "iterate(y -> distinct(y + y mapped by n -> min(n + 1, 6))).",
        records=(_int(0, 9),), portable=nested_closure, iterates=True, nested=True,
        reference=_static(_nested_closure),
    ),
    Program(
        name="counts_and_keys", inputs=("records",), outputs=("counts", "keys"),
        source="two SQL queries over one table: COUNT(*) ... GROUP BY key, and SELECT DISTINCT key",
        definition=f"{KEYED} Two outputs. counts: [key, n] as count_by_key gives it. keys: every key that has "
        "a record with positive multiplicity, once (multiplicity 1). An engine reports each output's data and "
        "frontiers apart (the README's 'Several outputs').",
        records=(pair_of(SMALL_KEYS, SMALL_VALUES),), portable=counts_and_keys,
        final=lambda records: {"counts": records.count_total(),
                               "keys": records.map(lambda pair: pair[0]).distinct_keys()},
        reference=_static_outputs(_counts_and_keys),
    ),
    Program(
        name="three_hops", inputs=("query", "links"), source="003 ('Technique 1: Shared Arrangements')",
        definition="Inputs are nodes (query) and links [from, to]. Output [node, origin] for every walk of "
        "exactly three links from a query node origin to node, with the product of the multiplicities "
        "along the walk (a node reached by two walks has multiplicity 2).",
        records=(pick("a", "b", "c"), pair_of(pick("a", "b", "c", "d"), pick("a", "b", "c", "d"))),
        portable=three_hops, final=lambda query, links: three_hops(query, links.arrange()),
        reference=_static(_three_hops),
    ),
    Program(
        name="enrichment", inputs=("facts", "users", "addrs", "agents"),
        source="003 ('Boss Battle: Left Outer Joins')",
        definition="Inputs are facts [id, user_id], users [user_id, addr_id], addrs [addr_id, zip] and agents "
        "[zip, agent]; any field may be null. Output [fact, user, addr, agent]: facts LEFT JOIN users ON "
        "fact.user_id = user.user_id LEFT JOIN addrs ON user.addr_id = addr.addr_id LEFT JOIN agents ON "
        "addr.zip = agent.zip, each joined row whole, null where nothing matched (null keys match nothing).",
        records=(
            pair_of(_int(1, 3), pick(10, 11, None)), pair_of(pick(10, 11), pick(100, 101, None)),
            pair_of(pick(100, 101), pick("x", "y")), pair_of(pick("x", "y"), pick("ann", "bob")),
        ),
        portable=_enrichment(left_outer_join), final=_enrichment(lambda left, right: left.left_join(right)),
        reference=_static(_enrichment_rows),
    ),
    Program(
        name="explode", inputs=("pairs",), source="000 ('Even more linear operators': explode)",
        definition="Input records are pairs [key, count] with integer counts. Output key with multiplicity "
        "count times the pair's multiplicity, summed over the pairs (so a negative count makes a negative "
        "multiplicity).",
        records=(pair_of(pick("apple", "pear"), pick(-1, 1, 2, 3)),),
        final=lambda pairs: pairs.explode(lambda pair: [(pair[0], pair[1])]),
        reference=_static(_explode),
    ),
    Program(
        name="timed_copies", inputs=("numbers",), source="000 ('An implementation': join_function)",
        definition="Input records are non-negative integers x. Each input x, from the version it arrives at, "
        "makes x copies of 2x present from version 3x until version 4x (present at t when 3x <= t < 4x): "
        "output 2x with multiplicity x times x's multiplicity there. Versions are integers only.",
        records=(_int(0, 4),), final=lambda numbers: numbers.join_function(_copies_logic),
        versions=("int",),
        reference=_timed_copies,
    ),
    Program(
        name="temporal_window", inputs=("events",), source="000 ('Even more linear operators': temporal filters)",
        definition="Input records are events [name, from, until] of integers from <= until. An event is in "
        "the output, with its multiplicity, at every version t with from <= t < until (and at or after the "
        "version it arrived at). Versions are integers only.",
        records=(_window,), final=lambda events: events.temporal_filter(lambda e: e[1], lambda e: e[2]),
        versions=("int",),
        reference=_temporal_window,
    ),
)

BY_NAME: dict[str, Program] = {program.name: program for program in PROGRAMS}


def program_named(name: str) -> Program:
    """The catalog's program called ``name``.

    Raises:
        KeyError: no program has that name (the message lists those that do).
    """
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no program {name!r} in the catalog; it has {', '.join(BY_NAME)}") from None
