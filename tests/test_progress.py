"""final's progress tracker: path summaries, pointstamp counts, and frontiers worked out from them.

The tracker (``final.progress``) replaces v3..v5's frontier messages. What it
must keep: a frontier never passes a version data can still arrive at (the
harness checks every output message against the frontier it was read under,
in every property test), every version finishes once nothing can reach it
any more, and what it counts follows what is really queued and held back.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from final import Antichain, GraphBuilder, GraphError, Version
from final.operators import Concat, CountInPlace, Egress, Feedback, Ingress, Reduce, SumInPlace, ThresholdInPlace
from final.progress import SUMMARY_KINDS, Summary
from tests.programs import reachability_sessions


def through(version: tuple[int, ...], kinds: list[str]) -> tuple[int, ...] | None:
    """``version`` taken through operators whose summaries are ``kinds``, one at a time, as along a path;
    None if one truncates the last coordinate."""
    for kind in kinds:
        if kind == "extend":
            version = (*version, 0)
        elif kind == "truncate":
            if len(version) == 1:
                return None
            version = version[:-1]
        elif kind == "increment":
            version = (*version[:-1], version[-1] + 1)
    return version


@given(st.lists(st.sampled_from(SUMMARY_KINDS), max_size=8), st.lists(st.integers(0, 5), min_size=1, max_size=3))
def test_a_summary_does_what_its_operators_do(kinds: list[str], coords: list[int]) -> None:
    expected = through(tuple(coords), kinds)
    if expected is None:
        return  # a path never leaves the top-level scope
    summary = Summary(len(coords))
    for kind in kinds:
        summary = summary.followed_by(kind)
    assert summary.apply(Version(tuple(coords))) == expected
    if summary.identity:  # a summary that says it changes nothing changes nothing
        assert expected == tuple(coords)


@given(st.lists(st.sampled_from(["identity", "increment"]), max_size=4),
       st.lists(st.sampled_from(["identity", "increment"]), max_size=4))
def test_summaries_compare_as_the_versions_they_give(first: list[str], second: list[str]) -> None:
    """``less_equal`` holds exactly when the first summary gives a version <= the second's for every version."""
    summaries = []
    for kinds in (first, second):
        summary = Summary(1).followed_by("extend")
        for kind in kinds:
            summary = summary.followed_by(kind)
        summaries.append(summary)
    below = all(summaries[0].apply(Version(v)).less_equal(summaries[1].apply(Version(v))) for v in range(4))
    assert summaries[0].less_equal(summaries[1]) == below


def test_the_summary_around_a_loop_adds_one_iteration() -> None:
    """From a loop's feedback back to itself: one more iteration; out of the loop through egress: the version."""
    builder = GraphBuilder(0)
    numbers, _ = builder.new_session("numbers")
    numbers.iterate(lambda x: x.map(lambda n: n + 1).filter(lambda n: n < 5).distinct_keys()).output("out")
    graph = builder.finalize()
    (feedback,) = [operator for operator in graph.operators if operator.name == "feedback"]
    (egress,) = [operator for operator in graph.operators if operator.name == "egress"]
    around = graph.progress.reach(feedback.output.location)[feedback.inputs[0].location]
    assert [summary.apply(Version((3, 2))) for summary in around] == [Version((3, 2))]
    through = graph.progress.reach(feedback.inputs[0].location)[feedback.inputs[0].location]
    assert {summary.apply(Version((3, 2))) for summary in through} == {Version((3, 2))}  # the empty path
    out = graph.progress.reach(feedback.inputs[0].location)[egress.output.location]
    assert [summary.apply(Version((3, 2))) for summary in out] == [Version(3)]


def back_through_concat(builder: GraphBuilder, head: Any, back: Any) -> None:
    head.add_operator(Concat, "concat", [head], output=back.writer)


def back_through_a_loop_left_again(builder: GraphBuilder, head: Any, back: Any) -> None:
    """Into a loop scope, one iteration on, and out again: the iteration added is dropped with the coordinate."""
    scope = builder.new_scope(head.scope)
    inside = head.add_operator(Ingress, "ingress", scope=scope)
    fed_back = inside.add_operator(Feedback, "feedback", arguments=(10,))
    fed_back.add_operator(Egress, "egress", scope=head.scope, output=back.writer)


@pytest.mark.parametrize("close", [back_through_concat, back_through_a_loop_left_again])
def test_a_cycle_that_does_not_advance_versions_is_refused(close) -> None:
    """Timely's reachability builder checks the same (``is_acyclic``): a version sent around such a cycle would
    hold itself back at the head forever, so finalize refuses the graph and names the cycle."""
    builder = GraphBuilder(0)
    numbers, _ = builder.new_session("numbers")
    back = numbers.stream_of(builder.new_writer(numbers.scope), numbers.scope)
    head = numbers.concat(back)
    close(builder, head, back)
    head.output("out")
    with pytest.raises(GraphError, match=r"a cycle that does not advance versions: concat #0 -> .* -> concat #0\. "
                                         r".* build loops with iterate"):
        builder.finalize()


edge_lives = st.lists(st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 3)), st.integers(0, 3),
                                 st.one_of(st.none(), st.integers(1, 3))), max_size=8)
"""Edges ``(edge, from, for how long)``: each in the graph from a version on, and for a while or for good."""


@given(edge_lives, st.integers(1, 3))
def test_nothing_is_held_once_the_inputs_close(lives: list, budget: int) -> None:
    """Every message handled, every version finished: no pointstamp is left anywhere, every frontier is empty,
    and while it runs no count is ever zero or below."""
    roots, edges, reached, graph = reachability_sessions()
    for edge, start, length in lives:
        edges.update_at(edge, start, 1)
        if length is not None:
            edges.update_at(edge, start + length, -1)
    roots.insert(0)
    roots.close()
    edges.close()
    while graph.step(budget):
        counts = graph.progress.held()
        assert all(count > 0 for versions in counts.values() for count in versions.values()), counts
    assert graph.progress.held() == {}
    assert all(frontier == Antichain([]) for _, frontier in graph.frontiers())
    assert reached.frontier == Antichain([])


def test_an_operator_that_keeps_nothing_back_holds_nothing() -> None:
    """A map or a join never holds a capability: after a version, only the inputs' frontiers are counted."""
    builder = GraphBuilder(0)
    left, left_session = builder.new_session("left")
    right, right_session = builder.new_session("right")
    left.join(right).map(lambda pair: pair[1]).output("joined")
    graph = builder.finalize()
    left_session.insert(("k", 1))
    right_session.insert(("k", 2))
    for session in (left_session, right_session):
        session.advance_to(1)
    assert graph.progress.held() == {"input left": {Version(1): 1}, "input right": {Version(1): 1},
                                     "join + map #0 input 0": {Version(0): 1}, "join + map #0 input 1": {Version(0): 1}}
    assert graph.run() == 1  # no loop: one step reaches everything
    assert graph.progress.held() == {"input left": {Version(1): 1}, "input right": {Version(1): 1}}


def test_step_returns_zero_exactly_when_the_graph_is_quiet() -> None:
    roots, edges, reached, graph = reachability_sessions()
    roots.insert(0)
    for edge in [(0, 1), (1, 2), (2, 3)]:
        edges.insert(edge)
    roots.advance_to(1)
    edges.advance_to(1)
    roots.flush()
    edges.flush()
    steps = 0
    while graph.step():
        steps += 1
    assert steps > 3  # at least one step per iteration of version 0
    assert reached.at(0) == {0: 1, 1: 1, 2: 1, 3: 1}
    assert graph.step() == 0 and graph.run() == 0


@pytest.mark.parametrize(("program", "kind"), [
    (lambda c: c.count(), CountInPlace), (lambda c: c.sum(), SumInPlace), (lambda c: c.distinct(), ThresholdInPlace),
    (lambda c: c.threshold(lambda m: m), ThresholdInPlace), (lambda c: c.arrange().count(), Reduce),
])
def test_reductions_change_their_state_in_place_outside_loops(program, kind) -> None:
    """004's in-place reductions wherever versions have one coordinate and no shared arrangement is read;
    inside a loop, the general Reduce."""
    builder = GraphBuilder(0)
    stream, _ = builder.new_session()
    program(stream).output()
    stream.iterate(lambda x: program(x.map(lambda r: r)).map(lambda r: r)).output()
    graph = builder.finalize()
    outside = [operator for operator in graph.operators if graph.scope_of(operator).depth == 0]
    inside = [operator for operator in graph.operators if graph.scope_of(operator).depth == 1]
    assert any(type(operator) is kind for operator in outside)
    assert not any(type(operator) in (CountInPlace, SumInPlace, ThresholdInPlace) for operator in inside)
    assert any(type(operator) is Reduce for operator in inside)
