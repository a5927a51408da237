"""final's failure contract: nothing a mistake does leaves a graph that answers wrongly.

The contract (README, "Errors"): a call that gives the graph something
malformed (a record that cannot be hashed, a version the frontier has
passed) is refused, and changes nothing. Any error while stepping — a record
an operator cannot take, a function you gave an operator raised or returned
something malformed, a loop found no fixed point — reaches the caller naming
the operator and the version (a user's exception chained inside a
``FunctionError``), and the graph is broken: every further call that would
run it or feed it raises ``BrokenGraphError``, while its outputs still answer
for the versions they finished, which are right and agree with each other.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import final
from final import BrokenGraphError, DataflowError, FunctionError, GraphBuilder, GraphError, RecordError
from tests.harness import run
from tests.strategies import any_history


def build(program, inputs: int = 1, zero=0):
    """``(sessions, output, graph)``: ``program`` on fresh input sessions, its output kept."""
    builder = GraphBuilder(zero)
    streams, sessions = zip(*(builder.new_session() for _ in range(inputs)), strict=True)
    output = program(*streams).output()
    return list(sessions), output, builder.finalize()


def assert_broken(sessions, graph) -> None:
    """Every call that would run or feed the graph refuses, saying to build it again."""
    for call in (graph.step, graph.run, lambda: sessions[0].insert(("k", 1)), sessions[0].flush,
                 lambda: sessions[0].advance_to(100), lambda: graph.inputs[0].send_frontier(final.Version(100))):
        with pytest.raises(BrokenGraphError, match=r"failed earlier .* Build the graph again"):
            call()


def test_a_reduce_that_raises_for_one_key_breaks_the_graph_and_never_retracts_what_it_did_not_send() -> None:
    def picky(values):
        if any(value == "bad" for value, _ in values):
            raise ValueError("no bad values")
        return [(len(values), 1)]

    (session,), output, graph = build(lambda c: c.reduce(picky))
    session.insert(("a", 1))
    session.insert(("b", 1))
    session.advance_to(1)
    graph.run()
    session.insert(("a", "bad"))
    session.insert(("b", 2))
    session.advance_to(2)
    with pytest.raises(FunctionError, match=r"reduce #0 failed at version Version\(1\), key 'a': your function raised "
                                            r"ValueError: no bad values") as failure:
        graph.run()
    assert isinstance(failure.value.__cause__, ValueError)
    assert output.at(0) == {("a", 1): 1, ("b", 1): 1}  # what was finished is still there, and right
    assert not output.finished(1)
    assert all(multiplicity > 0 for multiplicity in output.snapshot().values())
    assert_broken([session], graph)


def test_max_over_a_group_holding_none_names_the_operator_and_breaks_the_graph() -> None:
    (session,), output, graph = build(lambda c: c.max())
    session.insert(("k", 3))
    session.insert(("other", 1))
    session.advance_to(1)
    graph.run()
    session.insert(("k", None))
    session.advance_to(2)
    with pytest.raises(RecordError, match=r"max( \+ map)? #\d+, .*max compares a key's values, but 3, None do not "
                                          r"compare.*use aggregate\(\)"):
        graph.run()
    assert output.at(0) == {("k", 3): 1, ("other", 1): 1}
    assert_broken([session], graph)


def test_a_map_fused_after_count_that_raises_names_both_and_leaves_no_wrong_count() -> None:
    def shout(pair):
        if pair[1] > 1:
            raise KeyError("too many")
        return pair

    (session,), output, graph = build(lambda c: c.map(lambda r: (r, ())).count().map(shout))
    session.insert("x")
    session.advance_to(1)
    graph.run()
    session.insert("x")
    session.advance_to(2)
    with pytest.raises(FunctionError, match=r"map \+ count \+ map #0 failed at version Version\(1\) on the record "
                                            r"\('x', 2\): your function raised KeyError"):
        graph.run()
    assert output.at(0) == {("x", 1): 1}
    assert_broken([session], graph)


def test_after_an_iteration_error_the_graph_refuses_instead_of_spinning() -> None:
    (session,), _, graph = build(lambda c: c.iterate(lambda x: x.map(lambda n: n + 1).distinct_keys(),
                                                     max_iterations=20))
    session.insert(0)
    session.advance_to(1)
    with pytest.raises(final.IterationError, match="did not converge at version Version\\(0\\) within 20"):
        graph.run()
    assert_broken([session], graph)


def test_a_record_an_operator_cannot_take_breaks_the_graph() -> None:
    """A record that is not a pair reaching a count breaks the graph: nothing of its version finishes."""
    (session,), output, graph = build(lambda c: c.count())
    session.insert(("k", 1))
    session.advance_to(1)
    graph.run()
    session.insert("not a pair")
    session.insert(("k", 2))
    session.advance_to(2)
    with pytest.raises(RecordError, match=r"count #0, at version Version\(1\): reduce needs \(key, value\) pairs, but "
                                          r"got the record 'not a pair'"):
        graph.run()
    assert output.at(0) == {("k", 1): 1}
    assert not output.finished(1)
    assert_broken([session], graph)


def test_two_outputs_of_one_input_never_disagree_at_a_finished_version() -> None:
    """Issue 20's case: a bad record beside a good one at a keyed operator. Neither output finishes the
    version, so none shows (1, 4) while the other does not; the version never finishes."""
    builder = GraphBuilder(0)
    a, session = builder.new_session("a")
    ident, counts = a.output("i"), a.count().output("c")
    graph = builder.finalize()
    session.insert((1, 2))
    session.advance_to(1)
    graph.run()
    session.insert(5)
    session.insert((1, 4))
    session.advance_to(2)
    with pytest.raises(RecordError, match=r"count #0.*got the record 5"):
        graph.run()
    with pytest.raises(BrokenGraphError):
        graph.run()
    for output in (ident, counts):
        assert output.finished(0) and not output.finished(1)
        with pytest.raises(final.VersionError, match=r"failed earlier \(RecordError in count #0\), so it never will"):
            output.at(1)
    assert ident.at(0) == {(1, 2): 1} and counts.at(0) == {(1, 1): 1}


@pytest.mark.parametrize(
    ("program", "records", "error", "match"),
    [
        (lambda c: c.reduce(lambda values: [(0.5, 1)] if False else [("half", 0.5)]), [("k", 1)], RecordError,
         r"reduce #0, at version Version\(0\), key 'k': a reduction returns \(value, multiplicity\) pairs with int "
         r"multiplicities, but returned \('half', 0.5\)"),
        (lambda c: c.reduce(lambda values: ["not a pair"]), [("k", 1)], RecordError,
         r"returned 'not a pair'"),
        (lambda c: c.reduce(lambda values: [([1], 1)]), [("k", 1)], RecordError, r"unhashable value \[1\]"),
        (lambda c: c.threshold(lambda m: m / 2), ["r"], RecordError,
         r"threshold's function must return an int multiplicity, but returned 0.5"),
        (lambda c: c.explode(lambda r: [(r, 0.5)]), ["r"], RecordError,
         r"explode's function must yield int multiplicities, but one came out as 0.5"),
        (lambda c: c.explode(lambda r: [r]), ["r"], RecordError,
         r"explode #0 failed|explode's function must yield \(value, multiplicity\) pairs, but yielded 'r'"),
        (lambda c: c.join_function(lambda r: [(r, 2, 0.5)]), ["r"], RecordError,
         r"join_function #0, .*yielded the multiplicity 0.5 for the record 'r'"),
        (lambda c: c.min(), [("k", 1), ("k", "one")], RecordError, r"min compares a key's values"),
        (lambda c: c.sum(), [("k", 1), ("k", None)], RecordError, r"sum #0, .*sum adds numbers, but the values"),
        (lambda c: c.map(lambda r: 1 / 0), ["r"], FunctionError,
         r"map #0 failed at version Version\(0\) on the record 'r': your function raised ZeroDivisionError"),
    ],
    ids=["reduce-float", "reduce-non-pair", "reduce-unhashable", "threshold-float", "explode-float",
         "explode-non-pair", "join-function-float", "min-mixed", "sum-none", "map-raises"],
)
def test_malformed_results_name_the_operator_and_break_the_graph(program, records, error, match) -> None:
    (session,), _, graph = build(program)
    for record in records:
        session.insert(record)
    session.advance_to(1)
    with pytest.raises(error, match=match):
        graph.run()
    assert_broken([session], graph)


@pytest.mark.parametrize(
    ("build_it", "error", "match"),
    [
        (lambda s: final.Collection(5), RecordError, r"built from a list of \(record, multiplicity\) pairs, not 5"),
        (lambda s: s.map(None), GraphError, r"map takes a function, not None"),
        (lambda s: s.reduce("count"), GraphError, r"reduce takes a function, not 'count'"),
        (lambda s: s.iterate(lambda x: x, max_iterations="10"), GraphError, r"max_iterations is a positive int, "
                                                                           r"not '10'"),
        (lambda s: s.iterate(lambda x: x, max_iterations=-1), GraphError, r"max_iterations is a positive int"),
        (lambda s: s.join_many([s], [(0, 1, 2)]), GraphError, r"a join_many constraint is \(i, key_i, j, key_j\)"),
        (lambda s: s.join_many([s], [(0, len, 5, len)]), GraphError, r"inputs i, j in 0..1"),
        (lambda s: s.join_many([s], "x"), GraphError, r"join_many takes a list of constraints"),
        (lambda s: s.aggregate(lambda r: r, {"x": ("median", len)}), GraphError, r"\['median'\] are not known"),
        (lambda s: s.aggregate(lambda r: r, {"x": "min"}), GraphError, r"dict of name -> \(kind, value function\)"),
        (lambda s: s.concat([1]), GraphError, r"concat takes a stream, not list"),
        (lambda s: s.output(""), GraphError, r"name is a non-empty string"),
    ],
    ids=["collection-int", "map-none", "reduce-str", "max-iterations-str", "max-iterations-negative",
         "constraint-short", "constraint-range", "constraints-str", "aggregate-kind", "aggregate-shape",
         "concat-list", "output-name"],
)
def test_building_mistakes_are_refused_at_once(build_it, error, match) -> None:
    builder = GraphBuilder(0)
    stream, _ = builder.new_session()
    with pytest.raises(error, match=match):
        build_it(stream)
    assert issubclass(error, DataflowError)


@pytest.mark.parametrize("budget", [0, -1, "3", 2.0, True])
def test_step_budgets_are_positive_ints(budget) -> None:
    (session,), _, graph = build(lambda c: c.count())
    with pytest.raises(GraphError, match=r"budget of at least 1 message per operator, or None"):
        graph.step(budget)
    session.insert(("k", 1))
    session.advance_to(1)
    graph.run()  # the refused call changed nothing


def test_count_distinct_does_not_count_null() -> None:
    """SQL's COUNT(DISTINCT v) skips NULL: a group whose values are all NULL counts 0."""
    (session,), output, graph = build(lambda c: c.count_distinct())
    for record in [(0, None), (1, None), (1, "x"), (1, "x"), (1, "y")]:
        session.insert(record)
    session.advance_to(1)
    session.remove((0, None))
    session.advance_to(2)
    graph.run()
    assert output.at(0) == {(0, 0): 1, (1, 2): 1}
    assert output.at(1) == {(1, 2): 1}


FAILING = "boom"
"""The value on which a randomly placed function raises."""


def injected(record):
    if record[1] == FAILING:
        raise RuntimeError("injected")
    return record


def reduce_injected(values):
    if any(value == FAILING for value, _ in values):
        raise RuntimeError("injected")
    return [(sum(multiplicity for _, multiplicity in values), 1)]


PROGRAMS = {
    "map": lambda c: c.map(injected).count(),
    "fused": lambda c: c.distinct().map(injected),
    "reduce": lambda c: c.reduce(reduce_injected),
    "loop": lambda c: c.iterate(lambda x: x.map(injected).distinct()),
}
"""Programs whose user function raises on a record ``(key, FAILING)``: in a map, fused after a
reduction, in a reduction, and inside a loop."""


@given(any_history, st.integers(0, 4), st.sampled_from(sorted(PROGRAMS)), st.integers(0, 2))
def test_injected_failures_leave_only_right_answers(history, failing_at, kind, key) -> None:
    """A random history, and a record on which the user's function raises arriving at a random version:
    fed version by version, every version the output finished is v0's from-scratch answer, and after
    the failure every call is refused."""
    program = PROGRAMS[kind]
    poisoned = [*history, ((key, FAILING), failing_at, 1)]
    (session,), output, graph = build(program)
    failure = None
    for version in range(6):
        for record, at, multiplicity in poisoned:
            if at == version:
                session.update(record, multiplicity)
        session.advance_to(version + 1)
        try:
            graph.run()
        except FunctionError as error:
            failure = error
            break
    assert failure is not None and str(failure.__cause__) == "injected"
    clean = [update for update in history if update[1] < failing_at]
    expected = run("v0", program, [clean])
    for version in range(6):
        assert output.finished(version) == (version < failing_at)
        if output.finished(version):
            earlier = [other for other in expected if other <= version]
            assert output.at(version) == (expected[max(earlier)] if earlier else {})
    assert_broken([session], graph)
