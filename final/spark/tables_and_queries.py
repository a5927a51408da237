"""The pipeline's tables and queries: each query once in Spark SQL and once as a ``final/`` dataflow.

A table is a list of typed columns; a record of it, on the ``final/`` side,
is the tuple of its values in that order, with ``None`` for NULL (so a trip
is ``(trip_id, passenger_count, fare_amount, trip_distance, pickup, dropoff)``).
A query names the tables it reads, the SQL that computes it from scratch over
views of those names, and ``build``, which makes the same query from input
streams in ``final/``; both produce rows with the columns ``columns``, and the
pipeline compares them as multisets at every version.

The queries come from the documents: 004's MIN/MAX/COUNT(DISTINCT) by
passenger count (NULL is a group); SUM/COUNT/AVG with NULLs skipped, as SQL
does; 003's facts enriched by a chain of LEFT JOINs; and reachability by
iteration to a fixed point (002's loops). Two more hold Spark SQL's DOUBLE to
its rules (``sqlfloat``): MIN/MAX of distances, and distances in GROUP BY keys.

``partition_by`` says how a query splits across Spark tasks: per input, the
column whose hash picks the partition, or ``None`` to send the whole input
to every partition (a broadcast, for small dimension tables). A query without
it (reachability: a node's answer depends on every edge) runs in one process.

Tables of one's own (``--table NAME=PATH``, ``own_tables``) join the catalog
while a command runs (``bind``): they are the data set ``BOUND``.

The SQL compiler sees the catalog through ``CATALOG``, a
``sql.TableProvider``: every table, and the data set a query belongs to.

This module imports nothing from Spark: executors import it to build the
``final/`` side of a query.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal

from ..stream import DifferenceStreamBuilder
from .query import Query, Table
from .sql import NO_DATASET, load

TABLES = {
    table.name: table
    for table in [
        # 004's taxi trips: NULL passenger counts, negative fares (refunds), NULL fares and distances.
        Table("trips", (
            ("trip_id", "BIGINT"), ("passenger_count", "INT"), ("fare_amount", "DECIMAL(8,2)"),
            ("trip_distance", "DOUBLE"), ("pickup_datetime", "TIMESTAMP"), ("dropoff_datetime", "TIMESTAMP"),
        ), key=("trip_id",)),
        Table("edges", (("src", "BIGINT"), ("dst", "BIGINT"))),
        Table("roots", (("node", "BIGINT"),)),
        # 003's enrichment: facts -> users (user_id = id) -> addrs (addr_id = id) -> agent (zipcode = zc).
        Table("facts", (("fact_id", "BIGINT"), ("user_id", "BIGINT"), ("amount", "DECIMAL(8,2)")), key=("fact_id",)),
        Table("users", (("id", "BIGINT"), ("name", "STRING"), ("addr_id", "BIGINT")), key=("id",)),
        Table("addrs", (("id", "BIGINT"), ("street", "STRING"), ("zipcode", "INT")), key=("id",)),
        Table("agent", (("zc", "INT"), ("agent_name", "STRING"))),
    ]
}

DATASETS = {"trips": ("trips",), "graph": ("edges", "roots"), "enrichment": ("facts", "users", "addrs", "agent")}
"""Each data set's tables; with tables bound (``bind``), the data set ``BOUND`` too."""

BUILT_IN = tuple(DATASETS)
"""The data sets the pipeline generates, follows in a log folder and has built-in queries for."""

BOUND = "tables"
"""The data set of the tables one binds with ``--table NAME=PATH`` (``own_tables``): its tables are those."""


def bind(tables: Iterable[Table]) -> None:
    """Make ``tables`` the data set ``BOUND``, in place of the tables bound before (none: no such data set).

    ``TABLES`` and ``DATASETS`` change in place, so every module that imported them looks the bound tables
    up as it looks up the built-in ones. A Spark Python worker imports this module afresh and sees no bound
    table: what it needs travels with the work (``sources.CommitStream``'s options, ``SqlQuery.recipe``).

    Raises:
        ValueError: a name is a built-in table's, or two tables share one (as SQL compares names: any case).
    """
    for name in DATASETS.pop(BOUND, ()):
        del TABLES[name]
    tables = list(tables)
    taken = {name.lower() for name in TABLES}
    for table in tables:
        if table.name.lower() in taken:
            raise ValueError(f"table {table.name} is bound twice, or is a built-in table ({', '.join(TABLES)})")
        taken.add(table.name.lower())
    TABLES.update((table.name, table) for table in tables)
    if tables:
        DATASETS[BOUND] = tuple(table.name for table in tables)


class _Catalog:
    """The catalog as the SQL compiler asks for it (``sql.TableProvider``): ``TABLES``, bound tables included,
    and as a query's data set the first whose tables hold every table it reads (``sql.NO_DATASET`` if none
    does: ``run`` and ``follow`` refuse such a query)."""

    @property
    def tables(self) -> Mapping[str, Table]:
        return TABLES

    def dataset_of(self, inputs: Sequence[str]) -> str:
        return next((dataset for dataset, members in DATASETS.items() if set(inputs) <= set(members)), NO_DATASET)


CATALOG = _Catalog()
"""The catalog's tables and data sets for ``sql.compile_sql`` and ``sql.load``."""


AVERAGE_SCALE = Decimal("0.000001")
"""Spark's AVG of DECIMAL(p, s) is DECIMAL(p + 4, s + 4), rounded half up: six places for fares."""


def _average(total: Decimal | None, count: int) -> Decimal | None:
    """SQL's AVG from SUM and COUNT of the non-NULL values, rounded as Spark rounds it."""
    if not count:
        return None
    return (Decimal(total) / count).quantize(AVERAGE_SCALE, rounding=ROUND_HALF_UP)


def fares_by_passengers(trips: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """004's query: per passenger count, the lowest and highest fare and the number of distinct distances."""
    found = trips.aggregate(lambda trip: trip[1], {
        "min_fare": ("min", lambda trip: trip[2]),
        "max_fare": ("max", lambda trip: trip[2]),
        "distinct_distances": ("count_distinct", lambda trip: trip[3]),
    })
    return found.map(lambda pair: (pair[0], *_values(pair[1], "min_fare", "max_fare", "distinct_distances")))


def fare_totals(trips: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """Per passenger count: rows, non-NULL fares, their sum and their average (NULL fares skipped, as in SQL)."""
    found = trips.aggregate(lambda trip: trip[1], {
        "trips": ("count", lambda trip: 1),
        "fares": ("count", lambda trip: trip[2]),
        "total_fare": ("sum", lambda trip: trip[2]),
    })

    def row(pair: tuple) -> tuple:
        trips, fares, total = _values(pair[1], "trips", "fares", "total_fare")
        return (pair[0], trips, fares, total, _average(total, fares))

    return found.map(row)


def distance_range(trips: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """Per passenger count: the shortest and longest distance and how many are known (MIN/MAX over a DOUBLE)."""
    found = trips.aggregate(lambda trip: trip[1], {
        "shortest": ("min", lambda trip: trip[3]),
        "longest": ("max", lambda trip: trip[3]),
        "distances": ("count", lambda trip: trip[3]),
    })
    return found.map(lambda pair: (pair[0], *_values(pair[1], "shortest", "longest", "distances")))


def trips_by_distance(trips: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """Per passenger count and distance (a DOUBLE in the GROUP BY key; about 2,000 keys at the embedded size):
    the trips and their lowest and highest fare."""
    found = trips.aggregate(lambda trip: (trip[1], trip[3]), {
        "trips": ("count", lambda trip: 1),
        "min_fare": ("min", lambda trip: trip[2]),
        "max_fare": ("max", lambda trip: trip[2]),
    })
    return found.map(lambda pair: (*pair[0], *_values(pair[1], "trips", "min_fare", "max_fare")))


def _values(named: tuple, *names: str) -> tuple:
    """The values of ``aggregate``'s ``((name, value), ...)`` in the order of ``names``."""
    values = dict(named)
    return tuple(values[name] for name in names)


def reachable(edges: DifferenceStreamBuilder, roots: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
    """The nodes reachable from a root (roots included): a join with the edges, iterated to a fixed point.

    Inside the loop a node is the pair ``(node, ())``, so it can be joined
    with the edges, which are ``(src, dst)`` pairs already, and made distinct.
    """
    starts = roots.map(lambda root: (root[0], ()))

    def step(reached: DifferenceStreamBuilder) -> DifferenceStreamBuilder:
        following = reached.join(edges).map(lambda pair: (pair[1][1], ()))
        return following.concat(starts).distinct()

    return starts.distinct().iterate(step).map(lambda pair: (pair[0],))


_NO_USER, _NO_ADDR, _NO_AGENT = (None,) * 3, (None,) * 3, (None,) * 2


def enriched_facts(
    facts: DifferenceStreamBuilder, users: DifferenceStreamBuilder,
    addrs: DifferenceStreamBuilder, agent: DifferenceStreamBuilder,
) -> DifferenceStreamBuilder:
    """003's facts LEFT JOIN users LEFT JOIN addrs LEFT JOIN agent, one flat row per result, NULL-padded."""
    chained = facts.left_join_chain([
        (users.map(lambda user: (user[0], user)), lambda row: row[0][1]),
        (addrs.map(lambda addr: (addr[0], addr)), lambda row: row[1][2] if row[1] else None),
        (agent.map(lambda zone: (zone[0], zone)), lambda row: row[2][2] if row[2] else None),
    ])
    return chained.map(lambda row: (*row[0], *(row[1] or _NO_USER), *(row[2] or _NO_ADDR), *(row[3] or _NO_AGENT)))


HAND_BUILT = {
    query.name: query
    for query in [
        Query(
            name="fares_by_passengers", dataset="trips", inputs=("trips",), key=("passenger_count",),
            columns=("passenger_count", "min_fare", "max_fare", "distinct_distances"),
            build=fares_by_passengers,
            sql="SELECT passenger_count, MIN(fare_amount), MAX(fare_amount), COUNT(DISTINCT trip_distance) "
                "FROM trips GROUP BY passenger_count",
            source="004, 'Downsides': MIN, MAX and COUNT(DISTINCT) by passenger_count; NULL is a group",
            partition_by={"trips": "passenger_count"},
        ),
        Query(
            name="fare_totals", dataset="trips", inputs=("trips",), key=("passenger_count",),
            columns=("passenger_count", "trips", "fares", "total_fare", "average_fare"),
            build=fare_totals,
            sql="SELECT passenger_count, COUNT(*), COUNT(fare_amount), SUM(fare_amount), AVG(fare_amount) "
                "FROM trips GROUP BY passenger_count",
            source="004, in-place totals: COUNT, SUM and AVG skipping NULLs",
            partition_by={"trips": "passenger_count"},
        ),
        Query(
            name="distance_range", dataset="trips", inputs=("trips",), key=("passenger_count",),
            columns=("passenger_count", "shortest", "longest", "distances"),
            build=distance_range,
            sql="SELECT passenger_count, MIN(trip_distance), MAX(trip_distance), COUNT(trip_distance) "
                "FROM trips GROUP BY passenger_count",
            source="Spark SQL's DOUBLE: MIN and MAX where NaN is above every number, and -0.0 = 0.0",
            partition_by={"trips": "passenger_count"},
        ),
        Query(
            name="trips_by_distance", dataset="trips", inputs=("trips",), key=("passenger_count", "trip_distance"),
            columns=("passenger_count", "trip_distance", "trips", "min_fare", "max_fare"),
            build=trips_by_distance,
            sql="SELECT passenger_count, trip_distance, COUNT(*), MIN(fare_amount), MAX(fare_amount) FROM trips "
                "GROUP BY passenger_count, trip_distance",
            source="Spark SQL's DOUBLE in a GROUP BY key: every NaN one group, -0.0 and 0.0 one group, NULL one "
                   "group; thousands of keys, split by distance",
            partition_by={"trips": "trip_distance"},
        ),
        Query(
            name="reachable", dataset="graph", inputs=("edges", "roots"), columns=("node",),
            build=reachable,
            sql="SELECT DISTINCT node FROM roots",
            fixed_point="SELECT node FROM reached UNION SELECT e.dst FROM reached r JOIN edges e ON r.node = e.src",
            source="002, iterate: the nodes reachable from the roots, to a fixed point",
        ),
        Query(
            name="enriched_facts", dataset="enrichment", inputs=("facts", "users", "addrs", "agent"),
            columns=("fact_id", "user_id", "amount", "users.id", "name", "addr_id", "addrs.id", "street",
                     "zipcode", "zc", "agent_name"),
            build=enriched_facts,
            sql="SELECT f.fact_id, f.user_id, f.amount, u.id, u.name, u.addr_id, a.id, a.street, a.zipcode, "
                "g.zc, g.agent_name FROM facts f LEFT JOIN users u ON f.user_id = u.id "
                "LEFT JOIN addrs a ON u.addr_id = a.id LEFT JOIN agent g ON a.zipcode = g.zc",
            source="003, 'Left joins': facts LEFT JOIN users LEFT JOIN addrs LEFT JOIN agent",
            # A fact's rows depend on its user's row (same partition) and on addrs and agent (everywhere).
            partition_by={"facts": "user_id", "users": "id", "addrs": None, "agent": None},
        ),
    ]
}


QUERY_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries")
"""The built-in queries as SQL files, one per query, named by their stems (the same six as ``HAND_BUILT``)."""


def _built_in_queries() -> dict[str, Query]:
    """Each SQL file of ``QUERY_FOLDER`` compiled. A Spark worker imports this package from the zip of
    ``final/`` the driver ships (``partitioned.ship_final``), whose files cannot be opened by path: there they
    are read from a copy (``pkgutil.get_data`` reads inside a zip), removed once compiled."""
    if os.path.isdir(QUERY_FOLDER):
        return {name: load(os.path.join(QUERY_FOLDER, f"{name}.sql"), CATALOG) for name in HAND_BUILT}
    import pkgutil
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="final-queries-")
    try:
        for name in HAND_BUILT:
            with open(os.path.join(folder, f"{name}.sql"), "wb") as file:
                file.write(pkgutil.get_data(__package__, f"queries/{name}.sql") or b"")
        return {name: load(os.path.join(folder, f"{name}.sql"), CATALOG) for name in HAND_BUILT}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


QUERIES = _built_in_queries()
"""The pipeline's queries: each built-in SQL file compiled into a ``final/`` dataflow. ``HAND_BUILT`` holds the
same queries written by hand with ``final/``'s stream API, as the notebooks teach them; the benchmark runs both
side by side."""


def queries_of(dataset: str) -> list[Query]:
    """The queries over ``dataset``'s tables, in catalog order."""
    return [query for query in QUERIES.values() if query.dataset == dataset]
