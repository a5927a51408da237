"""Loops: v5 (and later) equal v0 from scratch on random histories; loops converge, end, and go quiet.

Sources: document 002, "v4: Multidimensional
versions", "v5/vFinal: Partially ordered versions" (the (version, iteration)
table, liveness) and document 001 (the fraud example).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.harness import (
    build_graph,
    join_closure,
    operators,
    run,
    run_messages,
    run_or_skip,
    stage_module,
)
from tests.programs import ITERATIVE, connected_components, doubling_to_fifty, reachability
from tests.strategies import edges_over, growing_graph, insert_then_retract, int_versions, roots_over, tuple_versions


def versions_to_check(inputs: list) -> list:
    """Input versions and all their joins: where outputs of partially ordered inputs can change."""
    return join_closure({version for history in inputs for _, version, _ in history})


@pytest.mark.since("v5")
@pytest.mark.parametrize("kind", ["int", "tuple"])
@given(data=st.data())
def test_reachability_equals_from_scratch(stage: str, kind: str, data: st.DataObject) -> None:
    versions = int_versions if kind == "int" else tuple_versions
    inputs = [data.draw(roots_over(versions)), data.draw(edges_over[kind])]
    at = versions_to_check(inputs)
    assert run_or_skip(stage, reachability, inputs, at) == run("v0", reachability, inputs, at)


@pytest.mark.since("v5")
@pytest.mark.parametrize("kind", ["int", "tuple"])
@given(data=st.data())
def test_connected_components_equal_from_scratch(stage: str, kind: str, data: st.DataObject) -> None:
    inputs = [data.draw(edges_over[kind])]
    at = versions_to_check(inputs)
    assert run_or_skip(stage, connected_components, inputs, at) == run("v0", connected_components, inputs, at)


def _distinct(collection):
    return collection.map(lambda n: (n, ())).distinct().map(lambda pair: pair[0])


def nested_loops(numbers):
    """A loop inside a loop: the inner one closes a set under n -> min(n + 1, 6), the outer under n -> 2n mod 7."""
    return numbers.iterate(
        lambda outer: _distinct(
            _distinct(outer).iterate(lambda inner: _distinct(inner.map(lambda n: min(n + 1, 6)).concat(inner)))
            .map(lambda n: n * 2 % 7)
            .concat(outer)
        )
    )


NUMBER_LOOPS = {
    "geometric_series": (doubling_to_fifty, st.integers(1, 13)),
    "nested_loops": (nested_loops, st.integers(0, 6)),
}
"""Loops over numbers: 002's geometric series, and a loop inside a loop (versions three or four coordinates deep)."""


@pytest.mark.since("v5")
@pytest.mark.parametrize("kind", ["int", "tuple"])
@pytest.mark.parametrize("name", sorted(NUMBER_LOOPS))
@given(data=st.data())
def test_loops_over_numbers_equal_from_scratch(stage: str, name: str, kind: str, data: st.DataObject) -> None:
    program, numbers = NUMBER_LOOPS[name]
    versions = int_versions if kind == "int" else tuple_versions
    inputs = [data.draw(insert_then_retract(numbers, versions))]
    at = versions_to_check(inputs)
    assert run_or_skip(stage, program, inputs, at) == run("v0", program, inputs, at)


@pytest.mark.since("v5")
@pytest.mark.parametrize("name", sorted(ITERATIVE))
@given(data=st.data())
def test_loops_fed_one_version_at_a_time_equal_from_scratch(stage: str, name: str, data: st.DataObject) -> None:
    """As a user drives a loop: send a version, step until the output has passed it, then the next.

    The other loop tests send whole histories before the loops finish; here
    each version's loop must end, on its own, before the next version starts.
    """
    draw = {
        "reachability": lambda: [data.draw(roots_over(int_versions)), data.draw(edges_over["int"])],
        "connected_components": lambda: [data.draw(edges_over["int"])],
        "doubling_to_fifty": lambda: [data.draw(insert_then_retract(st.integers(1, 13), int_versions))],
    }
    inputs = draw[name]()
    accumulated: dict = {}
    by_version: dict = {}
    for version, difference in run_messages(stage, ITERATIVE[name], inputs):
        for record, multiplicity in difference.items():
            accumulated[record] = accumulated.get(record, 0) + multiplicity
        by_version[version] = {record: m for record, m in accumulated.items() if m}
    expected = run("v0", ITERATIVE[name], inputs)
    for version in sorted(expected):
        latest = max((v for v in by_version if v <= version), default=None)
        assert by_version.get(latest, {}) == expected[version], f"at version {version}"


@pytest.mark.since("v4")
@given(data=st.data())
def test_loops_on_inputs_that_only_grow_equal_from_scratch(stage: str, data: st.DataObject) -> None:
    """002, v4: lexicographic loops are right while records are only ever added."""
    inputs = data.draw(growing_graph())
    assert run(stage, reachability, inputs) == run("v0", reachability, inputs)


@pytest.mark.since("v5")
@given(history=insert_then_retract(st.integers(1, 13), int_versions))
def test_version_iteration_table(stage: str, history: list) -> None:
    """002's table: the loop's differences at all (v', i') <= (v, i) add up to f applied i times to A[v]."""
    module = stage_module(stage)

    def step(collection):
        return (collection.map(lambda n: n * 2).concat(collection).filter(lambda n: n <= 50)
                .map(lambda n: (n, ())).distinct().map(lambda pair: pair[0]))

    readers = []
    program = lambda numbers: numbers.iterate(lambda inner: (readers.append(inner.connect_reader()), step(inner))[1])  # noqa: E731
    run(stage, program, [history])
    differences: dict = {}
    for message in readers[0].drain():
        if isinstance(message, module.DataMessage):
            difference = differences.setdefault(message.version.coords, {})
            for record, multiplicity in message.collection:
                difference[record] = difference.get(record, 0) + multiplicity
    for (version, iteration) in differences:
        accumulated: dict = {}
        for (v, i), difference in differences.items():
            if v <= version and i <= iteration:
                for record, multiplicity in difference.items():
                    accumulated[record] = accumulated.get(record, 0) + multiplicity
        expected = module.Collection([(record, m) for record, at, m in history if at <= version])
        for _ in range(iteration):
            expected = step(expected)
        assert {r: m for r, m in accumulated.items() if m} == expected.as_dict()


@pytest.mark.since("v4")
def test_noop_body_converges_in_two_iterations(stage: str) -> None:
    """002, liveness: two maps that cancel, negated and added back: the loop stops after iterations 0 and 1."""
    module = stage_module(stage)
    seen = []

    def body(inner):
        return inner.map(lambda d: d + 1).map(lambda d: d - 1).negate().concat(inner).debug(
            "body", sink=lambda line: seen.append(line))

    (writer,), reader, graph = build_graph(module, lambda c: c.iterate(body), 1)
    writer.send_data(module.Version(0), module.Collection([(1, 1)]))
    writer.send_frontier(module.Version(1))
    for _ in range(20):
        if not reader.probe_frontier_less_than(module.Version(1)):
            break
        graph.step()
    assert not reader.probe_frontier_less_than(module.Version(1))
    iterations = {line.split("version: Version((0, ")[1][0] for line in seen if "data:" in line}
    assert iterations == {"0", "1"}


def count_sends(graph) -> list[int]:
    """Make every operator's output count what it sends; returns the counter."""
    counter = [0]
    for operator in operators(graph):
        # v3..v5's operators send through the writer's public methods; final's through _send, _advance, _forward.
        for name in ("send_data", "send_frontier", "_send", "_advance", "_forward"):
            original = getattr(operator.output, name, None)
            if original is None:
                continue

            def counting(*args, original=original):
                counter[0] += 1
                return original(*args)

            setattr(operator.output, name, counting)
    return counter


@pytest.mark.since("v3")
@pytest.mark.parametrize("program", ["reachability", "geometric", "acyclic"])
def test_graph_goes_quiet_after_inputs_stop(stage: str, program: str) -> None:
    """002, liveness: once inputs stop, the graph finishes within a step budget and then sends nothing more."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    if program != "acyclic" and stage == "v3":
        pytest.skip("v3: iterate needs versions with an iteration coordinate (stage v4)")
    if program == "acyclic":
        (left, right), reader, graph = build_graph(
            module, lambda a, b: a.join(b).map(lambda r: (r[0], r[1][0])).count().concat(a.distinct()), 2)
        left.send_data(V(0), C([((i % 3, i), 1) for i in range(10)]))
        right.send_data(V(0), C([((i % 3, -i), 1) for i in range(5)]))
        writers = [left, right]
    elif program == "reachability":
        (roots, edges), reader, graph = build_graph(module, reachability, 2)
        roots.send_data(V(0), C([(0, 1)]))
        edges.send_data(V(0), C([((i, i + 1), 1) for i in range(10)]))
        writers = [roots, edges]
    else:
        (numbers,), reader, graph = build_graph(module, doubling_to_fifty, 1)
        numbers.send_data(V(0), C([(1, 1), (3, 1)]))
        writers = [numbers]
    for writer in writers:
        writer.send_frontier(V(1))
    for steps in itertools.count():
        assert steps < 200, "the loop did not finish within 200 steps"
        if not reader.probe_frontier_less_than(V(1)):
            break
        graph.step()
    for writer in writers:
        writer.send_frontier(V(2))
    for _ in range(50):
        graph.step()
    counter = count_sends(graph)
    for _ in range(10):
        graph.step()
    assert counter[0] == 0, f"{counter[0]} messages sent after the inputs stopped"


@pytest.mark.since("v4")
def test_a_loop_that_never_converges_raises(stage: str) -> None:
    module = stage_module(stage)
    (writer,), _, graph = build_graph(
        module, lambda c: c.iterate(lambda x: x.map(lambda n: n + 1), max_iterations=20), 1)
    writer.send_data(module.Version(0), module.Collection([(0, 1)]))
    writer.send_frontier(module.Version(1))
    with pytest.raises(module.IterationError, match=r"did not converge .* within 20 iterations"):
        for _ in range(100):
            graph.step()


@pytest.mark.since("v4")
def test_streams_of_two_loops_do_not_mix(stage: str) -> None:
    module = stage_module(stage)
    builder = module.GraphBuilder(module.Version(0))
    source, _ = builder.new_input()
    first, second = [], []
    source.iterate(lambda x: (first.append(x), x.distinct())[1])
    source.iterate(lambda x: (second.append(x), x.distinct())[1])
    with pytest.raises(module.GraphError, match="another loop it is not nested in"):
        first[0].concat(second[0])
