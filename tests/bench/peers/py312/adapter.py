"""The peer benchmark's adapter for two Python 3.12 libraries: Pathway and pydbsp.

    .bench-py312/bin/python tests/bench/peers/py312/adapter.py <pathway|pydbsp> <workload.json>

It keeps the contract in ``PROTOCOL.md`` beside the parent folder: read the
workload, build its query with the library's own operators, time the load
(version 0) and each later version until the library's output for it is
complete, fold every output change into the checksum, print one JSON line.

It runs in its own virtual environment (both libraries need Python >= 3.12),
so it is standalone: nothing of the project is imported here.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable

P = 2147483647


# ---- the checksum (PROTOCOL.md, "The checksum") -----------------------------------------------------

def record_hash(record: int | tuple) -> int:
    h = 17
    for x in (record if isinstance(record, tuple) else (record,)):
        h = (h * 1_000_003 + x % P) % P
    return h


class Checksum:
    """Every output change folded into a count and a hash sum; linear, so it is the final collection's."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0

    def add(self, record: int | tuple, diff: int) -> None:
        self.count += diff
        self.total = (self.total + diff * record_hash(record)) % P

    def __str__(self) -> str:
        return f"{self.count}:{self.total}"


def rss() -> int:
    """This process's resident memory in bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def read_workload(path: str) -> dict:
    """The workload file, with records as tuples (W3's roots stay ints) so they can be set members."""
    with open(path) as source:
        workload = json.load(source)

    def record(value: object) -> int | tuple:
        return tuple(value) if isinstance(value, list) else value

    workload["inputs"] = {name: [record(r) for r in records] for name, records in workload["inputs"].items()}
    workload["versions"] = [[(name, record(r), diff) for name, r, diff in changes]
                            for changes in workload["versions"]]
    return workload


# ---- Pathway ------------------------------------------------------------------------------------------
#
# Pathway runs its dataflow on its own worker thread once ``pw.run`` is called. Data comes in through a
# ``pw.io.python.ConnectorSubject`` (its ``run`` is called on a connector thread): ``next`` inserts a row,
# ``delete`` retracts one, and ``commit`` closes a minibatch, which the engine processes at one time.
# Output comes out through ``pw.io.subscribe``: ``on_change`` for every changed row (with its time and
# whether it is an addition), ``on_time_end`` once a time is finished for that table.
#
# Two things shape the wiring:
# - Every input goes through one subject, tagged with its name, so a version's changes are one commit and
#   so one engine time (two subjects would commit separately). The query splits them with ``filter``.
# - ``on_time_end`` fires only for times at which the subscribed table changed, and many versions change
#   nothing in the output (W3's edge moves often do not). So every version also replaces a one-row marker
#   (its version number), and the subscribed table is the query's output concatenated with the marker:
#   the marker makes each version's time non-empty, and since the concatenation's time ends only when both
#   its inputs are done, ``on_time_end`` for the marker's time means the output for the version is complete.
#   Marker rows are left out of the checksum.

COLUMNS = ("c0", "c1", "c2", "c3")
"""The subject's value columns; a record of arity k uses the first k, the rest are 0."""
MARKER = "#version"


def run_pathway(workload: dict) -> dict:
    import pathway as pw

    class Row(pw.Schema):
        # Inputs are sets, so a row is its own primary key: ``delete`` with the same values retracts exactly
        # the row ``next`` inserted (the connector's "native" session, no upsert semantics involved).
        src: str = pw.column_definition(primary_key=True)
        c0: int = pw.column_definition(primary_key=True)
        c1: int = pw.column_definition(primary_key=True)
        c2: int = pw.column_definition(primary_key=True)
        c3: int = pw.column_definition(primary_key=True)

    def as_row(name: str, record: int | tuple) -> dict:
        values = record if isinstance(record, tuple) else (record,)
        return {"src": name, **{c: (values[i] if i < len(values) else 0) for i, c in enumerate(COLUMNS)}}

    batches: queue.Queue = queue.Queue()  # lists of (name, record, diff); None to finish
    started = threading.Event()

    class Feed(pw.io.python.ConnectorSubject):
        def run(self) -> None:
            started.set()
            while (changes := batches.get()) is not None:
                for name, record, diff in changes:
                    if diff > 0:
                        self.next(**as_row(name, record))
                    else:
                        self.delete(**as_row(name, record))
                self.commit()

    rows = pw.io.python.read(Feed(), schema=Row, autocommit_duration_ms=None, name="feed")

    def table(name: str) -> pw.Table:
        return rows.filter(rows.src == name)

    output, arity = build_pathway_query(pw, workload["query"], table)
    names = [f"o{i}" for i in range(arity)]
    marker = table(MARKER)
    watched = pw.Table.concat_reindex(
        output.select(*[output[n] for n in names], marked=False),
        marker.select(**{n: (marker.c0 if i == 0 else 0) for i, n in enumerate(names)}, marked=True),
    )

    checksum = Checksum()
    done = threading.Condition()
    state = {"version": -1, "marker_time": None, "ended": -1}

    def on_change(key, row: dict, time: int, is_addition: bool) -> None:
        if row["marked"]:
            if is_addition and row["o0"] == state["version"]:
                state["marker_time"] = time
            return
        record = tuple(row[n] for n in names)
        checksum.add(record[0] if arity == 1 else record, 1 if is_addition else -1)

    def on_time_end(time: int) -> None:
        with done:
            state["ended"] = time
            done.notify_all()

    pw.io.subscribe(watched, on_change=on_change, on_time_end=on_time_end)

    result: dict = {}
    failure: list[BaseException] = []

    def send(version: int, changes: list) -> float:
        """Send one version's changes (and move the marker to it); the seconds until its output is complete."""
        marks = [(MARKER, version, 1)] + ([(MARKER, version - 1, -1)] if version > 0 else [])
        with done:
            state["version"], state["marker_time"] = version, None
        start = time.perf_counter()
        batches.put(list(changes) + marks)
        with done:
            while state["marker_time"] is None or state["ended"] < state["marker_time"]:
                if not done.wait(timeout=600):
                    raise TimeoutError(f"no output from pathway for version {version}")
        return time.perf_counter() - start

    def drive() -> None:
        try:
            started.wait()
            result["rss_before_load"] = rss()
            load = [(name, record, 1) for name, records in workload["inputs"].items() for record in records]
            result["load_s"] = send(0, load)
            result["latencies"] = [send(v, changes) for v, changes in enumerate(workload["versions"], start=1)]
        except BaseException as error:  # reported once the engine has stopped
            failure.append(error)
        finally:
            batches.put(None)  # ends the subject's run, so the connector closes and pw.run returns

    driver = threading.Thread(target=drive, daemon=True)
    driver.start()
    # No monitoring dashboard, no metrics server, no persistence; default_logging=False leaves Python's
    # logging unconfigured, so only warnings and errors reach stderr (not an INFO line per batch).
    pw.run(monitoring_level=pw.MonitoringLevel.NONE, with_http_server=False, persistence_config=None,
           default_logging=False)
    driver.join()
    if failure:
        raise failure[0]
    result["checksum"] = str(checksum)
    return result


def build_pathway_query(pw, query: str, table: Callable) -> tuple:
    """The query's output table (columns o0, o1, ...) and its arity, from Pathway's own operators."""
    if query == "count":
        r = table("records")
        return r.groupby(r.c0).reduce(o0=r.c0, o1=pw.reducers.count()), 2
    if query == "join":
        left, right = table("left"), table("right")
        return left.join(right, left.c0 == right.c0).select(o0=left.c0, o1=left.c1, o2=right.c1), 3
    if query == "reach":
        edges, roots = table("edges"), table("roots")

        def step(reached: pw.Table, edges: pw.Table, roots: pw.Table) -> dict:
            # One round: the roots plus every node one edge past a reached node, made a set by groupby.
            hop = reached.join(edges, reached.o0 == edges.c0).select(o0=edges.c1)
            both = pw.Table.concat_reindex(roots.select(o0=roots.c0), hop)
            return {"reached": both.groupby(both.o0).reduce(both.o0)}

        start = roots.groupby(roots.c0).reduce(o0=roots.c0)
        # iterate_universe: the iterated table's rows (its universe) grow from round to round.
        reached = pw.iterate(step, reached=pw.iterate_universe(start), edges=edges, roots=roots)["reached"]
        return reached, 1
    if query == "minmax":
        v = table("values")
        return v.groupby(v.c0).reduce(o0=v.c0, o1=pw.reducers.min(v.c1), o2=pw.reducers.max(v.c1)), 3
    if query == "taxi":
        t = table("trips")  # (trip_id, passenger_count, fare, distance)
        return t.groupby(t.c1).reduce(o0=t.c1, o1=pw.reducers.min(t.c2), o2=pw.reducers.max(t.c2),
                                      o3=pw.reducers.count_distinct(t.c3)), 4
    raise ValueError(f"unknown query {query!r}")


# ---- pydbsp -------------------------------------------------------------------------------------------
#
# pydbsp (2.x) builds a circuit of DBSP operators over a 2-D time lattice (outer axis = version, inner
# axis = fixed-point round) and evaluates it lazily: ``Evaluator.push`` writes an input's change at a
# time, ``Evaluator.read`` computes (and memoises) a node's value at a time. Its "delta lifted, delta
# lifted" operators are the incremental ones: reading the output at (version, 0) gives the change of the
# query's result at that version. Recursion (W3) is driven the library's way: the fixed point's state is
# a 2-D input into which each inner round's change is pushed back, rounds run by
# ``Evaluator.saturate_inner`` until a round changes nothing.
#
# One version = one outer tick: every input gets its change (an empty Z-set if it has none) at
# (version,), then the output is read; the latency ends there. After each version ``Evaluator.compact``
# drops the stored values no later read needs (otherwise every node keeps its value at every time, and
# memory grows with every version). Like an engine's background merging, that is not timed: it comes
# after the version's output is complete (timing it too roughly doubles W2's latency).

def run_pydbsp(workload: dict) -> dict:
    from pydbsp.circuit import Circuit
    from pydbsp.compute import ComputeCtx
    from pydbsp.core import Antichain, dbsp_time
    from pydbsp.evaluate import Evaluator
    from pydbsp.indexed_relational_operators import (
        DeltaLiftedDeltaLiftedGroupBy,
        IndexedDeltaLiftedDeltaLiftedJoin,
        LiftIndex,
        LiftLiftIndex,
    )
    from pydbsp.indexed_zset import IndexedZSetAddition
    from pydbsp.operator import Input, Lift2, LiftDelay, LiftStreamIntroduction
    from pydbsp.relational_operators import DeltaLiftedDeltaLiftedDistinct
    from pydbsp.storage import DictStorage
    from pydbsp.zset import ZSet, ZSetAddition

    zsets = ZSetAddition()
    e = Evaluator(circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=dbsp_time(2)), group=zsets)
    c = e.circuit
    query = workload["query"]
    names = list(workload["inputs"])
    inputs = {name: Input(frontier=Antichain(dbsp_time(1))).connect(c, ()) for name in names}
    lifted = {name: LiftStreamIntroduction(group=zsets).connect(c, (node,)) for name, node in inputs.items()}

    def indexed_by(key: Callable) -> IndexedZSetAddition:
        return IndexedZSetAddition(zsets, key)

    def group_by(name: str, key: Callable, aggregate: Callable) -> int:
        """Incremental GROUP BY: emits -(k, old aggregate) +(k, new aggregate) for the keys that changed."""
        grouped = LiftLiftIndex(indexer=key).connect(c, (lifted[name],))
        return DeltaLiftedDeltaLiftedGroupBy(aggregate=aggregate, group=indexed_by(key), out_group=zsets).connect(
            c, (grouped,))

    def flat(record: tuple) -> tuple:
        """(key, (a, b)) -> (key, a, b): group_by's output record as the protocol's flat record."""
        key, value = record
        return (key, *value) if isinstance(value, tuple) else (key, value)

    state = None  # W3's fixed-point state input
    if query == "count":
        output = group_by("records", lambda r: r[0], lambda items: sum(w for _, w in items))
    elif query == "join":
        first = lambda r: r[0]  # noqa: E731
        left = LiftLiftIndex(indexer=first).connect(c, (lifted["left"],))
        right = LiftLiftIndex(indexer=first).connect(c, (lifted["right"],))
        output = IndexedDeltaLiftedDeltaLiftedJoin(
            proj=lambda key, lr, rr: (key, lr[1], rr[1]), group_a=indexed_by(first), group_b=indexed_by(first),
            out_group=zsets).connect(c, (left, right))
    elif query == "reach":
        # reached = distinct(roots + {dst : (node) in reached, (node, dst) in edges}), the state fed back.
        state = Input(frontier=Antichain(dbsp_time(2))).connect(c, ())
        previous = LiftIndex(indexer=lambda node: node).connect(c, (LiftDelay(group=zsets).connect(c, (state,)),))
        edges = LiftIndex(indexer=lambda edge: edge[0]).connect(c, (lifted["edges"],))
        hop = IndexedDeltaLiftedDeltaLiftedJoin(
            proj=lambda _k, _node, edge: edge[1], group_a=indexed_by(lambda node: node),
            group_b=indexed_by(lambda edge: edge[0]), out_group=zsets).connect(c, (previous, edges))
        fresh = Lift2(op=zsets.add).connect(c, (hop, lifted["roots"]))
        output = DeltaLiftedDeltaLiftedDistinct(inner_group=zsets).connect(c, (fresh,))
    elif query == "minmax":
        output = group_by("values", lambda r: r[0], lambda items: (min(r[1] for r, _ in items),
                                                                    max(r[1] for r, _ in items)))
    elif query == "taxi":
        output = group_by("trips", lambda r: r[1], lambda items: (
            min(r[2] for r, _ in items), max(r[2] for r, _ in items), len({r[3] for r, _ in items})))
    else:
        raise ValueError(f"unknown query {query!r}")

    checksum = Checksum()
    deepest = [-1]  # the deepest inner round any earlier version reached (W3)

    def step(version: int, changes: dict[str, dict]) -> float:
        start = time.perf_counter()
        for name in names:
            e.push(inputs[name], ZSet(changes.get(name, {})), t=(version,))
        if state is None:
            deltas = [e.read(output, (version, 0))]
        else:
            # Rounds until one adds nothing, but no fewer than earlier versions ran: their state reaches
            # this version's rounds only up to the depth they went to (pydbsp's documented min_inner).
            deltas = []
            for k, delta in e.saturate_inner(output, version, is_empty=lambda d: not d.inner,
                                             min_inner=deepest[0]):
                e.push(state, delta, t=(version, k))
                deltas.append(delta)
                deepest[0] = max(deepest[0], k)
        elapsed = time.perf_counter() - start
        e.compact()  # after the output is complete: garbage collection, not part of this version's latency
        for delta in deltas:
            for record, weight in delta.inner.items():
                checksum.add(flat(record) if query in ("count", "minmax", "taxi") else record, weight)
        return elapsed

    def as_changes(changes: list) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for name, record, diff in changes:
            out.setdefault(name, {})[record] = diff
        return out

    rss_before = rss()
    load_s = step(0, {name: {r: 1 for r in records} for name, records in workload["inputs"].items()})
    latencies = [step(v, as_changes(changes)) for v, changes in enumerate(workload["versions"], start=1)]
    return {"load_s": load_s, "latencies": latencies, "rss_before_load": rss_before, "checksum": str(checksum)}


# ---- main ---------------------------------------------------------------------------------------------

ENGINES = {"pathway": run_pathway, "pydbsp": run_pydbsp}


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ENGINES:
        sys.exit(f"usage: adapter.py <{'|'.join(ENGINES)}> <workload.json>")
    workload = read_workload(sys.argv[2])
    result = ENGINES[sys.argv[1]](workload)
    sys.stdout.flush()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
