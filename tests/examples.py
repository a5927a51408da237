"""The source documents' examples, each written once, as data.

An ``Example`` is a program, its inputs (one history of ``(record, version,
multiplicity)`` updates per input, as ``tests.harness.run`` takes them), the
output the document gives (accumulated, at every input version), the text the
document printed, and the passage it comes from. The tests assert every
example on every stage that can run it; the tour prints them side by side;
the notebooks show them. Later stages add their examples here.
The documents are listed in the README's Sources section; ``source`` cites
them by that short id ("document 002") and the passage.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from final.conformance import catalog as conformance
from final.conformance.catalog import add_one_squares, concat, count_by_key, difference, name_lengths, plus_five_evens
from final.conformance.catalog import distinct as distinct_records
from final.conformance.catalog import geometric_series as iterate_geometric_series
from final.conformance.catalog import noop_loop as noop_body
from final.conformance.catalog import reachability as reachable
from final.conformance.catalog import three_hops as walks_of_three
from tests.harness import STAGES, Result, less_equal, run
from tests.sql import enrichment_reference, group_by_reference

DOC_002 = "document 002"


@dataclass(frozen=True)
class Example:
    """One worked example of a document, runnable on any stage through the harness."""

    name: str
    source: str
    """The document's short id and the passage the example is in."""
    program: Callable[..., Any]
    inputs: list[list[tuple[Hashable, Any, int]]]
    expected: dict[Any, dict[Hashable, int]]
    """What the document gives, accumulated at every input version."""
    printed: str
    """The document's own text for the result, or a note where it prints none."""
    since: str = "v0"
    """The first stage with every concept the example needs."""
    notes: str = field(default="")
    at: tuple | None = None
    """Versions to evaluate at, where the document looks beyond the input versions (their joins)."""
    differences: dict[Any, dict[Hashable, int]] | None = None
    """The document's per-version output differences, where it prints them."""
    messages: dict[str, list[tuple[Any, dict[Hashable, int]]]] = field(default_factory=dict)
    """The document's debug lines for a stage (and the stages after it that share them), in order:
    ``(version, difference)`` as each message left the program."""
    documented: dict[str, dict[Any, dict[Hashable, int]]] = field(default_factory=dict)
    """A stage whose documented output is not ``expected`` (v4's wrong answers), with that output.
    Invariant: every such stage is in ``limitations``."""
    limitations: dict[str, str] = field(default_factory=dict)
    """Stages known to get this example wrong, each with why: their output differs from from-scratch."""
    reference: Callable[[list, tuple | None], dict] | None = None
    """For operators v0 lacks (final's): computes the from-scratch answer from ``inputs`` and ``at``."""

    def __post_init__(self) -> None:
        unexplained = set(self.documented) - set(self.limitations)
        if unexplained:
            raise ValueError(f"{self.name}: documented output for {sorted(unexplained)} but no limitation says why")

    def from_scratch(self) -> dict[Any, dict[Hashable, int]]:
        """The answer recomputed from scratch at every version: v0 running the program, or ``reference``."""
        if self.reference is not None:
            return self.reference(self.inputs, self.at)
        return run("v0", self.program, self.inputs, self.at)

    def expected_on(self, stage: str) -> dict[Any, dict[Hashable, int]]:
        """What the document says ``stage`` outputs."""
        return self.documented.get(stage, self.expected)

    def messages_on(self, stage: str) -> list[tuple[Any, dict[Hashable, int]]] | None:
        """The document's debug lines for ``stage``: its own, or those of the latest stage before it."""
        known = [s for s in self.messages if STAGES.index(s) <= STAGES.index(stage)]
        return self.messages[max(known, key=STAGES.index)] if known else None


# -- 002, v0 -----------------------------------------------------------------

EQUAL_COLLECTIONS = [
    [("cat", 4), ("dog", 2)],
    [("cat", 1), ("cat", 3), ("dog", 2)],
    [("dog", 2), ("cat", 4)],
    [("cat", 4), ("dog", 2), ("elephant", 0)],
    [("cat", 4), ("dog", 2), ("elephant", -4), ("elephant", 4)],
]
"""002, v0: "The following collections are all logically equivalent"."""

# The programs of the documents' examples (add_one, geometric_series, reachable, ...) are the
# conformance oracle's catalog programs, imported above: each is written once, in
# final/conformance/catalog.py. These two are named here as the notebooks know them.
add_one = conformance.add_one_body
"""002's ``add_one``: the numbers and their successors, kept while <= 5, distinct."""
geometric_series = conformance.geometric_series_body
"""002's ``geometric_series`` body (the function ``iterate`` applies)."""


# -- 002, v4 and v5; 001 -------------------------------------------------------


def distinct_lengths(collection: Any) -> Any:
    """001's operator: key strings by length, output ``("length: n", number of distinct strings)``."""
    return (
        collection.map(lambda string: (len(string), string))
        .reduce(lambda values: [(len(values), 1)])
        .map(lambda pair: (f"length: {pair[0]}", pair[1]))
    )


GEOMETRIC_SERIES_V0 = {1: 1, 2: 1, 4: 1, 8: 1, 16: 1, 32: 1}
GEOMETRIC_SERIES_V1 = {**GEOMETRIC_SERIES_V0, 3: 1, 6: 1, 12: 1, 24: 1, 48: 1}
GEOMETRIC_SERIES_V4_WRONG = {k: 1 for k in GEOMETRIC_SERIES_V1 if k != 3}
"""002, v4: after retracting 3 only 3 goes; 6, 12, 24 and 48 stay."""

EXAMPLES = [
    Example(
        name="difference_a_minus_b",
        source=f"{DOC_002}, v0: 'Then the difference between a and b is'",
        program=difference,
        inputs=[
            [("apple", 0, 3), ("banana", 0, 2), ("coconut", 0, 7)],
            [("apple", 0, 1), ("banana", 0, 4), ("coconut", 0, 7)],
        ],
        expected={0: {"apple": 2, "banana": -2}},
        printed="[('apple', 2), ('banana', -2)]",
    ),
    Example(
        name="add_one_iterate",
        source=f"{DOC_002}, v0: 'def add_one(collection)' and 'when run, the output is'",
        program=add_one_squares,
        inputs=[[(1, 0, 1)]],
        expected={0: {(1, 1): 1, (2, 4): 1, (3, 9): 1, (4, 16): 1, (5, 25): 1}},
        printed="Collection([((1, 1), 1), ((2, 4), 1), ((3, 9), 1), ((4, 16), 1), ((5, 25), 1)]",
        notes="The printed line is verbatim; the page lost its closing parenthesis.",
    ),
    Example(
        name="plus_five_evens_graph",
        source=f"{DOC_002}, v2: 'computation_step = ... map(data + 5) .filter(data % 2 == 0)', fed 0..9",
        program=plus_five_evens,
        inputs=[[(i, i, 1) for i in range(10)]],
        # i + 5 is even for odd i: 1 -> 6, 3 -> 8, 5 -> 10, 7 -> 12, 9 -> 14.
        expected={
            0: {},
            1: {6: 1},
            2: {6: 1},
            3: {6: 1, 8: 1},
            4: {6: 1, 8: 1},
            5: {6: 1, 8: 1, 10: 1},
            6: {6: 1, 8: 1, 10: 1},
            7: {6: 1, 8: 1, 10: 1, 12: 1},
            8: {6: 1, 8: 1, 10: 1, 12: 1},
            9: {6: 1, 8: 1, 10: 1, 12: 1, 14: 1},
        },
        printed="(the document shows the graph's diagram but not its debug output; "
        "the expected values follow from its program by hand)",
        since="v0",
    ),
    Example(
        name="concat_out_of_order",
        source=f"{DOC_002}, v3: 'input_a = [(version_0, A0), (version_2, A2 - A1), (version_1, A1 - A0), ...]'",
        program=concat,
        inputs=[
            [("a0", 0, 1), ("a2", 2, 1), ("a1", 1, 1), ("a3", 3, 1)],
            [("b1", 1, 1), ("b0", 0, 1)],
        ],
        expected={
            0: {"a0": 1, "b0": 1},
            1: {"a0": 1, "a1": 1, "b0": 1, "b1": 1},
            2: {"a0": 1, "a1": 1, "a2": 1, "b0": 1, "b1": 1},
            3: {"a0": 1, "a1": 1, "a2": 1, "a3": 1, "b0": 1, "b1": 1},
        },
        printed="output = [(version_0, A0.concat(B0)), (version_2, A2 - A1), "
        "(version_1, (A1 - A0).concat(B1 - B0)), (version_3, A3 - A2)]",
        notes="A_i is ('a<i>', 1) and B_i is ('b<i>', 1) accumulated: each version adds one record per input.",
    ),
    Example(
        name="reduce_closed_versions_in_order",
        source=f"{DOC_002}, v3: 'reduce has to additionally be careful to compute outputs in order'",
        program=count_by_key,
        inputs=[[(("k", "c"), 2, 1), (("k", "a"), 0, 1), (("k", "b"), 1, 1)]],
        expected={0: {("k", 1): 1}, 1: {("k", 2): 1}, 2: {("k", 3): 1}},
        printed="(the document describes, without printing, versions 0, 1 and 2 closing at once and "
        "reduce producing 0, then 1, then 2)",
    ),
]

EXAMPLES += [
    Example(
        name="geometric_series",
        source=f"{DOC_002}, v4 ('def geometric_series(collection)' and its outputs) and v5/vFinal ('When you run it')",
        program=iterate_geometric_series,
        inputs=[[(1, 0, 1), (16, 1, 1), (3, 1, 1), (3, 2, -1)]],
        expected={0: GEOMETRIC_SERIES_V0, 1: GEOMETRIC_SERIES_V1, 2: GEOMETRIC_SERIES_V0},
        printed="v4: version 2 only retracts 3 (wrong); v5: version 2 retracts 3, 6, 12, 24 and 48",
        since="v0",
        messages={
            "v4": [
                (0, {1: 1, 2: 1}), (0, {4: 1}), (0, {8: 1}), (0, {16: 1}), (0, {32: 1}),
                (1, {3: 1, 6: 1}), (1, {12: 1}), (1, {24: 1}), (1, {48: 1}),
                (2, {3: -1}),
            ],
            "v5": [
                (0, {1: 1, 2: 1}), (0, {4: 1}), (0, {8: 1}), (0, {16: 1}), (0, {32: 1}),
                (1, {3: 1, 6: 1, 16: 1, 32: 1}), (1, {12: 1}), (1, {24: 1}), (1, {16: -1, 48: 1}), (1, {32: -1}),
                (2, {3: -1, 6: -1}), (2, {12: -1}), (2, {24: -1}), (2, {48: -1}),
            ],
        },
        documented={"v4": {0: GEOMETRIC_SERIES_V0, 1: GEOMETRIC_SERIES_V1, 2: GEOMETRIC_SERIES_V4_WRONG}},
        limitations={
            "v4": "lexicographic versions make every iteration of versions 0 and 1 the past of version 2, so "
            "distinct still holds the (6, 1) of version 1's second iteration and only 3 is retracted (002, v4)",
        },
    ),
    Example(
        name="household_distinct",
        source=f"{DOC_002}, v5/vFinal: 'a collection composed of household items' ... 'we have to emit: (couch, -1)'",
        program=distinct_records,
        inputs=[[("chair", (0, 0), 4), ("desk", (0, 0), 2), ("towel", (0, 0), 5),
                 ("couch", (1, 0), 1), ("couch", (0, 1), 1)]],
        at=((0, 0), (0, 1), (1, 0), (1, 1)),
        expected={
            (0, 0): {"chair": 1, "desk": 1, "towel": 1},
            (0, 1): {"chair": 1, "desk": 1, "towel": 1, "couch": 1},
            (1, 0): {"chair": 1, "desk": 1, "towel": 1, "couch": 1},
            (1, 1): {"chair": 1, "desk": 1, "towel": 1, "couch": 1},
        },
        differences={
            (0, 0): {"chair": 1, "desk": 1, "towel": 1},
            (0, 1): {"couch": 1},
            (1, 0): {"couch": 1},
            (1, 1): {"couch": -1},
        },
        printed="at (1, 0): [(couch, 1)]; at (0, 1): [(couch, 1)]; at (1, 1): (couch, -1)",
        since="v5",
    ),
    Example(
        name="distinct_lengths",
        source="document 001, 'Trying it out!': the operator counting distinct strings of each length",
        program=distinct_lengths,
        inputs=[[("a", (0, 0), 1), ("b", (0, 0), 3), ("cc", (0, 0), 2),
                 ("a", (0, 1), -1), ("b", (0, 1), -3),
                 ("a", (1, 0), -1), ("b", (1, 0), -1),
                 ("a", (1, 1), 1), ("b", (1, 1), 2)]],
        expected={
            (0, 0): {("length: 1", 2): 1, ("length: 2", 1): 1},
            (0, 1): {("length: 2", 1): 1},
            (1, 0): {("length: 1", 1): 1, ("length: 2", 1): 1},
            (1, 1): {("length: 1", 1): 1, ("length: 2", 1): 1},
        },
        differences={
            (0, 0): {("length: 1", 2): 1, ("length: 2", 1): 1},
            (0, 1): {("length: 1", 2): -1},
            (1, 0): {("length: 1", 1): 1, ("length: 1", 2): -1},
            (1, 1): {("length: 1", 2): 1},
        },
        printed='difference[(0, 0)] : [(("length: 1", 2), 1), (("length: 2", 1), 1)]; '
        'difference[(0, 1)] : [(("length: 1", 2), -1)]; '
        'difference[(1, 0)] : [(("length: 1", 1), 1), (("length: 1", 2), -1)]; '
        'difference[(1, 1)] : [(("length: 1", 2), 1)]',
        since="v5",
        notes="The accumulated outputs follow from the inputs; at (1, 1) 001 says 'We would like the output "
        "to be [((\"length: 1\", 1), 1), ((\"length: 2\", 1), 1)]'.",
    ),
    Example(
        name="fraud_propagation",
        source="document 001, 'Limitations': risk spreads from a fraudster along transactions; "
        "correcting the fraud data must un-label everyone it reached",
        program=reachable,
        inputs=[
            [("you", 0, 1), ("you", 1, -1)],
            [(("you", "ana"), 0, 1), (("ana", "bo"), 0, 1), (("bo", "ana"), 0, 1), (("bo", "cy"), 0, 1)],
        ],
        expected={0: {"you": 1, "ana": 1, "bo": 1, "cy": 1}, 1: {}},
        printed="(001 states the outcome in prose: after the correction, nobody is risky)",
        since="v0",
        limitations={
            "v4": "in lexicographic order the loop at version 1 starts from version 0's fixed point, where ana "
            "and bo (who transact both ways) keep each other labelled, and cy through bo, so retracting the "
            "source removes only the source",
        },
    ),
    Example(
        name="noop_body_converges",
        source=f"{DOC_002}, liveness: 'This computation should converge in two iterations, regardless of the input'",
        program=noop_body,
        inputs=[[(1, 0, 1)]],
        expected={0: {}},
        printed="(002 prints nothing: the loop must end, with an empty output)",
        since="v0",
    ),
]

# -- 000 -----------------------------------------------------------------------

DOC_000 = "document 000"


EXAMPLES += [
    Example(
        name="names_with_lengths",
        source=f"{DOC_000}, 'Differential dataflow background': the update stream of names, mapped to (name, length)",
        program=name_lengths,
        inputs=[[("frank", 6, 1), ("frank", 8, 1), ("david", 8, 1), ("frank", 9, -2)]],
        expected={
            6: {("frank", 5): 1},
            8: {("frank", 5): 2, ("david", 5): 1},
            9: {("david", 5): 1},
        },
        differences={6: {("frank", 5): 1}, 8: {("frank", 5): 1, ("david", 5): 1}, 9: {("frank", 5): -2}},
        printed='(("frank", 5), 6, +1) (("frank", 5), 8, +1) (("david", 5), 8, +1) (("frank", 5), 9, -2)',
    ),
]


def updates_reference(logic: Callable[[Any], list]) -> Callable[[list, tuple | None], Result]:
    """From scratch for ``join_function(logic)``: the collection at ``t`` holds ``value`` with multiplicity
    ``m * d`` for each input ``(record, s, m)`` and ``(value, s2, d)`` in ``logic(record)`` with ``s <= t``
    and ``s2 <= t`` (000: the join of the input with the collection ``logic`` describes)."""

    def reference(inputs: list, at: tuple | None) -> Result:
        versions = at if at is not None else sorted({version for _, version, _ in inputs[0]})
        result = {}
        for version in versions:
            totals: dict = {}
            for record, s, m in inputs[0]:
                for value, s2, d in logic(record) if less_equal(s, version) else ():
                    if less_equal(s2, version):
                        totals[value] = totals.get(value, 0) + m * d
            result[version] = {value: total for value, total in totals.items() if total}
        return result

    return reference


def copies_from_3x_until_4x(x: int) -> list:
    """000's ``join_function`` example: ``x`` copies of ``2x`` from time ``3x`` until ``4x``."""
    return [(2 * x, 3 * x, x), (2 * x, 4 * x, -x)]


def valid_between(event: tuple) -> list:
    """A temporal filter's logic for ``(name, from, until)`` events: present from ``from`` until ``until``."""
    return [(event, event[1], 1), (event, event[2], -1)]


def count_copies(pair: tuple) -> list:
    """``explode``'s intended use (000): an accumulation ``(key, count)`` becomes ``count`` copies of ``key``."""
    return [(pair[0], pair[1])]


EXAMPLES += [
    Example(
        name="join_function_copies",
        source=f"{DOC_000}, 'An implementation': 'creates x copies of 2*x from time 3*x until 4*x, "
        "for x from 0 through 9'",
        program=lambda numbers: numbers.join_function(copies_from_3x_until_4x),
        inputs=[[(x, 0, 1) for x in range(10)]],
        at=tuple(range(0, 37)),
        # By the document's sentence: at time t, 2x appears x times for every x with 3x <= t < 4x.
        expected={t: {2 * x: x for x in range(1, 10) if 3 * x <= t < 4 * x} for t in range(0, 37)},
        printed="(the document gives the program and says what it creates; it prints no output)",
        since="final",
        reference=updates_reference(copies_from_3x_until_4x),
    ),
    Example(
        name="explode_counts",
        source=f"{DOC_000}, 'Even more linear operators': explode turns (key, count) into count copies of key, "
        "and can turn a positive record negative",
        program=lambda pairs: pairs.explode(count_copies),
        inputs=[[(("apple", 3), 0, 1), (("pear", 2), 0, 1), (("apple", 3), 1, -1), (("apple", 5), 1, 1),
                 (("refund", -1), 1, 1)]],
        expected={0: {"apple": 3, "pear": 2}, 1: {"apple": 5, "pear": 2, "refund": -1}},
        printed="(the document describes explode without a worked example; these counts illustrate it)",
        since="final",
        reference=updates_reference(lambda pair: [(pair[0], 0, pair[1])]),
    ),
    Example(
        name="temporal_filter_window",
        source=f"{DOC_000}, 'Even more linear operators': a temporal filter keeps data from lower(data) "
        "until upper(data)",
        program=lambda events: events.temporal_filter(lambda event: event[1], lambda event: event[2]),
        inputs=[[(("ad", 2, 5), 0, 1), (("promo", 4, 9), 0, 1), (("ad", 2, 5), 3, -1)]],
        at=(0, 2, 3, 4, 5, 9),
        expected={
            0: {},
            2: {("ad", 2, 5): 1},
            3: {},
            4: {("promo", 4, 9): 1},
            5: {("promo", 4, 9): 1},
            9: {},
        },
        printed="(the document describes temporal filters without a worked example; this window illustrates "
        "one, with the ad withdrawn at version 3)",
        since="final",
        reference=updates_reference(valid_between),
    ),
]

# -- 004 -----------------------------------------------------------------------

DOC_004 = "document 004"
TRIP_AGGREGATES = {
    "min_fare": ("min", lambda trip: trip[1]),
    "max_fare": ("max", lambda trip: trip[1]),
    "distinct_distances": ("count_distinct", lambda trip: trip[2]),
}


def fares_by_passengers(trips: Any) -> Any:
    """004's query over ``(passenger_count, fare_amount, trip_distance)`` rows:
    ``SELECT passenger_count, MIN(fare_amount), MAX(fare_amount), COUNT(DISTINCT trip_distance) ... GROUP BY
    passenger_count``, one record per group: ``(passenger_count, (("distinct_distances", n), ("max_fare", x),
    ("min_fare", y)))``."""
    return trips.aggregate(lambda trip: trip[0], TRIP_AGGREGATES)


def _trip_result(distinct: int, high: int, low: int) -> tuple:
    return (("distinct_distances", distinct), ("max_fare", high), ("min_fare", low))


EXAMPLES += [
    Example(
        name="fares_by_passengers",
        source=f"{DOC_004}, 'Downsides': MIN(fare_amount), MAX(fare_amount), COUNT(DISTINCT trip_distance) "
        "GROUP BY passenger_count (NULL passenger_count is a group)",
        program=fares_by_passengers,
        inputs=[[
            ((1, 10, 2), 0, 1), ((1, 25, 5), 0, 1), ((2, 7, 1), 0, 1), ((None, 12, 3), 0, 1), ((1, 10, 5), 0, 1),
            ((2, -3, 1), 1, 1), ((1, 10, 2), 1, -1),
            ((1, 25, 5), 2, -1),
        ]],
        expected={
            0: {(1, _trip_result(2, 25, 10)): 1, (2, _trip_result(1, 7, 7)): 1, (None, _trip_result(1, 12, 12)): 1},
            1: {(1, _trip_result(1, 25, 10)): 1, (2, _trip_result(1, 7, -3)): 1, (None, _trip_result(1, 12, 12)): 1},
            2: {(1, _trip_result(1, 10, 10)): 1, (2, _trip_result(1, 7, -3)): 1, (None, _trip_result(1, 12, 12)): 1},
        },
        printed="(004 prints the query's result on the 2018 taxi data; this small trip table has its shape: "
        "a NULL group, a negative fare, a retracted maximum)",
        since="final",
        notes="Version 1 retracts the trip that made distance 2 distinct; version 2 retracts the maximum fare.",
        reference=group_by_reference(
            ["passengers", "fare", "distance"], "passengers",
            {"min_fare": ("min", "fare"), "max_fare": ("max", "fare"),
             "distinct_distances": ("count_distinct", "distance")},
        ),
    ),
]

# -- 003 -----------------------------------------------------------------------

DOC_003 = "document 003"

def enrich(facts, users, addrs, agent):
    """003's facts enriched with users, addresses and sales agents, by a chain of LEFT JOINs."""
    return facts.left_join_chain([
        (users.map(lambda user: (user[0], user)), lambda row: row[0][1]),
        (addrs.map(lambda addr: (addr[0], addr)), lambda row: row[1][1] if row[1] else None),
        (agent.map(lambda zone: (zone[0], zone)), lambda row: row[2][1] if row[2] else None),
    ])


def three_hops(query: Any, links: Any, arranged: bool = True) -> Any:
    """003's identifiers three steps from each query, joining ``links`` three times (arranged once)."""
    return walks_of_three(query, links.arrange() if arranged else links)


EXAMPLES += [
    Example(
        name="three_hops_shared_links",
        source=f"{DOC_003}, 'Technique 1: Shared Arrangements': query joined with an arranged links three times",
        program=three_hops,
        inputs=[
            [("a", 0, 1), ("b", 1, 1)],
            [(("a", "b"), 0, 1), (("b", "c"), 0, 1), (("c", "d"), 0, 1), (("c", "e"), 0, 1), (("d", "a"), 0, 1),
             (("c", "e"), 2, -1)],
        ],
        # From a: a->b->c->{d, e}; from b (version 1 on): b->c->{d, e}->a (e has no links); version 2 drops c->e.
        expected={
            0: {("d", "a"): 1, ("e", "a"): 1},
            1: {("d", "a"): 1, ("e", "a"): 1, ("a", "b"): 1},
            2: {("d", "a"): 1, ("a", "b"): 1},
        },
        printed="(003 gives the program, not data; these links make each hop count)",
        since="final",
        reference=lambda inputs, at: run("v0", lambda q, links: three_hops(q, links, arranged=False), inputs, at),
    ),
    Example(
        name="enrichment_left_joins",
        source=f"{DOC_003}, 'Boss Battle: Left Outer Joins': facts LEFT JOIN users LEFT JOIN addrs LEFT JOIN agent",
        program=enrich,
        inputs=[
            [((1, 10), 0, 1), ((2, 11), 0, 1), ((3, None), 0, 1), ((4, 12), 0, 1)],
            [((10, 100), 0, 1), ((11, None), 0, 1), ((12, 101), 0, 1), ((12, 101), 2, -1)],
            [((100, "x"), 0, 1), ((101, "y"), 0, 1)],
            [(("x", "ann"), 0, 1), (("x", "ann"), 1, -1), (("y", "bob"), 1, 1)],
        ],
        expected={
            0: {((1, 10), (10, 100), (100, "x"), ("x", "ann")): 1, ((2, 11), (11, None), None, None): 1,
                ((3, None), None, None, None): 1, ((4, 12), (12, 101), (101, "y"), None): 1},
            1: {((1, 10), (10, 100), (100, "x"), None): 1, ((2, 11), (11, None), None, None): 1,
                ((3, None), None, None, None): 1, ((4, 12), (12, 101), (101, "y"), ("y", "bob")): 1},
            2: {((1, 10), (10, 100), (100, "x"), None): 1, ((2, 11), (11, None), None, None): 1,
                ((3, None), None, None, None): 1, ((4, 12), None, None, None): 1},
        },
        printed="(003 gives the SQL and the plan, not a result; these rows exercise each term: matches, "
        "absent keys, a NULL user_id, a NULL addr_id)",
        since="final",
        reference=enrichment_reference("LEFT JOIN"),
    ),
]

BY_NAME = {example.name: example for example in EXAMPLES}


@dataclass(frozen=True)
class Verdict:
    """A stage's output for one example, judged against the document and against from-scratch.

    A stage the example lists in ``limitations`` passes by being wrong as the
    document says: its documented output, where the document prints one, and
    not the from-scratch answer. Any other stage passes by giving ``expected``,
    which must also be the from-scratch answer.
    """

    document_ok: bool
    """The output is what the document says the stage outputs (true when it prints nothing for a limited stage)."""
    scratch_ok: bool
    """The output is the answer recomputed from scratch, at every version."""
    limitation: str | None
    """Why the document says the stage gets this example wrong, or None."""
    failures: tuple[str, ...]
    """What disagreed, one sentence each. Invariant: empty exactly when the stage passes."""

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """The verdict in a few words, as the tour prints it."""
        if self.limitation is not None:
            return "wrong, as the document says (known limitation)" if self.ok else "NOT the documented behaviour"
        document = "matches the document" if self.document_ok else "DIFFERS from the document"
        scratch = "matches from-scratch" if self.scratch_ok else "DIFFERS from from-scratch"
        return f"{document}, {scratch}"


def judge(example: Example, stage: str, result: Result, from_scratch: Result | None = None) -> Verdict:
    """Judge ``result``, ``stage``'s output for ``example``; ``from_scratch`` is computed when not given.

    The one place that decides whether a stage's output for an example is right:
    the tests, ``check_stage`` (the notebooks) and the tour all ask it.
    """
    if from_scratch is None:
        from_scratch = example.from_scratch()
    limitation = example.limitations.get(stage)
    scratch_ok = result == from_scratch
    failures = []
    if limitation is not None:
        documented = example.documented.get(stage)
        document_ok = documented is None or result == documented
        if not document_ok:
            failures.append(f"{example.name} on {stage}: {result} is not the documented output {documented}")
        if scratch_ok:
            failures.append(f"{example.name} was documented as wrong on {stage}, but is right")
    else:
        document_ok = result == example.expected
        if not document_ok:
            failures.append(f"{example.name} on {stage}: {result} != the document's {example.expected}")
        if not scratch_ok:
            failures.append(f"{example.name} on {stage}: {result} differs from from-scratch {from_scratch}")
    return Verdict(document_ok, scratch_ok, limitation, tuple(failures))


def check_stage(stage: str) -> list[str]:
    """Run every example on ``stage`` and ``judge`` it; one line of outcome each.

    Raises AssertionError on the first example the stage gets wrong (see ``Verdict``).
    """
    lines = []
    for example in EXAMPLES:
        if STAGES.index(stage) < STAGES.index(example.since):
            lines.append(f"skipped {example.name}: its operators arrive in {example.since}")
            continue
        try:
            result = run(stage, example.program, example.inputs, example.at)
        except NotImplementedError as missing:
            lines.append(f"skipped {example.name}: {missing}")
            continue
        verdict = judge(example, stage, result)
        assert verdict.ok, "; ".join(verdict.failures)
        outcome = f"limited {example.name}: {verdict.limitation}" if verdict.limitation else f"ok      {example.name}"
        lines.append(outcome)
    assert any(line.startswith(("ok", "limited")) for line in lines), f"no example ran on {stage}"
    return lines
