"""final's engine qualities: bounded work per step, progress reports, and quiet graphs.

Source: document 002's closing list ('Operators are
more careful to yield in a bounded amount of time').
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.harness import build_graph, stage_module
from tests.programs import BINARY, reachability

pairs = st.tuples(st.integers(0, 3), st.integers(0, 3))
history = st.lists(st.tuples(pairs, st.integers(0, 3), st.integers(-1, 2)), max_size=10)


def run_stepping(stage: str, program, inputs: list, budget: int | None) -> tuple[dict, int]:
    """Feed every version in order and step with ``budget`` until each is done; the output per version,
    and the most messages any single operator handled in one step."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    writers, reader, graph = build_graph(module, program, len(inputs))
    most = 0
    for operator in graph.operators:
        original = operator.run

        def counting(budget=None, original=original):
            nonlocal most
            handled = original(budget)
            most = max(most, handled)
            return handled

        operator.run = counting
    output: dict = {}
    versions = sorted({version for history_ in inputs for _, version, _ in history_})
    for version in versions:
        for writer, history_ in zip(writers, inputs, strict=True):
            writer.send_data(V(version), C([(r, m) for r, at, m in history_ if at == version]))
            writer.send_frontier(V(version + 1))
        for _ in range(10_000):
            if not reader.probe_frontier_less_than(V(version + 1)):
                break
            graph.step(budget)
        for message in reader.drain():
            if isinstance(message, module.DataMessage):
                difference = output.setdefault(version, {})
                for record, multiplicity in message.collection:
                    difference[record] = difference.get(record, 0) + multiplicity
    # A version whose messages add up to nothing has no output: how the work was split into messages
    # (which the budget changes) may leave an empty difference there or none at all.
    consolidated = {v: {r: m for r, m in d.items() if m} for v, d in output.items()}
    return {v: d for v, d in consolidated.items() if d}, most


@pytest.mark.since("final")
@pytest.mark.parametrize("name", ["join_then_sum", "three_way_join", "min_of_concat"])
@given(left=history, right=history, budget=st.integers(1, 3))
def test_a_work_budget_changes_when_work_happens_not_what_comes_out(
    stage: str, name: str, left: list, right: list, budget: int
) -> None:
    bounded, most = run_stepping(stage, BINARY[name], [left, right], budget)
    unbounded, _ = run_stepping(stage, BINARY[name], [left, right], None)
    assert bounded == unbounded
    assert most <= budget


@pytest.mark.since("final")
def test_loops_finish_under_a_budget_of_one_message(stage: str) -> None:
    roots = [(0, 0, 1), (0, 2, -1), (3, 1, 1)]
    edges = [((i, i + 1), 0, 1) for i in range(6)] + [((3, 0), 1, 1)]
    bounded, most = run_stepping(stage, reachability, [roots, edges], 1)
    unbounded, _ = run_stepping(stage, reachability, [roots, edges], None)
    assert bounded == unbounded and most == 1


@pytest.mark.since("final")
def test_progress_lists_every_operator_frontier(stage: str) -> None:
    """The map between the input and the count is fused into the count's input: one operator, named for both."""
    module = stage_module(stage)
    (writer,), _, graph = build_graph(module, lambda c: c.map(lambda r: (r, ())).count(), 1)
    writer.send_frontier(module.Version(3))
    while graph.step():
        pass
    names = [name for name, _ in graph.frontiers()]
    assert names == ["input input0", "map + count #0"]
    assert all(frontier == module.Antichain([module.Version(3)]) for _, frontier in graph.frontiers())
    assert graph.step() == 0  # quiet: nothing left to handle


@pytest.mark.since("final")
def test_frontiers_travel_as_changes(stage: str) -> None:
    """002's closing list: from [(1, 10), (2, 8), (4, 6), (6, 4), (8, 2)] to the same with (2, 9), the message
    says only 'replace (2, 8) with (2, 9)'. In final a reader hears of it when it drains."""
    module = stage_module(stage)
    V, A = module.Version, module.Antichain
    builder = module.GraphBuilder(V((0, 0)))
    stream, writer = builder.new_input()
    reader = stream.connect_reader()
    builder.finalize()
    before = A([V((1, 10)), V((2, 8)), V((4, 6)), V((6, 4)), V((8, 2))])
    after = A([V((1, 10)), V((2, 9)), V((4, 6)), V((6, 4)), V((8, 2))])
    writer.send_frontier(before)
    (first,) = reader.drain()
    writer.send_frontier(after)
    (second,) = reader.drain()
    assert len(first.added) == 5 and first.removed == (V((0, 0)),)
    assert (second.removed, second.added) == ((V((2, 8)),), (V((2, 9)),))
    assert A([V((0, 0))]).apply(first).apply(second) == after
    # The change means the same applied to any frontier holding (2, 8): it is a change, not a whole frontier.
    assert A([V((2, 8)), V((7, 0))]).apply(second) == A([V((2, 9)), V((7, 0))])
    assert list(reader.drain()) == []  # nothing moved since


@pytest.mark.since("final")
def test_frontier_moves_reach_every_operator_at_once(stage: str) -> None:
    """Fifty frontier advances sent before a step are no messages: the progress tracker works out each
    frontier from the input's pointstamps when asked, so the reader sees one change, to the last, whatever
    the budget, and the graph is quiet after one step."""
    module = stage_module(stage)
    V = module.Version

    def changes_seen(budget: int | None) -> list:
        (writer,), reader, graph = build_graph(module, lambda c: c.map(lambda r: (r, ())).count(), 1)
        for version in range(1, 51):
            writer.send_frontier(V(version))
        assert graph.step(budget) == 0
        return [(message.removed, message.added) for message in reader.drain()]

    assert changes_seen(None) == changes_seen(1) == [((V(0),), (V(50),))]


@pytest.mark.since("final")
def test_a_pipeline_of_operators_that_keep_nothing_back_holds_no_pointstamps(stage: str) -> None:
    """Only messages in flight and versions an operator keeps back count: after a version has gone
    through a map, a join and a count, only the inputs' frontiers are left, whatever the graph's size."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (left, right), reader, graph = build_graph(
        module, lambda a, b: a.join(b).map(lambda r: (r[0], r[1][0])).concat(a).count(), 2)
    for version in range(3):
        left.send_data(V(version), C([((version, "a"), 1)]))
        right.send_data(V(version), C([((version, "b"), 1)]))
        for writer in (left, right):
            writer.send_frontier(V(version + 1))
        while graph.step():
            pass
        assert graph.progress.held() == {"input input0": {V(version + 1): 1}, "input input1": {V(version + 1): 1}}
        assert not reader.probe_frontier_less_than(V(version + 1))
