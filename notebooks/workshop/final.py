"""Helpers the three final notebooks share: feeding a program's histories, answers from scratch, loops watched.

The documents' examples (``tests.examples``) write a program's input as one
history per input, a list of ``(record, version, multiplicity)``. ``feed``
sends such histories through ``final``'s input sessions and runs the graph
(``feed_graph`` also gives the graph, for its operators and its picture);
``run`` reads the output at every input version, and ``from_scratch`` gives
v0's answer at the same versions, so a notebook can assert that the two agree;
``raises`` returns the exception a call must raise, and ``plot_over_versions``
draws a result's records as they come and go.
``reachability`` is the loop the final3 notebook watches, and the
``head_frontiers_*`` functions record its loop head's frontier step by step
in ``final`` and in v5, the stage before it; the ``retract_minimum_*``
functions time ``min`` in both when a large group's minimum is retracted, and
``groups_by_round`` sizes the groups of 004's rounds.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt

import final
import v0  # the oracle: it computes every version from scratch
import v5  # for comparison only: the stage before final
from final.conformance import drive
from final.conformance.versions import sort_key
from final.operators.aggregate import BITS_PER_ROUND, HASH_BITS

Update = tuple[Any, Any, int]
"""``(record, version, multiplicity)``: one change of an input; a version is an int or a tuple of ints."""

History = list[Update]
"""One input's changes, as the documents' examples (``tests.examples``) write them."""

Result = dict[Any, dict[Any, int]]
"""What a program's output holds at each version: version -> {record: multiplicity}."""


def versions_of(histories: Iterable[History]) -> list[Any]:
    """The versions at which any of ``histories`` changes, in order."""
    return sorted({version for history in histories for _, version, _ in history}, key=sort_key)


def build(program: Callable[..., Any], inputs: int | Sequence[str] = 1,
          zero: Any = 0) -> tuple[list[Any], Any, Any]:
    """``(sessions, output, graph)``: ``program`` built on fresh input sessions, its result kept; ``inputs`` is
    how many, or their names (the graph's picture shows them)."""
    builder = final.GraphBuilder(zero)
    names = [None] * inputs if isinstance(inputs, int) else list(inputs)
    streams, sessions = zip(*(builder.new_session(name) for name in names), strict=True)
    output = program(*streams).output("result")
    return list(sessions), output, builder.finalize()


def feed_graph(program: Callable[..., Any], histories: list[History],
               names: Sequence[str] | None = None) -> tuple[Any, Any]:
    """``program`` run on one input per history (named ``names``, when given), each change sent and every input
    closed: its ``Output`` and the finished graph."""
    first = versions_of(histories)[0]
    zero = tuple(0 for _ in first) if isinstance(first, tuple) else 0
    sessions, output, graph = build(program, names or len(histories), zero)
    for session, history in zip(sessions, histories, strict=True):
        for record, version, multiplicity in history:
            session.update_at(record, version, multiplicity)
        session.close()  # no more changes, ever: every version is finished
    graph.run()
    return output, graph


def feed(program: Callable[..., Any], histories: list[History]) -> Any:
    """``program`` run on one input per history, each change sent and every input closed: its ``Output``."""
    return feed_graph(program, histories)[0]


def run(program: Callable[..., Any], histories: list[History], at: Iterable[Any] | None = None) -> Result:
    """``program``'s output on ``histories`` at every input version (or at each of ``at``)."""
    output = feed(program, histories)
    return {version: output.at(version) for version in (at if at is not None else versions_of(histories))}


def changes(output: Any) -> dict[int, dict[Any, int]]:
    """The output's consolidated change at each version where it changed, by int version."""
    return {version[0]: output.changes(version) for version in output.versions()}


def from_scratch(program: Callable[..., Any], histories: list[History], versions: Iterable[Any]) -> Result:
    """v0's answer: ``program`` applied at each of ``versions`` to every input as it stands there (the oracle's
    own from-scratch run, ``final.conformance.drive.from_scratch``)."""
    return drive.from_scratch(v0, program, histories, list(versions))


def kinds(graph: Any) -> Counter:
    """How many operators of each name (what the program called: ``join``, ``min``, ...) a finished graph runs."""
    return Counter(operator.name for operator in graph.operators)


def show(result: Mapping[Any, Mapping[Any, int]]) -> None:
    """Print a result (version -> {record: multiplicity}), one version per line."""
    for version in sorted(result):
        print(f"version {version}: {sorted(result[version].items(), key=repr)}")


def show_table(result: Result, columns: Sequence[str], width: int = 12) -> None:
    """Print a result whose records are tuples as a table per version, a column per part, None as NULL (one row
    per record: for results that hold each record once)."""
    for version in sorted(result):
        print(f"version {version}")
        for row in [columns, *sorted(result[version], key=repr)]:
            print("  " + " ".join(f"{'NULL' if part is None else str(part):<{width}}" for part in row))


def raises(error: type[Exception], call: Callable[[], Any]) -> Exception:
    """The exception ``call()`` raises, which must be an ``error``: an AssertionError if it returns instead."""
    try:
        call()
    except error as raised:
        return raised
    raise AssertionError(f"{error.__name__} expected, but the call returned")


def plot_over_versions(result: Result, records: Iterable[Any], title: str) -> Any:
    """One step line per record of ``records``: its multiplicity in ``result`` (version -> {record:
    multiplicity}, int versions) from each version to the next; return the figure."""
    versions = sorted(result)
    figure, axis = plt.subplots(figsize=(10, 4))
    for record in records:
        axis.step(versions, [result[version].get(record, 0) for version in versions], where="post",
                  label=repr(record))
    axis.set_xlabel("version")
    axis.set_ylabel("multiplicity")
    axis.set_title(title)
    axis.legend(title="record", ncol=3, fontsize="small")
    figure.tight_layout()
    return figure


def reachability(roots: Any, edges: Any, watch: Callable[[Any], None] | None = None,
                 body_outputs: list[Any] | None = None) -> Any:
    """Every node reachable from ``roots`` along ``(source, target)`` edges, on any stage with ``iterate``.

    ``watch`` is given the loop head's stream; a reader of the body's output is
    appended to ``body_outputs``.
    """

    def body(reached: Any) -> Any:
        if watch is not None:
            watch(reached)
        result = (
            reached.map(lambda node: (node, ())).join(edges).map(lambda pair: pair[1][1])
            .concat(roots)
            .map(lambda node: (node, ())).distinct().map(lambda pair: pair[0])
        )
        if body_outputs is not None:
            body_outputs.append(result.connect_reader())
        return result

    return roots.iterate(body)


def head_frontiers_final(length: int, extra_edge: tuple[int, int]) -> tuple[list[list[tuple]], list[tuple], Any]:
    """final: reachability from 0 along the path ``0 -> ... -> length`` at version 0, ``extra_edge`` at version 1.

    Returns the loop head's frontier after each step while version 1 settles
    (each a list of plain tuples), the ``(version, iteration)`` pairs at which
    the body's output changed, and the graph, stepped to the end.
    """
    heads: list[Any] = []
    body_outputs: list[Any] = []
    builder = final.GraphBuilder(0)
    roots, root_session = builder.new_session("roots")
    edges, edge_session = builder.new_session("edges")
    reachability(roots, edges, watch=lambda head: heads.append(head.connect_reader()),
                 body_outputs=body_outputs).output("reached")
    graph = builder.finalize()
    (head,), (body_output,) = heads, body_outputs
    root_session.insert(0)
    for i in range(length):
        edge_session.insert((i, i + 1))
    for session in (root_session, edge_session):
        session.advance_to(1)
    graph.run()
    edge_session.insert(extra_edge)
    for session in (root_session, edge_session):
        session.advance_to(2)
    frontiers = []
    while graph.step():  # what graph.run() does, one step at a time
        frontiers.append([tuple(element) for element in head.frontier.elements])
    changed = sorted({tuple(message.version) for message in body_output.drain()
                      if isinstance(message, final.DataMessage)})
    return frontiers, changed, graph


def head_frontiers_v5(length: int, extra_edge: tuple[int, int]) -> list[list[tuple]]:
    """v5, on the same input as ``head_frontiers_final``: the loop head's frontier after each step of version 1.

    v5 has no sessions and no ``run()``: it is driven with document 002's API
    (a writer sending collections and frontiers) and stepped until its
    output's frontier has passed the version, never more steps than running
    until quiet would take.
    """
    builder = v5.GraphBuilder(v5.Version(0))
    (roots, root_writer), (edges, edge_writer) = builder.new_input(), builder.new_input()
    heads: list[Any] = []
    reader = reachability(roots, edges, watch=lambda head: heads.append(head.connect_reader())).connect_reader()
    graph = builder.finalize()
    (head,) = heads

    def settle(version: int) -> list[list[tuple]]:
        for writer in (root_writer, edge_writer):
            writer.send_frontier(v5.Version(version + 1))
        frontiers = []
        while reader.probe_frontier_less_than(v5.Version(version + 1)):
            graph.step()
            frontiers.append([element.coords for element in head.frontier.elements])
        return frontiers

    root_writer.send_data(v5.Version(0), v5.Collection([(0, 1)]))
    edge_writer.send_data(v5.Version(0), v5.Collection([((i, i + 1), 1) for i in range(length)]))
    settle(0)
    edge_writer.send_data(v5.Version(1), v5.Collection([(extra_edge, 1)]))
    return settle(1)


def table_at(history: History, version: int) -> dict[Any, int]:
    """One input's table as it stands at int ``version``: each record with its total multiplicity, zeros dropped."""
    totals: Counter = Counter()
    for record, at, multiplicity in history:
        if at <= version:
            totals[record] += multiplicity
    return {record: total for record, total in totals.items() if total}


def left_join_from_scratch(left: History, right: History, version: int) -> dict[Any, int]:
    """SQL's ``left LEFT JOIN right`` of two ``(key, value)`` tables as they stand at ``version``.

    A left record that matches nothing is padded with None (NULL); a None key
    matches nothing, not even a None key on the right.
    """
    result: Counter = Counter()
    right_table = table_at(right, version)
    for (key, value), m in table_at(left, version).items():
        matches = [(other, n) for (k, other), n in right_table.items() if key is not None and k == key]
        for other, n in matches or [(None, 1)]:
            result[(key, (value, other))] += m * n
    return {record: m for record, m in result.items() if m}


def own_indexes(graph: Any) -> int:
    """How many join inputs are indexed by the join itself rather than read through a shared arrangement."""
    return sum(arrangement is None for operator in graph.operators if operator.name == "join"
               for arrangement in operator.arrangements)


def retract_minimum_final(n: int, retractions: int = 5) -> tuple[list[dict], float, float]:
    """final: one group of the values ``0 .. n - 1``, its minimum retracted ``retractions`` times over.

    Returns what ``min``'s output announced at each finished version (one
    consolidated change each), the seconds loading took, and the median
    seconds of one retraction.
    """
    announced: list[dict] = []
    builder = final.GraphBuilder(0)
    pairs, session = builder.new_session("pairs")
    pairs.min().output("minimum", on_version=lambda version, changes: announced.append(changes))
    graph = builder.finalize()

    start = time.perf_counter()
    for value in range(n):
        session.insert(("group", value))
    session.advance_to(1)
    graph.run()
    load = time.perf_counter() - start
    seconds = []
    for version in range(1, retractions + 1):
        start = time.perf_counter()
        session.remove(("group", version - 1))
        session.advance_to(version + 1)
        graph.run()
        seconds.append(time.perf_counter() - start)
    return announced, load, statistics.median(seconds)


def retract_minimum_v5(n: int, retractions: int = 5) -> tuple[list[list[dict]], float, float]:
    """The same on v5, whose ``min()`` is a plain ``reduce`` over the whole group, driven by a writer and a reader.

    Returns the data messages' collections at each version instead of an
    output's changes, then the load and median retraction seconds.
    """
    builder = v5.GraphBuilder(v5.Version(0))
    pairs, writer = builder.new_input()
    reader = pairs.min().connect_reader()
    graph = builder.finalize()

    def settle(version: int) -> list[dict]:
        writer.send_frontier(v5.Version(version + 1))
        while reader.probe_frontier_less_than(v5.Version(version + 1)):
            graph.step()
        return [message.collection.as_dict() for message in reader.drain() if isinstance(message, v5.DataMessage)]

    start = time.perf_counter()
    writer.send_data(v5.Version(0), v5.Collection([(("group", value), 1) for value in range(n)]))
    outputs = [settle(0)]
    load = time.perf_counter() - start
    seconds = []
    for version in range(1, retractions + 1):
        start = time.perf_counter()
        writer.send_data(v5.Version(version), v5.Collection([(("group", version - 1), -1)]))
        outputs.append(settle(version))
        seconds.append(time.perf_counter() - start)
    return outputs, load, statistics.median(seconds)


def groups_by_round(values: Iterable[Any]) -> list[tuple[int, int, int]]:
    """004's rounds (``final.operators.aggregate.hierarchical``) on one key's ``values``: for each round, its
    shift, how many groups it reduces, and the most inputs one group reduces.

    A round's inputs are the values themselves in the first round, then one
    result per group of the round before. The last round, at shift
    ``HASH_BITS``, groups every value together: it is the round by key.
    """
    inputs = [hash(value) & ((1 << HASH_BITS) - 1) for value in set(values)]
    rows = []
    for shift in range(BITS_PER_ROUND, HASH_BITS + 1, BITS_PER_ROUND):
        groups = Counter(bucket >> BITS_PER_ROUND for bucket in inputs)
        rows.append((shift, len(groups), max(groups.values())))
        inputs = list(groups)
    return rows
