"""final as a library: input sessions, ``graph.run()``, outputs read at a version, names and reprs.

Each program is checked against v0 computing every version from scratch
(``tests.harness.run``), so the driving API is held to the same answers as
the writer-level one.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import final
from final import FrontierError, GraphBuilder, GraphError, RecordError, VersionError
from tests.harness import run
from tests.programs import reachability_sessions
from tests.strategies import any_history


def word_count(sentences):
    return sentences.flat_map(str.split).map(lambda word: (word, ())).count()


def test_word_count_over_changing_sentences() -> None:
    builder = GraphBuilder(0)
    sentences, session = builder.new_session("sentences")
    counts = word_count(sentences).output("counts")
    graph = builder.finalize()
    session.insert("the cat sat")
    session.insert("the dog")
    session.advance_to(1)
    session.remove("the dog")
    session.insert("a dog sat")
    session.advance_to(2)
    graph.run()
    assert counts.changes(0) == {("the", 2): 1, ("cat", 1): 1, ("sat", 1): 1, ("dog", 1): 1}
    # "dog" leaves with one sentence and comes back with another: no (dog, -1), (dog, +1) pair.
    assert counts.changes(1) == {("the", 2): -1, ("the", 1): 1, ("sat", 1): -1, ("sat", 2): 1, ("a", 1): 1}
    expected = run("v0", word_count, [[("the cat sat", 0, 1), ("the dog", 0, 1), ("the dog", 1, -1),
                                       ("a dog sat", 1, 1)]])
    assert counts.at(0) == expected[0] and counts.at(1) == expected[1] == counts.snapshot()
    assert counts.versions() == [final.Version(0), final.Version(1)]


@given(any_history)
def test_sessions_give_what_v0_computes_from_scratch(history: list) -> None:
    """Any history, fed version by version through a session (out of order within a version's turn
    via ``update_at``), reads back at every version as v0 computes it."""
    program = lambda c: c.map(lambda r: (r[0], r[1] * 2)).distinct().count()  # noqa: E731
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    output = program(stream).output()
    graph = builder.finalize()
    versions = sorted({version for _, version, _ in history})
    for record, version, multiplicity in history:  # in the order given: later versions first is fine
        session.update_at(record, version, multiplicity)
    session.close()
    graph.run()
    expected = run("v0", program, [history])
    for version in versions:
        assert output.at(version) == expected[version]


def test_a_thousand_changes_at_one_version_travel_as_one_collection() -> None:
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    seen = stream.connect_reader()
    output = stream.map(lambda r: (r % 10, ())).count().output()
    graph = builder.finalize()
    for record in range(1000):
        session.insert(record)
    session.insert(5)
    session.remove(5)  # cancels inside the buffer: never sent
    session.advance_to(1)
    messages = list(seen.drain())
    data = [message for message in messages if isinstance(message, final.DataMessage)]
    assert len(data) == 1 and len(data[0].collection) == 1000
    graph.run()
    assert output.at(0) == {(digit, 100): 1 for digit in range(10)}


def test_versions_may_be_plain_ints_and_tuples() -> None:
    builder = GraphBuilder((0, 0))
    stream, session = builder.new_session("pairs")
    output = stream.map(lambda r: (r, ())).count().output()
    graph = builder.finalize()
    session.update_at("couch", (1, 0), 1)
    session.update_at("couch", (0, 1), 1)
    session.close()
    graph.run()
    assert output.at((1, 1)) == {("couch", 2): 1}
    assert output.at((1, 0)) == output.at(final.Version((0, 1))) == {("couch", 1): 1}
    # The difference at (1, 1) takes away what both (1, 0) and (0, 1) added (001, Moebius inversion).
    assert output.changes((1, 1)) == {("couch", 2): 1, ("couch", 1): -2}


def test_reachability_with_deletions() -> None:
    root_session, edge_session, reached, graph = reachability_sessions()
    root_session.insert(1)
    for edge in [(1, 2), (2, 3), (3, 4), (5, 6)]:
        edge_session.insert(edge)
    for session in (root_session, edge_session):
        session.advance_to(1)
    edge_session.remove((2, 3))
    edge_session.insert((1, 5))
    for session in (root_session, edge_session):
        session.advance_to(2)
    graph.run()
    assert reached.at(0) == {1: 1, 2: 1, 3: 1, 4: 1}
    assert reached.changes(1) == {3: -1, 4: -1, 5: 1, 6: 1}


def test_reading_an_unfinished_version_names_the_input_holding_it_open() -> None:
    """Forgetting to advance one input does not spin: run() returns when the graph is quiet, and reading
    the version says which input is behind."""
    builder = GraphBuilder(0)
    left, left_session = builder.new_session("left")
    right, right_session = builder.new_session("right")
    joined = left.join(right).output("joined")
    graph = builder.finalize()
    left_session.insert(("k", 1))
    right_session.insert(("k", 2))
    left_session.advance_to(1)
    assert graph.run() < 10
    assert not joined.finished(0)
    with pytest.raises(VersionError, match=r"output 'joined' has not finished version Version\(0\).*input 'right'"):
        joined.at(0)
    with pytest.raises(VersionError, match="input 'right'"):
        joined.changes(0)
    right_session.advance_to(1)
    graph.run()
    assert joined.at(0) == {("k", (1, 2)): 1}
    assert [name for name, _ in graph.frontiers()] == ["input left", "input right", "join #0", "output joined"]


def test_a_callback_per_finished_version_in_order() -> None:
    seen: list = []
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    stream.map(lambda r: (r, ())).count().output(on_version=lambda version, changes: seen.append((version, changes)))
    graph = builder.finalize()
    session.update_at("b", 2, 1)
    session.update_at("a", 0, 1)
    session.update_at("a", 1, 1)
    session.update_at("c", 1, 1)
    session.update_at("c", 1, -1)  # no change at all for c
    session.advance_to(3)
    graph.run()
    V = final.Version
    assert seen == [(V(0), {("a", 1): 1}), (V(1), {("a", 1): -1, ("a", 2): 1}), (V(2), {("b", 1): 1})]


def test_a_raising_callback_leaves_the_output_as_it_was() -> None:
    calls: list = []

    def callback(version, changes):
        calls.append(version)
        if version == final.Version(0):
            raise ValueError("not this one")

    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    output = stream.output("raw", on_version=callback)
    graph = builder.finalize()
    session.update_at("a", 0, 1)
    session.update_at("b", 1, 1)
    session.advance_to(2)
    with pytest.raises(final.FunctionError, match=r"output 'raw'.s callback raised ValueError: not this one"):
        graph.run()
    assert output.at(1) == {"a": 1, "b": 1}  # the delivery went on: version 1 was announced too
    assert calls == [final.Version(0), final.Version(1)]


def test_reading_an_output_runs_no_callback_the_graph_delivers_them() -> None:
    """A read takes in what has arrived (an input read straight, here, before any step), and the callbacks wait
    for the graph to deliver the version."""
    calls: list = []
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    output = stream.output("raw", on_version=lambda version, changes: calls.append((version, changes)))
    graph = builder.finalize()
    session.update_at("a", 0, 1)
    session.advance_to(1)
    session.flush()
    assert output.finished(0) and output.at(0) == {"a": 1} and output.frontier == final.Antichain([final.Version(1)])
    assert calls == []
    graph.run()
    assert calls == [(final.Version(0), {"a": 1})]


def test_every_callback_runs_though_some_raise_and_the_first_failure_is_raised() -> None:
    def failing(version, changes):
        raise ValueError(f"no {changes}")

    seen: list = []
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    stream.output("first", on_version=failing)
    stream.output("second", on_version=failing)
    stream.output("third", on_version=lambda version, changes: seen.append(version))
    graph = builder.finalize()
    session.update_at("a", 0, 1)
    session.update_at("b", 1, 1)
    session.advance_to(2)
    first = r"output 'first'.s callback raised ValueError: no \{'a': 1\}"
    with pytest.raises(final.FunctionError, match=first) as caught:
        graph.run()
    notes = caught.value.__notes__
    assert any("'first'" in note and "no {'b': 1}" in note for note in notes)
    assert any("'second'" in note for note in notes)
    assert seen == [final.Version(0), final.Version(1)]
    graph.run()  # nothing is left to announce, and the graph is not broken
    assert seen == [final.Version(0), final.Version(1)]


def test_session_misuse_is_refused() -> None:
    builder = GraphBuilder(0)
    _, session = builder.new_session("words")
    with pytest.raises(GraphError, match="the name 'words' is taken"):
        builder.new_session("words")
    with pytest.raises(RecordError, match=r"must be an int multiplicity, not 0.5"):
        session.update("a", 0.5)
    with pytest.raises(RecordError, match=r"input 'words' got the unhashable record \['a'\]"):
        session.insert(["a"])
    session.advance_to(3)
    with pytest.raises(FrontierError, match=r"input 'words' cannot go back"):
        session.advance_to(2)
    with pytest.raises(VersionError, match=r"at Version\(1\), but its frontier is already"):
        session.update_at("a", 1, 1)
    with pytest.raises(VersionError, match="has 2 coordinates"):
        session.update_at("a", (4, 0), 1)
    session.close()
    with pytest.raises(FrontierError, match="has no current version: it is closed"):
        session.insert("late")


def test_a_frontier_moved_by_the_writer_past_buffered_changes_refuses_them() -> None:
    """Changes a session holds are sent through the writer's checks: no internal assertion can fire."""
    builder = GraphBuilder(0)
    _, session = builder.new_session("words")
    graph = builder.finalize()
    session.insert("early")
    graph.inputs[0].send_frontier(final.Version(5))
    with pytest.raises(VersionError, match=r"data sent at Version\(0\), but the frontier is already"):
        session.flush()


def test_run_says_when_the_graph_does_not_go_quiet() -> None:
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    stream.iterate(lambda c: c.map(lambda x: x + 1).distinct_keys(), max_iterations=10_000).output()
    graph = builder.finalize()
    session.insert(0)
    session.advance_to(1)
    with pytest.raises(GraphError, match=r"not quiet after 50 steps; still busy: .*Raise max_steps"):
        graph.run(max_steps=50)


def test_outputs_and_readers_only_outside_loops() -> None:
    builder = GraphBuilder(0)
    stream, _ = builder.new_session()
    inside: list = []

    def body(c):
        inside.append(c.map(lambda x: x))
        with pytest.raises(GraphError, match="take the output of the stream iterate returns"):
            c.output()
        return inside[0]

    stream.iterate(body)
    with pytest.raises(GraphError, match="reads a stream built inside an iterate body, after the loop was built"):
        inside[0].map(lambda x: x)
    with pytest.raises(GraphError, match="after the loop was built"):
        inside[0].connect_reader()


def test_readable_reprs() -> None:
    assert repr(final.Version(0)) == "Version(0)" and repr(final.Version((1, 2))) == "Version((1, 2))"
    A, V = final.Antichain, final.Version
    message = final.FrontierMessage(A([V((0, 1)), V((1, 0))]), A([V((1, 1))]))
    assert repr(message) == "FrontierMessage({(0, 1), (1, 0)} -> {(1, 1)})"
    assert repr(final.FrontierMessage(A([V(0)]), A([]))) == "FrontierMessage({0} -> {})"


def test_reading_an_unfinished_version_names_only_the_inputs_upstream() -> None:
    """Issue 20: an input the output does not read is never blamed; with data still queued the advice is to
    run the graph; a version no pointstamp holds back is finished, run or not."""
    builder = GraphBuilder(0)
    alpha, alpha_session = builder.new_session("alpha")
    builder.new_session("unrelated")
    out = alpha.map(lambda x: x).output("o")
    graph = builder.finalize()
    with pytest.raises(VersionError, match=r"input 'alpha' \(frontier .*\) still allows it: advance it past") as held:
        out.at(3)
    assert "unrelated" not in str(held.value)
    alpha_session.insert("early")
    alpha_session.advance_to(5)
    with pytest.raises(VersionError, match=r"has not finished version Version\(3\).*run the graph \(graph.run\(\)\)"):
        out.at(3)
    graph.run()
    assert out.at(3) == {"early": 1} and out.at(4) == out.at(3)
    with pytest.raises(VersionError, match=r"input 'alpha'"):
        out.at(5)


def test_the_graph_shows_its_shape() -> None:
    """The public view: operators in topological order, inputs and outputs by name, edges, scopes."""
    *_, output, graph = reachability_sessions()
    assert [writer.name for writer in graph.inputs] == ["roots", "edges"] and graph.outputs == (output,)
    numbers = {id(operator): operator.number for operator in graph.operators}
    assert [operator.number for operator in graph.operators] == list(range(len(graph.operators)))
    for source, target in graph.edges():
        if id(source) in numbers and id(target) in numbers and source.name != "feedback":
            assert numbers[id(source)] < numbers[id(target)]  # topological, but for the loop's way back
    depths = {operator.name: graph.scope_of(operator).depth for operator in graph.operators}
    assert depths["ingress"] == depths["join"] == depths["feedback"] == 1 and depths["egress"] == 0
    (feedback,) = [operator for operator in graph.operators if operator.name == "feedback"]
    entries = [operator for operator in graph.operators if operator.summary == "extend"]  # into the loop
    assert sorted(entry.name for entry in entries) == ["enter", "enter", "ingress"]
    upstream = graph.progress.upstream(feedback.inputs[0].location)
    assert all(entry.output.location in upstream for entry in entries)
    assert (graph.operators[-1], output) in graph.edges()


@pytest.mark.parametrize("initial", [0, (0, 0), final.Version(0), final.Antichain([final.Version((0, 1))])])
def test_graph_builder_takes_plain_versions(initial) -> None:
    builder = GraphBuilder(initial)
    _, session = builder.new_session()
    assert session.frontier.elements[0] == (initial.elements[0] if isinstance(initial, final.Antichain)
                                            else final.Version(initial))


@given(st.integers(1, 5))
def test_budgeted_runs_give_the_same_answers(budget: int) -> None:
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    output = word_count(stream).output()
    graph = builder.finalize()
    for version in range(4):
        session.insert(f"w{version} w{version % 2}")
        session.advance_to(version + 1)
    session.flush()
    while graph.step(budget):
        pass
    assert output.at(3) == {("w0", 3): 1, ("w1", 3): 1, ("w2", 1): 1, ("w3", 1): 1}
