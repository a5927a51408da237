"""final's joins beyond ``join`` (003) against from-scratch: Python for semi/antijoins, sqlite3 for LEFT JOINs.

Source: document 003. NULL is ``None``: a NULL key
never matches, and a left record without a match comes out padded with ``None``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.examples import enrich
from tests.harness import join_closure, less_equal, run
from tests.sql import accumulated, enrichment_reference, sqlite_rows
from tests.strategies import table

keys = st.one_of(st.none(), st.integers(0, 3))
enrichment_tables = st.tuples(
    table(st.tuples(st.integers(0, 5), keys)),  # facts (id, user_id)
    table(st.tuples(st.integers(0, 3), keys)),  # users (id, addr_id)
    table(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.sampled_from("xyz")))),  # addrs (id, zipcode)
    table(st.tuples(st.sampled_from("xyz"), st.sampled_from(["ann", "bob"]))),  # agent (zipcode, name)
).map(list)


def all_versions(*histories: list) -> list:
    return sorted({version for history in histories for _, version, _ in history})


@pytest.mark.since("final")
@given(left=table(st.tuples(st.integers(0, 3), st.integers(0, 3))), right=table(st.integers(0, 3)))
def test_semijoin_and_antijoin(stage: str, left: list, right: list) -> None:
    """semijoin keeps records whose key is present (times its multiplicity); antijoin keeps the rest."""
    versions_ = all_versions(left, right)
    semi, anti = {}, {}
    for version in versions_:
        records, present = accumulated(left, version), accumulated(right, version)
        semi[version] = {r: m * present[r[0]] for r, m in records.items() if present[r[0]]}
        distinct_present = {key for key, m in present.items() if m > 0}
        anti[version] = {r: m for r, m in records.items() if r[0] not in distinct_present}
    assert run(stage, lambda a, b: a.semijoin(b), [left, right], versions_) == semi
    assert run(stage, lambda a, b: a.antijoin(b.distinct_keys()), [left, right], versions_) == anti


@pytest.mark.since("final")
@given(left=table(st.tuples(keys, st.integers(0, 2))), right=table(st.tuples(keys, st.integers(5, 7))))
def test_left_join_equals_sql(stage: str, left: list, right: list) -> None:
    versions_ = all_versions(left, right)
    expected = {}
    for version in versions_:
        rows = sqlite_rows(
            {"l": (["k", "v"], accumulated(left, version)), "r": (["k", "w"], accumulated(right, version))},
            "SELECT l.k, l.v, r.w FROM l LEFT JOIN r ON l.k = r.k",
        )
        expected[version] = {(k, (v, w)): count for (k, v, w), count in rows.items()}
    assert run(stage, lambda a, b: a.left_join(b), [left, right], versions_) == expected


@pytest.mark.since("final")
@given(tables=enrichment_tables)
def test_multiway_left_join_equals_sql(stage: str, tables: list) -> None:
    """003's enrichment as a multi-way LEFT JOIN, with missing keys and NULL keys, equals SQL at every version."""
    histories = tables
    versions_ = all_versions(*histories)
    assert run(stage, enrich, histories, versions_) == enrichment_reference("LEFT JOIN")(histories, versions_)


def enrich_binary(facts, users, addrs, agent):
    """003's enrichment as a sequence of binary joins (NULL keys dropped first: they match nothing)."""
    step = facts.filter(lambda f: f[1] is not None).map(lambda f: (f[1], (f,)))
    # After each join, the key of the next: the user's addr_id, then the address's zipcode.
    for other, key_of in ((users, lambda row: row[1][1]), (addrs, lambda row: row[2][1]), (agent, None)):
        keyed = other.filter(lambda record: record[0] is not None).map(lambda record: (record[0], record))
        step = step.join(keyed).map(lambda pair: (*pair[1][0], pair[1][1]))
        if key_of is not None:
            step = step.map(lambda row, key_of=key_of: (key_of(row), row)).filter(lambda pair: pair[0] is not None)
        else:
            step = step.map(lambda row: (None, row))
    return step.map(lambda pair: pair[1])


def enrich_delta(facts, users, addrs, agent):
    """003's enrichment as one delta join over the four inputs."""
    return facts.join_many(
        [users, addrs, agent],
        [
            (0, lambda fact: fact[1], 1, lambda user: user[0]),
            (1, lambda user: user[1], 2, lambda addr: addr[0]),
            (2, lambda addr: addr[1], 3, lambda zone: zone[0]),
        ],
    )


@pytest.mark.since("final")
@given(tables=enrichment_tables)
def test_delta_join_equals_binary_joins_and_sql(stage: str, tables: list) -> None:
    """003: the enrichment as binary joins and as a delta join, both equal to SQL's inner join."""
    histories = tables
    versions_ = all_versions(*histories)
    expected = enrichment_reference("JOIN")(histories, versions_)
    assert run(stage, enrich_delta, histories, versions_) == expected
    assert run(stage, enrich_binary, histories, versions_) == expected


@pytest.mark.since("final")
def test_delta_join_arranges_only_its_inputs(stage: str) -> None:
    """003: six arrangements for the four-way enrichment, all of inputs, none of intermediate results."""
    from tests.harness import build_graph, stage_module

    module = stage_module(stage)
    _, _, graph = build_graph(module, enrich_delta, 4)
    (delta,) = [operator for operator in graph.operators if operator.name == "join_many"]
    assert delta.arranged_inputs == [0, 1, 1, 2, 2, 3]


@pytest.mark.since("final")
def test_join_many_refuses_unconnected_inputs(stage: str) -> None:
    from tests.harness import build_graph, stage_module

    module = stage_module(stage)
    with pytest.raises(module.GraphError, match=r"inputs \[2\] are not"):
        build_graph(module, lambda a, b, c: a.join_many([b, c], [(0, lambda r: r, 1, lambda r: r)]), 3)


def three_hops_plain(query, links):
    from tests.examples import three_hops

    return three_hops(query, links, arranged=False)


@pytest.mark.since("final")
def test_three_hops_build_one_arrangement_of_links(stage: str) -> None:
    """003: 'we are able to re-use the links arrangement at no cost': one arrangement, three joins reading it."""
    from tests.examples import three_hops
    from tests.harness import build_graph, stage_module

    _, _, graph = build_graph(stage_module(stage), three_hops, 2)
    names = [operator.name for operator in graph.operators]
    assert names.count("arrange") == 1 and names.count("join") == 3
    (arrange,) = [operator for operator in graph.operators if operator.name == "arrange"]
    joins = [operator for operator in graph.operators if operator.name == "join"]
    # Every join reads links (its second input) through the one arrangement, and indexes none of its own.
    assert all(join.arrangements[1] is arrange.arrangement for join in joins)
    assert all(join.indexes(1)[0] is joins[0].indexes(1)[0] for join in joins)


pairs = st.tuples(st.integers(0, 3), st.integers(0, 3))


@st.composite
def histories(draw: st.DrawFn, count: int) -> list:
    """``count`` histories over one kind of version (ints, or pairs), with retractions and negative totals."""
    versions_ = st.integers(0, 3) if draw(st.booleans()) else st.tuples(st.integers(0, 2), st.integers(0, 2))
    return [draw(st.lists(st.tuples(pairs, versions_, st.integers(-1, 2)), max_size=8)) for _ in range(count)]


ARRANGED_PROGRAMS = {
    "right_arranged": lambda a, b: a.join(b.arrange()),
    "both_arranged": lambda a, b: a.arrange().join(b.arrange()),
    "self_join": lambda a, b: (lambda s: s.join(s))(a.arrange()),
    "shared_by_three": lambda a, b: (lambda s: a.join(s).concat(b.join(s)).concat(s.join(a)))(b.arrange()),
    "three_hops": lambda a, b: three_hops_plain(a.map(lambda pair: pair[0]), b.arrange()),
}


@pytest.mark.since("final")
@pytest.mark.parametrize("name", sorted(ARRANGED_PROGRAMS))
@given(inputs=histories(2))
def test_joins_reading_arrangements_equal_from_scratch(stage: str, name: str, inputs: list) -> None:
    """A shared arrangement changes how a join finds records, never what it outputs, at any version."""
    at = join_closure({version for history in inputs for _, version, _ in history})
    assert run(stage, ARRANGED_PROGRAMS[name], inputs, at) == run("v0", _unarranged(name), inputs, at)


def _unarranged(name: str):
    return {
        "right_arranged": lambda a, b: a.join(b),
        "both_arranged": lambda a, b: a.join(b),
        "self_join": lambda a, b: a.join(a),
        "shared_by_three": lambda a, b: a.join(b).concat(b.join(b)).concat(b.join(a)),
        "three_hops": lambda a, b: three_hops_plain(a.map(lambda pair: pair[0]), b),
    }[name]


@pytest.mark.since("final")
def test_arrangement_stays_small_under_churn(stage: str) -> None:
    """Compaction: 500 versions of updates to the same live data leave the arrangement as small as after one."""
    from tests.harness import build_graph, stage_module

    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (left, right), reader, graph = build_graph(module, lambda a, b: a.join(b.arrange()), 2)
    arrange = next(operator for operator in graph.operators if operator.name == "arrange")
    current = {key: key for key in range(20)}
    right.send_data(V(0), C([((key, value), 1) for key, value in current.items()]))
    sizes = []
    for version in range(500):
        key = version % 20
        right.send_data(V(version), C([((key, version), 1), ((key, current[key]), -1)]))
        current[key] = version
        for writer in (left, right):
            writer.send_frontier(V(version + 1))
        graph.step()
        list(reader.drain())
        sizes.append(arrange.arrangement.size())
    assert max(sizes[100:]) <= 1.5 * sizes[20]


def half_join_reference(inputs: list, at: list) -> dict:
    """From scratch: each stream update ((k, a), t, m) joined with the other input accumulated at t, at t."""
    stream, other = inputs
    result = {}
    for version in at:
        totals: dict = {}
        for (key, value), t, m in stream:
            if less_equal(t, version):
                for (other_key, other_value), m_b in accumulated_signed(other, t).items():
                    if other_key == key:
                        record = (key, (value, other_value))
                        totals[record] = totals.get(record, 0) + m * m_b
        result[version] = {record: total for record, total in totals.items() if total}
    return result


def accumulated_signed(history: list, version) -> dict:
    totals: dict = {}
    for record, t, m in history:
        if less_equal(t, version):
            totals[record] = totals.get(record, 0) + m
    return {record: total for record, total in totals.items() if total}


@pytest.mark.since("final")
@pytest.mark.parametrize("arranged", [False, True])
@given(inputs=histories(2))
def test_half_join_equals_from_scratch(stage: str, arranged: bool, inputs: list) -> None:
    """003's half_join: stream updates look up the other input at their own version; its changes alone add nothing."""
    at = join_closure({version for history in inputs for _, version, _ in history})
    program = (lambda a, b: a.half_join(b.arrange())) if arranged else (lambda a, b: a.half_join(b))
    assert run(stage, program, inputs, at) == half_join_reference(inputs, at)
