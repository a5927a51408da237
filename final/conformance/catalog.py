"""The named programs the cases run, each defined in prose and implemented twice.

A ``Program`` has a ``definition`` precise enough for another engine's
authors to implement it (input shapes, output shape, NULLs), and up to three
implementations that the generator checks against one another:

- ``portable`` uses only document 002's operators (``map``, ``filter``,
  ``flat_map``, ``negate``, ``concat``, ``join``, ``reduce`` and its
  shorthands, ``iterate``), so it runs on every stage of this project, v0
  (from scratch) included;
- ``final`` uses final/'s own operators where it has one for the job
  (``count_total``, ``semijoin``, ``left_join``, ``aggregate``, ...), so
  the two are different code that must agree;
- ``reference`` is plain Python, for the programs no stage before final can
  express (document 000's ``explode``, ``join_function`` and temporal filter):
  it computes the output at a version from the input updates directly.

Records follow the encoding rule in ``encoding``: tuples, strings, ints,
booleans and ``None`` (SQL's NULL).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from .encoding import PlainVersion
from .versions import less_equal

Histories = Sequence[Sequence[tuple[Hashable, PlainVersion, int]]]
RandomRecord = Callable[[random.Random], Hashable]



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
    portable: Callable[..., Any] | None = None
    final: Callable[..., Any] | None = None
    reference: Callable[[Histories, PlainVersion], dict] | None = None
    iterates: bool = False
    """Whether the program has a loop (``iterate``)."""
    versions: tuple[str, ...] = ("int", "product")
    """The kinds of versions random histories use: ``int``, and ``product`` (pairs of ints)."""

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


def _pick(*choices: Any) -> RandomRecord:
    return lambda rng: rng.choice(choices)


def _pair(key: RandomRecord, value: RandomRecord) -> RandomRecord:
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
NULLABLE_KEYS = _pick(0, 1, 2, None)
NULLABLE_VALUES = _pick(0, 1, 3, None)

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


def _window_logic(event: tuple) -> list:
    return [(event, event[1], 1), (event, event[2], -1)]


def _explode_logic(pair: tuple) -> list:
    return [(pair[0], 0, pair[1])]


def _updates_reference(logic: Callable[[Any], list]) -> Callable[[Histories, PlainVersion], dict]:
    """From scratch for ``join_function(logic)`` (000): at ``t``, ``value`` has ``m * d`` for each input
    ``(record, s, m)`` with ``s <= t`` and each ``(value, s2, d)`` in ``logic(record)`` with ``s2 <= t``;
    ``logic``'s versions are lifted to the input's kind of version (``s2`` becomes ``(s2, 0, ...)``)."""

    def reference(histories: Histories, version: PlainVersion) -> dict:
        totals: dict = {}
        for record, at, multiplicity in histories[0]:
            if not less_equal(at, version):
                continue
            for value, when, delta in logic(record):
                when = when if isinstance(version, int) else (when, *(0 for _ in version[1:]))
                if less_equal(when, version):
                    totals[value] = totals.get(value, 0) + multiplicity * delta
        return {value: total for value, total in totals.items() if total}

    return reference


# -- the catalog -------------------------------------------------------------------

KEYED = "Input records are pairs [key, value]."

PROGRAMS: tuple[Program, ...] = (
    Program(
        name="word_count", inputs=("lines",), source="the classic first dataflow",
        definition="Input records are strings (lines). Output [word, n] for every word (a maximal run of "
        "non-whitespace, as Python's str.split()) whose total count n over all lines, times their "
        "multiplicities, is not zero; a word that no longer occurs has no record.",
        records=(_line,), portable=word_count,
    ),
    Program(
        name="count_by_key", inputs=("records",), source="002, v3 ('reduce') and SQL's COUNT(*) ... GROUP BY",
        definition=f"{KEYED} Output [key, n], n the sum of the multiplicities of the records with that key, "
        "for every key whose records do not cancel out; a key whose records all went has no record "
        "(not [key, 0]).",
        records=(_pair(SMALL_KEYS, SMALL_VALUES),), portable=count_by_key,
        final=lambda records: records.count_total(),
    ),
    Program(
        name="sum_by_key", inputs=("records",), source="SQL's SUM ... GROUP BY",
        definition=f"{KEYED} Values are integers or null. Output [key, s] for every key with records: s is "
        "the sum of value times multiplicity over the non-null values, or null when every value of the key "
        "is null (SQL's SUM). A key with no records has no output.",
        records=(_pair(SMALL_KEYS, _pick(-2, 1, 3, 4, None)),), portable=sum_by_key,
        final=lambda records: records.sum_total(),
    ),
    Program(
        name="distinct", inputs=("records",), source="002, v5 (the household items) and SQL's DISTINCT",
        definition="Input records are any values. Output every record whose accumulated multiplicity is "
        "positive, once (multiplicity 1).",
        records=(_pick("chair", "desk", "couch", ("towel", 2)),), portable=distinct,
        final=lambda records: records.distinct_keys(),
    ),
    Program(
        name="join", inputs=("left", "right"), source="002, v0 ('join') and SQL's inner JOIN",
        definition="Inputs are pairs [key, a] and [key, b]. Output [key, [a, b]] for every pair of records "
        "with equal keys, with the product of their multiplicities. null is an ordinary value here.",
        records=(_pair(SMALL_KEYS, SMALL_VALUES), _pair(SMALL_KEYS, _pick("x", "y", "z"))), portable=join,
        final=lambda left, right: left.arrange().join(right),
    ),
    Program(
        name="semijoin", inputs=("left", "keys"), source="003 (semijoin) and SQL's WHERE key IN (...)",
        definition="Inputs are pairs [key, a] and keys. Output every [key, a] record, with its multiplicity, "
        "whose key has a positive accumulated multiplicity among the keys.",
        records=(_pair(SMALL_KEYS, SMALL_VALUES), SMALL_KEYS), portable=semijoin,
        final=lambda left, keys: left.semijoin(keys.distinct_keys()),
    ),
    Program(
        name="antijoin", inputs=("left", "keys"), source="003 (antijoin) and SQL's WHERE key NOT IN (...)",
        definition="Inputs are pairs [key, a] and keys. Output every [key, a] record, with its multiplicity, "
        "whose key does not have a positive accumulated multiplicity among the keys.",
        records=(_pair(SMALL_KEYS, SMALL_VALUES), SMALL_KEYS), portable=antijoin,
        final=lambda left, keys: left.antijoin(keys.distinct_keys()),
    ),
    Program(
        name="left_outer_join", inputs=("left", "right"), source="003 ('Left Outer Joins') and SQL's LEFT JOIN",
        definition="Inputs are pairs [key, a] and [key, b]; keys may be null. Output [key, [a, b]] for every "
        "pair of records with equal non-null keys (product of multiplicities), and [key, [a, null]] for every "
        "left record, with its multiplicity, whose key is null or is the key of no right record with a "
        "positive accumulated multiplicity (SQL's LEFT JOIN: null equals nothing).",
        records=(_pair(NULLABLE_KEYS, SMALL_VALUES), _pair(NULLABLE_KEYS, _pick("x", "y", None))),
        portable=left_outer_join, final=lambda left, right: left.left_join(right),
    ),
    Program(
        name="reachability", inputs=("roots", "edges"), source="001 ('Limitations': fraud propagation); Rust DD",
        definition="Inputs are nodes (roots) and edges [source, target]. Output every node reachable from a "
        "root with positive multiplicity along edges with positive multiplicity (the roots included), once. "
        "Implemented with iterate: reached = distinct(roots + targets of edges from reached).",
        records=(NODES, _pair(NODES, NODES)), portable=reachability, final=_final_reachability, iterates=True,
    ),
    Program(
        name="connected_components", inputs=("edges",), source="label propagation, as in Rust DD's examples",
        definition="Input records are edges [a, b], read as undirected. Output [node, label] for every node "
        "on an edge, label being the least node of its connected component. Implemented with iterate: "
        "labels start as [node, node] and each round every node takes the least label among its own and "
        "its neighbours' (min by key).",
        records=(_pair(NODES, NODES),), portable=connected_components, iterates=True,
    ),
    Program(
        name="geometric_series", inputs=("numbers",), source="002, v4 and v5 ('geometric_series')",
        definition="Input records are positive integers. Output, once each, every n * 2^k (k >= 0) that is at "
        "most 50, for every input number n with positive multiplicity. Implemented as 002's loop: "
        "iterate(x -> distinct(x + 2x, kept while <= 50)).",
        records=(_pick(1, 3, 5, 16, 20, 51),), portable=geometric_series, iterates=True,
    ),
    Program(
        name="distinct_lengths", inputs=("strings",), source="001 ('Trying it out!')",
        definition='Input records are strings. Output ["length: n", c] for every length n of a string with '
        "positive multiplicity, c the number of distinct such strings of that length.",
        records=(_pick("a", "b", "cc", "dd", "eee"),), portable=distinct_lengths, final=_final_distinct_lengths,
    ),
    Program(
        name="min_max_count_distinct", inputs=("trips",),
        source="004 ('Downsides': MIN, MAX and COUNT(DISTINCT) ... GROUP BY passenger_count)",
        definition="Input records are rows [key, fare, distance]; any of them may be null. Over the rows with "
        "positive multiplicity, grouped by key (null is a group of its own), output [key, min, max, n]: the "
        "least and greatest non-null fare (null when every fare of the group is null) and the number of "
        "distinct non-null distances. A key with no rows has no output.",
        records=(_trip,), portable=min_max_count_distinct, final=_final_min_max_count_distinct,
    ),
    Program(
        name="difference", inputs=("a", "b"), source="002, v0 ('the difference between a and b')",
        definition="Inputs are any records. Output a minus b: each record with its multiplicity in a less its "
        "multiplicity in b, which may be negative (SQL's EXCEPT ALL, without dropping negatives).",
        records=(_pick("apple", "banana", "coconut"), _pick("apple", "banana", "coconut")), portable=difference,
    ),
    Program(
        name="concat", inputs=("a", "b"), source="002, v3 (concat of out-of-order inputs)",
        definition="Inputs are any records. Output both inputs together: multiplicities add (SQL's UNION ALL).",
        records=(_pick("a0", "a1", "b0"), _pick("a0", "b0", "b1")), portable=concat,
    ),
    Program(
        name="add_one_squares", inputs=("numbers",), source="002, v0 ('def add_one(collection)')",
        definition="Input records are integers. With S the least set holding the inputs of positive "
        "multiplicity that are at most 5 and, with every n in S, n + 1 when it is at most 5: output [n, n*n] "
        "once for every n in S. Implemented as 002's loop: iterate(x -> distinct(x + (x + 1), kept while <= 5)).",
        records=(_pick(0, 1, 3, 4, 7),), portable=add_one_squares, iterates=True,
    ),
    Program(
        name="plus_five_evens", inputs=("numbers",), source="002, v2 (the first dataflow graph)",
        definition="Input records are integers. Output n + 5 for every input n for which n + 5 is even, with "
        "n's multiplicity.",
        records=(_int(0, 9),), portable=plus_five_evens,
    ),
    Program(
        name="name_lengths", inputs=("names",), source="000 ('Differential dataflow background')",
        definition="Input records are strings. Output [name, length of name] with the name's multiplicity.",
        records=(_pick("frank", "david", "al"),), portable=name_lengths,
    ),
    Program(
        name="noop_loop", inputs=("numbers",), source="002 (liveness: 'should converge in two iterations')",
        definition="Input records are integers. A loop whose body maps x to x + 1 and back, negates that and "
        "adds the loop's collection: its fixed point is empty, so the output is always empty. It checks that "
        "a loop whose body cancels ends.",
        records=(_int(0, 3),), portable=noop_loop, iterates=True,
    ),
    Program(
        name="three_hops", inputs=("query", "links"), source="003 ('Technique 1: Shared Arrangements')",
        definition="Inputs are nodes (query) and links [from, to]. Output [node, origin] for every walk of "
        "exactly three links from a query node origin to node, with the product of the multiplicities "
        "along the walk (a node reached by two walks has multiplicity 2).",
        records=(_pick("a", "b", "c"), _pair(_pick("a", "b", "c", "d"), _pick("a", "b", "c", "d"))),
        portable=three_hops, final=lambda query, links: three_hops(query, links.arrange()),
    ),
    Program(
        name="enrichment", inputs=("facts", "users", "addrs", "agents"),
        source="003 ('Boss Battle: Left Outer Joins')",
        definition="Inputs are facts [id, user_id], users [user_id, addr_id], addrs [addr_id, zip] and agents "
        "[zip, agent]; any field may be null. Output [fact, user, addr, agent]: facts LEFT JOIN users ON "
        "fact.user_id = user.user_id LEFT JOIN addrs ON user.addr_id = addr.addr_id LEFT JOIN agents ON "
        "addr.zip = agent.zip, each joined row whole, null where nothing matched (null keys match nothing).",
        records=(
            _pair(_int(1, 3), _pick(10, 11, None)), _pair(_pick(10, 11), _pick(100, 101, None)),
            _pair(_pick(100, 101), _pick("x", "y")), _pair(_pick("x", "y"), _pick("ann", "bob")),
        ),
        portable=_enrichment(left_outer_join), final=_enrichment(lambda left, right: left.left_join(right)),
    ),
    Program(
        name="explode", inputs=("pairs",), source="000 ('Even more linear operators': explode)",
        definition="Input records are pairs [key, count] with integer counts. Output key with multiplicity "
        "count times the pair's multiplicity, summed over the pairs (so a negative count makes a negative "
        "multiplicity).",
        records=(_pair(_pick("apple", "pear"), _pick(-1, 1, 2, 3)),),
        final=lambda pairs: pairs.explode(lambda pair: [(pair[0], pair[1])]),
        reference=_updates_reference(_explode_logic),
    ),
    Program(
        name="timed_copies", inputs=("numbers",), source="000 ('An implementation': join_function)",
        definition="Input records are non-negative integers x. Each input x, from the version it arrives at, "
        "makes x copies of 2x present from version 3x until version 4x (present at t when 3x <= t < 4x): "
        "output 2x with multiplicity x times x's multiplicity there. Versions are integers only.",
        records=(_int(0, 4),), final=lambda numbers: numbers.join_function(_copies_logic),
        reference=_updates_reference(_copies_logic), versions=("int",),
    ),
    Program(
        name="temporal_window", inputs=("events",), source="000 ('Even more linear operators': temporal filters)",
        definition="Input records are events [name, from, until] of integers from <= until. An event is in "
        "the output, with its multiplicity, at every version t with from <= t < until (and at or after the "
        "version it arrived at). Versions are integers only.",
        records=(_window,), final=lambda events: events.temporal_filter(lambda e: e[1], lambda e: e[2]),
        reference=_updates_reference(_window_logic), versions=("int",),
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
