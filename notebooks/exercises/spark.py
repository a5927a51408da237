"""Checkers for the exercises of ``spark_pipeline.ipynb``: SQL's NULLs at a version, a query in ``final/``, a fault.

The exercises are about one tiny change log of taxi trips, ``TRIPS_LOG``,
written in Delta Lake's change data feed convention as the pipeline reads it
(``final.spark.changelog``). The checkers need no Spark: the SQL answers are
computed here in plain Python from scratch (``table_at``, ``fare_totals_at``,
``fares_at``), and the notebook checks, with Spark SQL, that these plain
answers are Spark's. ``final/`` runs through the pipeline's own
``IncrementalQuery`` and its rows are compared with the pipeline's ``compare``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from workshop import Wrong, exercise

from final import DifferenceStreamBuilder
from final.spark.changelog import MULTIPLICITIES
from final.spark.incremental import IncrementalQuery, versions_of
from final.spark.pipeline import Difference, compare
from final.spark.tables_and_queries import Query

FIRST_PICKUP = datetime(2018, 1, 1)
"""Trip ``n`` is picked up ``n`` minutes after this and dropped off ten minutes later: times play no part here."""


def trip(trip_id: int, passenger_count: int | None, fare: str | None) -> tuple:
    """A record of the pipeline's ``trips`` table: ``(trip_id, passenger_count, fare_amount, trip_distance,
    pickup_datetime, dropoff_datetime)``, with ``None`` for NULL and the fare as an exact ``Decimal``."""
    pickup = FIRST_PICKUP + timedelta(minutes=trip_id)
    return (trip_id, passenger_count, None if fare is None else Decimal(fare), 1.5, pickup,
            pickup + timedelta(minutes=10))


TRIPS_LOG = [
    # (record, _change_type, _commit_version)
    (trip(1, 1, "10.00"), "insert", 0),
    (trip(2, 1, None), "insert", 0),
    (trip(3, None, "4.00"), "insert", 0),
    (trip(4, 2, None), "insert", 0),
    (trip(5, 3, "8.00"), "insert", 0),
    (trip(1, 1, "10.00"), "update_preimage", 1),   # trip 1's fare corrected: 10.00 -> 12.50
    (trip(1, 1, "12.50"), "update_postimage", 1),
    (trip(6, None, "6.00"), "insert", 1),
    (trip(3, None, "4.00"), "delete", 2),
    (trip(5, 3, "8.00"), "delete", 2),
    (trip(2, 1, None), "update_preimage", 2),       # trip 2 moves from 1 passenger to 2
    (trip(2, 2, None), "update_postimage", 2),
    (trip(7, 2, "-3.00"), "insert", 3),             # a refund
    (trip(6, None, "6.00"), "delete", 3),
]
"""Four versions of a trips table: NULL passenger counts (a group of their own), NULL fares, a
correction, a trip changing group, deletions that empty a group, and a refund."""

VERSIONS = sorted({version for _, _, version in TRIPS_LOG})

PASSENGER_COUNT, FARE = 1, 2
"""Positions of the columns the queries read in a trip record."""


def updates(log: Iterable[tuple[tuple, str, int]] = TRIPS_LOG) -> list[tuple[int, str, tuple, int]]:
    """The log as the pipeline's updates ``(version, "trips", record, multiplicity)``, in version order."""
    found = [(version, "trips", record, MULTIPLICITIES[change]) for record, change, version in log]
    return sorted(found, key=lambda update: update[0])


def table_at(version: int, log: Iterable[tuple[tuple, str, int]] = TRIPS_LOG) -> Counter:
    """The trips table at ``version``, from scratch: each record whose multiplicities up to it add up to n > 0."""
    held: Counter = Counter()
    for at, _, record, multiplicity in updates(log):
        if at <= version:
            held[record] += multiplicity
    return Counter({record: copies for record, copies in held.items() if copies > 0})


def _groups(table: Counter) -> dict[Any, list]:
    """The trips of ``table`` by passenger count (``None`` included: GROUP BY makes NULL a group)."""
    groups: dict[Any, list] = {}
    for record, copies in table.items():
        groups.setdefault(record[PASSENGER_COUNT], []).extend([record] * copies)
    return groups


def fare_totals_at(version: int) -> dict[Any, tuple]:
    """``SELECT passenger_count, COUNT(*), COUNT(fare_amount), SUM(fare_amount) FROM trips GROUP BY
    passenger_count`` at ``version``, by SQL's rules: COUNT(*) counts rows, COUNT and SUM skip NULL
    fares, the SUM of no fares is NULL, and a group without rows has no row."""
    totals = {}
    for group, trips in _groups(table_at(version)).items():
        fares = [record[FARE] for record in trips if record[FARE] is not None]
        totals[group] = (len(trips), len(fares), sum(fares) if fares else None)
    return totals


PREDICTED_VERSION = 2
"""The version exercise 1 asks about."""


def _group_name(group: Any) -> str:
    return "the NULL group" if group is None else f"group {group}"


def _trips_in(group: Any, version: int) -> str:
    trips = sorted(record for record in table_at(version) if record[PASSENGER_COUNT] == group)
    return ", ".join(f"trip {record[0]} (fare {'NULL' if record[FARE] is None else record[FARE]})"
                     for record in trips)


@exercise
def null_totals(answer: Any) -> None:
    """The learner's prediction of the GROUP BY of ``fare_totals_at`` at version 2, as
    ``{passenger_count: (COUNT(*), COUNT(fare_amount), SUM(fare_amount))}`` with ``None`` for NULL."""
    version = PREDICTED_VERSION
    expected = fare_totals_at(version)
    if not isinstance(answer, dict):
        raise Wrong(f"give a dict {{passenger_count: (COUNT(*), COUNT(fare_amount), SUM(fare_amount))}}, "
                    f"not {type(answer).__name__}: {answer!r}")
    for group, row in answer.items():
        if not isinstance(row, tuple) or len(row) != 3:
            raise Wrong(f"{_group_name(group)}: give a tuple of three values (COUNT(*), COUNT(fare_amount), "
                        f"SUM(fare_amount)), not {row!r}")
    for group in expected:
        if group not in answer:
            why = ("NULL is a group of its own in GROUP BY: the trips whose passenger_count is NULL "
                   "are counted together" if group is None else "it still has trips")
            raise Wrong(f"{_group_name(group)} is missing from your answer; at version {version} it holds "
                        f"{_trips_in(group, version)}, so SQL gives it a row: {why}")
    for group in answer:
        if group not in expected:
            raise Wrong(f"you gave {_group_name(group)} the row {answer[group]}, but at version {version} it "
                        f"holds no trip (its trips were deleted or moved to another group): a group without "
                        f"rows has no row at all in GROUP BY's result, not a row of zeros or NULLs")
    for group, want in expected.items():
        got = answer[group]
        trips = _trips_in(group, version)
        if got[0] != want[0]:
            raise Wrong(f"{_group_name(group)}: you gave COUNT(*) = {got[0]}, SQL gives {want[0]}; the group "
                        f"holds {trips} at version {version}, and COUNT(*) counts rows, NULL fares included")
        if got[1] != want[1]:
            raise Wrong(f"{_group_name(group)}: you gave COUNT(fare_amount) = {got[1]}, SQL gives {want[1]}; the "
                        f"group holds {trips}, and COUNT of a column skips the rows where it is NULL")
        if want[2] is None and got[2] is not None:
            raise Wrong(f"{_group_name(group)}: you gave SUM(fare_amount) = {got[2]!r}, SQL gives NULL (None); "
                        f"the group holds {trips}: a SUM over no non-NULL values is NULL, not 0 (004's "
                        f"second state: rows, but no non-NULL values)")
        if got[2] != want[2]:
            raise Wrong(f"{_group_name(group)}: you gave SUM(fare_amount) = {got[2]!r}, SQL gives {want[2]}; the "
                        f"group holds {trips} at version {version}: add its non-NULL fares, after the "
                        f"corrections and deletions up to that version")


def fares_at(version: int) -> dict[Any, tuple]:
    """``SELECT passenger_count, COUNT(fare_amount), MAX(fare_amount) FROM trips GROUP BY passenger_count``
    at ``version`` by SQL's rules: NULL fares skipped, MAX of no fares NULL, NULL passenger count a group."""
    found = {}
    for group, trips in _groups(table_at(version)).items():
        fares = [record[FARE] for record in trips if record[FARE] is not None]
        found[group] = (len(fares), max(fares) if fares else None)
    return found


FARES_SQL = "SELECT passenger_count, COUNT(fare_amount), MAX(fare_amount) FROM trips GROUP BY passenger_count"


def as_query(build: Callable[[DifferenceStreamBuilder], DifferenceStreamBuilder]) -> Query:
    """``build`` (trips stream -> stream of ``(passenger_count, count, max)`` rows) as a pipeline query over
    the trips table, with ``FARES_SQL`` as its from-scratch side."""
    return Query(name="fares", dataset="trips", inputs=("trips",), columns=("passenger_count", "fares", "max_fare"),
                 build=build, sql=FARES_SQL, source="exercise 2 of the Spark pipeline notebook")


def run_incrementally(query: Query, fed: list[tuple[int, str, tuple, int]]) -> dict[int, dict[tuple, int]]:
    """``query`` in ``final/`` fed ``fed`` one version at a time: its result (row -> multiplicity) at each
    version of ``TRIPS_LOG``."""
    engine = IncrementalQuery(query)
    batches = dict(versions_of(fed))
    results = {}
    for version in VERSIONS:
        engine.apply(version, batches.get(version, []))
        results[version] = dict(engine.snapshot)
    return results


@exercise
def fares_program(answer: Any) -> None:
    """The learner's ``final/`` program for ``FARES_SQL``, run incrementally over ``TRIPS_LOG`` and compared
    with SQL's answer from scratch at every version."""
    if not callable(answer):
        raise Wrong(f"give a function of the trips stream that returns a stream, not {type(answer).__name__}")
    results = run_incrementally(as_query(answer), updates())
    for version in VERSIONS:
        expected = Counter({(group, *row): 1 for group, row in fares_at(version).items()})
        differences = compare(version, expected, results[version])
        if not differences:
            continue
        missing = [found.row for found in differences if found.expected > found.actual]
        extra = [found.row for found in differences if found.actual > found.expected]
        bad = [row for row in extra if not isinstance(row, tuple) or len(row) != 3]
        if bad:
            raise Wrong(f"at version {version} your program gave the row {bad[0]!r}; each row is a tuple "
                        f"(passenger_count, COUNT(fare_amount), MAX(fare_amount)): map aggregate's "
                        f"(key, ((name, value), ...)) to it")
        groups = {row[0] for row in missing + extra}
        group = sorted(groups, key=lambda key: (key is not None, key or 0))[0]
        want = [row for row in missing if row[0] == group]
        got = [row for row in extra if row[0] == group]
        hint = ""
        if want and got and want[0][1] != got[0][1]:
            hint = ("; COUNT(fare_amount) counts the non-NULL fares only: count trip[2], not a constant, so "
                    "aggregate skips the NULLs")
        elif want and got:
            hint = "; MAX(fare_amount) is the greatest non-NULL fare, and NULL when the group has none"
        elif want:
            hint = ("; every group with rows has a row, even when all its fares are NULL: do not filter the "
                    "NULL fares (or NULL passenger counts) out before grouping")
        else:
            hint = "; a group whose trips are all deleted has no row any more"
        raise Wrong(f"at version {version}, {_group_name(group)}: SQL gives {want[0] if want else 'no row'}, "
                    f"your program gives {got[0] if got else 'no row'} (the group holds "
                    f"{_trips_in(group, version) or 'no trip'}){hint}")


def trips_by_passengers(trips: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """``SELECT passenger_count, COUNT(*) FROM trips GROUP BY passenger_count`` in ``final/``: 004's in-place count."""
    return trips.map(lambda trip: (trip[PASSENGER_COUNT], ())).count_total()


COUNT_QUERY = Query(
    name="trips_by_passengers", dataset="trips", inputs=("trips",), columns=("passenger_count", "trips"),
    build=trips_by_passengers, sql="SELECT passenger_count, COUNT(*) FROM trips GROUP BY passenger_count",
    source="exercise 3 of the Spark pipeline notebook",
)
"""The query of exercise 3, in Spark SQL and in ``final/``."""


def lose_first_retraction(fed: list[tuple[int, str, tuple, int]]) -> list[tuple[int, str, tuple, int]]:
    """A faulty feed: the updates without the first retraction after the initial load (trip 1's update_preimage
    at version 1), as if a consumer of the change feed had dropped it."""
    index = next(i for i, (version, _, _, multiplicity) in enumerate(fed) if version > 0 and multiplicity < 0)
    return fed[:index] + fed[index + 1:]


def faulty_differences() -> set[tuple[int, tuple, int, int]]:
    """What the comparison reports for ``COUNT_QUERY`` fed ``lose_first_retraction``'s updates, as
    ``(version, row, Spark SQL's multiplicity, final/'s multiplicity)``."""
    results = run_incrementally(COUNT_QUERY, lose_first_retraction(updates()))
    found: list[Difference] = []
    for version in VERSIONS:
        groups = _groups(table_at(version))
        expected = Counter({(group, len(trips)): 1 for group, trips in groups.items()})
        found += compare(version, expected, results[version])
    return {(difference.version, difference.row, difference.expected, difference.actual) for difference in found}


@exercise
def lost_retraction(answer: Any) -> None:
    """The learner's prediction of ``faulty_differences()``: a set of ``(version, row, spark, final)``."""
    expected = faulty_differences()
    if not isinstance(answer, (set, list, tuple)):
        raise Wrong(f"give a set of (version, row, Spark SQL's multiplicity, final/'s multiplicity), "
                    f"not {type(answer).__name__}: {answer!r}")
    got = set()
    for item in answer:
        if isinstance(item, Difference):
            item = (item.version, item.row, item.expected, item.actual)
        if not (isinstance(item, tuple) and len(item) == 4 and isinstance(item[1], tuple)):
            raise Wrong(f"{item!r} is not (version, row, spark, final) with the row a tuple such as (1, 2)")
        got.add(item)
    if got == expected:
        return
    versions = sorted({item[0] for item in expected})
    said = sorted({item[0] for item in got})
    if set(said) < set(versions):
        raise Wrong(f"you listed differences at versions {said}, the comparison reports them at versions "
                    f"{versions}: a retraction lost at version {versions[0]} is never made up, so final/ holds "
                    f"the extra copy of the trip, and a wrong count, at every later version too")
    for version in versions:
        want = {item for item in expected if item[0] == version}
        have = {item for item in got if item[0] == version}
        if want == have:
            continue
        if len(have) < len(want):
            raise Wrong(f"at version {version} you listed {sorted(have, key=repr)}; the comparison reports "
                        f"{len(want)} rows there: a wrong count is Spark SQL's row that final/ lacks "
                        f"(Spark 1, final/ 0) and final/'s row that Spark SQL lacks (Spark 0, final/ 1)")
        wrong = sorted(have - want, key=repr)
        group = sorted(want, key=repr)[0][1][0]
        raise Wrong(f"at version {version} you listed {wrong[0]}, which the comparison does not report; at that "
                    f"version {_group_name(group)} holds {_trips_in(group, version)}, and final/ one trip "
                    f"more, since it never saw trip 1's update_preimage")
    extra = sorted(got - expected, key=repr)
    raise Wrong(f"you listed {extra[0]}, which the comparison does not report: only group 1 is wrong, at "
                f"versions {versions}")
