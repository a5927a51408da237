"""The conformance oracle's line protocol, spoken by pathway (run by the Python of this folder's own venv).

Reads cases from standard input (a start line, the case's input messages,
``{"end": true}``), builds each case's program with pathway's own operators
(``select``, ``filter``, ``groupby().reduce()``, ``join``, ``join_left``,
``flatten``, ``concat_reindex``, ``difference``, ``pw.iterate``), runs it,
and writes the output updates, the output frontier and one closing line per case. See
``../README.md``, 'The protocol an engine speaks', and ``REPORT.md`` beside
this file.

Pathway's time model is not the cases' one, so the adapter translates:

- **Versions to pathway times.** Pathway knows one time, "when the record
  arrives to the Pathway engine" (its guide 'Understanding Temporal Behavior'),
  totally ordered, in which every input is processed batch by batch. The case
  is read whole (the protocol lets an engine answer after ``{"end": true}``);
  its versions, sorted, become the even times 2, 4, 6, ... (pathway's debug
  input takes even times, and leaves time 0 out of its outputs), and each
  output time is read back as the version it came from. Integer versions are
  always a chain; a case whose versions are pairs is run when its versions form
  a chain too, and is unsupported when two of them are incomparable.
- **Multiplicities to rows.** A pathway table is a set of rows, each with its
  own id, inserted (``__diff__`` 1) or deleted (-1) one at a time. A record
  with multiplicity m is m rows, ids ``<input>:<record>#<k>``; each version's
  net change of a record inserts or deletes the last copies. An input whose
  record would go below zero rows is unsupported. The two programs whose
  output may go below zero (difference, explode with a negative count) end
  in a table with one row per record and its multiplicity in a column ``n``,
  which the adapter writes as the record's multiplicity; noop_loop, whose
  body negates a collection, is unsupported (pathway has no negation).
- **Records to values.** JSON arrays become Python tuples (pathway's tuple
  values) and back; every record column has pathway's ``Any`` type, and a
  column is declared ``int`` or ``str`` (``pw.declare_type``) where a program
  computes with it.

Standard output carries only the protocol: the process's file descriptor 1
is pointed at standard error before pathway is imported, so nothing pathway
prints can break a line of the protocol.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

PROTOCOL = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)  # anything else written to standard output, by Python or by pathway's engine, goes to stderr

import pandas as pd  # noqa: E402 (after the redirection above, on purpose)
import pathway as pw  # noqa: E402
from pathway.internals.parse_graph import G  # noqa: E402

TIMES = bool(os.environ.get("PATHWAY_ADAPTER_TIMES"))
"""Set: each case's wall-clock time goes to standard error, one line per case."""

logging.getLogger("pathway").setLevel(logging.WARNING)
logging.getLogger().setLevel(logging.WARNING)


class Unsupported(Exception):
    """The case asks for what pathway cannot express; the message says why."""


class InputSchema(pw.Schema):
    """One row of an input: its id (the record and which copy of it) and the record."""

    cid: str = pw.column_definition(primary_key=True)
    r: Any


# -- records ----------------------------------------------------------------------


def to_value(record: Any) -> Any:
    """A JSON record as a pathway value: arrays become tuples."""
    return tuple(to_value(item) for item in record) if isinstance(record, list) else record


def to_json(value: Any) -> Any:
    """A pathway value as a JSON record: tuples become arrays."""
    return [to_json(item) for item in value] if isinstance(value, tuple) else value


def field(table: pw.Table, index: int, column: str = "r") -> Any:
    """The ``index``-th field of a tuple column, as a column expression."""
    return table[column][index]


def pairs(table: pw.Table) -> pw.Table:
    """[key, value] records as columns k and v."""
    return table.select(k=field(table, 0), v=field(table, 1))


def distinct(table: pw.Table, column: str = "r") -> pw.Table:
    """Each value of ``column`` once, while some row holds it (a groupby with no reducer)."""
    return table.groupby(table[column]).reduce(**{column: pw.this[column]})


def out(table: pw.Table, expression: Any) -> pw.Table:
    """The program's output table: one column ``out``, one row per copy of an output record."""
    return table.select(out=expression)


def signed(table: pw.Table, expression: Any) -> pw.Table:
    """The output table of a program whose output may go below zero: one row per record, ``out`` the
    record and ``n`` its multiplicity, which the adapter writes as the record's multiplicity."""
    return table.select(out=expression, n=pw.this.n)


# -- the programs ------------------------------------------------------------------


def word_count(lines: pw.Table) -> pw.Table:
    words = lines.select(
        w=pw.apply_with_type(lambda line: tuple(line.split()), tuple[str, ...], pw.declare_type(str, pw.this.r)),
    ).flatten(pw.this.w)
    counts = words.groupby(pw.this.w).reduce(pw.this.w, n=pw.reducers.count())
    return out(counts, pw.make_tuple(pw.this.w, pw.this.n))


def count_by_key(records: pw.Table) -> pw.Table:
    counts = pairs(records).groupby(pw.this.k).reduce(pw.this.k, n=pw.reducers.count())
    return out(counts, pw.make_tuple(pw.this.k, pw.this.n))


def sum_by_key(records: pw.Table) -> pw.Table:
    rows = pairs(records).select(pw.this.k, v=pw.declare_type(int | None, pw.this.v))
    sums = rows.groupby(pw.this.k).reduce(
        pw.this.k,
        s=pw.reducers.sum(pw.coalesce(pw.this.v, 0)),
        numbers=pw.reducers.sum(pw.if_else(pw.this.v.is_not_none(), 1, 0)),
    )
    return out(sums, pw.make_tuple(pw.this.k, pw.if_else(pw.this.numbers == 0, None, pw.this.s)))


def distinct_program(records: pw.Table) -> pw.Table:
    return out(distinct(records), pw.this.r)


def join(left: pw.Table, right: pw.Table) -> pw.Table:
    a, b = pairs(left), pairs(right)
    return a.join(b, a.k == b.k).select(out=pw.make_tuple(a.k, pw.make_tuple(a.v, b.v)))


def present_keys(keys: pw.Table) -> pw.Table:
    """Each key with rows, once: column ``key``."""
    return distinct(keys).select(key=pw.this.r)


def semijoin(left: pw.Table, keys: pw.Table) -> pw.Table:
    a, present = pairs(left), present_keys(keys)
    return a.join(present, a.k == present.key).select(out=pw.make_tuple(a.k, a.v))


def antijoin(left: pw.Table, keys: pw.Table) -> pw.Table:
    a, present = pairs(left), present_keys(keys)
    matched = a.join(present, a.k == present.key, id=a.id).select()  # each row of a matches one key at most
    return out(a.difference(matched), pw.make_tuple(pw.this.k, pw.this.v))


def known(table: pw.Table, key: Any) -> pw.Table:
    """The rows of ``table`` whose join key is not null: SQL's null equals nothing, and pathway's join
    matches None with None, so a left join drops them from its right side first."""
    return table.filter(key.is_not_none())


def left_outer_join(left: pw.Table, right: pw.Table) -> pw.Table:
    a, b = pairs(left), pairs(right)
    b = known(b, b.k)
    return a.join_left(b, a.k == b.k).select(out=pw.make_tuple(a.k, pw.make_tuple(a.v, b.v)))


def reachability(roots: pw.Table, edges: pw.Table) -> pw.Table:
    starts = roots.select(node=pw.this.r)
    links = edges.select(source=field(edges, 0), target=field(edges, 1))

    def step(reached: pw.Table, starts: pw.Table, links: pw.Table) -> dict[str, pw.Table]:
        targets = reached.join(links, reached.node == links.source).select(node=links.target)
        return {"reached": distinct(pw.Table.concat_reindex(starts, targets), "node")}

    result = pw.iterate(step, reached=pw.iterate_universe(distinct(starts, "node")), starts=starts, links=links)
    return out(result["reached"], pw.this.node)


def connected_components(edges: pw.Table) -> pw.Table:
    ends = edges.select(a=field(edges, 0), b=field(edges, 1))
    both = pw.Table.concat_reindex(ends, ends.select(a=pw.this.b, b=pw.this.a))
    labels = distinct(both, "a").select(node=pw.this.a, label=pw.this.a)

    def step(labels: pw.Table, both: pw.Table) -> dict[str, pw.Table]:
        offered = labels.join(both, labels.node == both.a).select(node=both.b, label=labels.label)
        everything = pw.Table.concat_reindex(labels, offered)
        return {"labels": everything.groupby(pw.this.node).reduce(pw.this.node, label=pw.reducers.min(pw.this.label))}

    result = pw.iterate(step, labels=pw.iterate_universe(labels), both=both)
    return out(result["labels"], pw.make_tuple(pw.this.node, pw.this.label))


def bounded_closure(numbers: pw.Table, step: Callable[[Any], Any], bound: int) -> pw.Table:
    """002's loop: iterate(x -> distinct(x + step(x), kept while <= bound)), column n."""
    start = numbers.select(n=pw.declare_type(int, pw.this.r))

    def body(x: pw.Table) -> dict[str, pw.Table]:
        grown = pw.Table.concat_reindex(x, x.select(n=step(pw.this.n)))
        return {"x": distinct(grown.filter(pw.this.n <= bound), "n")}

    return pw.iterate(body, x=pw.iterate_universe(start))["x"]


def geometric_series(numbers: pw.Table) -> pw.Table:
    return out(bounded_closure(numbers, lambda n: n * 2, 50), pw.this.n)


def add_one_squares(numbers: pw.Table) -> pw.Table:
    return out(bounded_closure(numbers, lambda n: n + 1, 5), pw.make_tuple(pw.this.n, pw.this.n * pw.this.n))


def distinct_lengths(strings: pw.Table) -> pw.Table:
    lengths = distinct(strings).select(n=pw.declare_type(str, pw.this.r).str.len())
    counts = lengths.groupby(pw.this.n).reduce(pw.this.n, c=pw.reducers.count())
    return out(counts, pw.make_tuple(pw.apply_with_type(lambda n: f"length: {n}", str, pw.this.n), pw.this.c))


def min_max_count_distinct(trips: pw.Table) -> pw.Table:
    rows = trips.select(key=field(trips, 0), fare=field(trips, 1), distance=field(trips, 2))
    groups = rows.groupby(pw.this.key).reduce(
        pw.this.key,
        fares=pw.reducers.sorted_tuple(pw.this.fare, skip_nones=True),
        distances=pw.reducers.count_distinct(pw.this.distance),
        null_distance=pw.reducers.max(pw.if_else(pw.this.distance.is_none(), 1, 0)),
    )
    return out(groups, pw.make_tuple(
        pw.this.key, pw.this.fares.get(0), pw.this.fares.get(-1), pw.this.distances - pw.this.null_distance,
    ))


def concat(a: pw.Table, b: pw.Table) -> pw.Table:
    return pw.Table.concat_reindex(a.select(out=pw.this.r), b.select(out=pw.this.r))


def plus_five_evens(numbers: pw.Table) -> pw.Table:
    shifted = numbers.select(n=pw.declare_type(int, pw.this.r) + 5)
    return out(shifted.filter(pw.this.n % 2 == 0), pw.this.n)


def name_lengths(names: pw.Table) -> pw.Table:
    named = names.select(name=pw.declare_type(str, pw.this.r))
    return out(named, pw.make_tuple(pw.this.name, pw.this.name.str.len()))


def three_hops(query: pw.Table, links: pw.Table) -> pw.Table:
    edges = links.select(source=field(links, 0), target=field(links, 1))
    walks = query.select(node=pw.this.r, origin=pw.this.r)
    for _ in range(3):
        walks = walks.join(edges, walks.node == edges.source).select(node=edges.target, origin=walks.origin)
    return out(walks, pw.make_tuple(pw.this.node, pw.this.origin))


def enrichment(facts: pw.Table, users: pw.Table, addrs: pw.Table, agents: pw.Table) -> pw.Table:
    def second(row: Any) -> Any:
        return None if row is None else row[1]

    rows = facts.select(fact=pw.this.r, key=field(facts, 1))
    found = rows
    joined: list[str] = ["fact"]
    for name, table in (("user", users), ("addr", addrs), ("agent", agents)):
        keyed = known(table.select(k=field(table, 0), row=pw.this.r), pw.this.k)
        found = found.join_left(keyed, found.key == keyed.k).select(
            *(found[column] for column in joined),
            **{name: keyed.row},
            key=pw.apply_with_type(second, Any, keyed.row),
        )
        joined.append(name)
    return out(found, pw.make_tuple(pw.this.fact, pw.this.user, pw.this.addr, pw.this.agent))


def explode(pairs_: pw.Table) -> pw.Table:
    totals = pairs(pairs_).groupby(pw.this.k).reduce(pw.this.k, n=pw.reducers.sum(pw.declare_type(int, pw.this.v)))
    return signed(totals.filter(pw.this.n != 0), pw.this.k)


def difference(a: pw.Table, b: pw.Table) -> pw.Table:
    signs = pw.Table.concat_reindex(a.select(pw.this.r, sign=1), b.select(pw.this.r, sign=-1))
    totals = signs.groupby(pw.this.r).reduce(pw.this.r, n=pw.reducers.sum(pw.this.sign))
    return signed(totals.filter(pw.this.n != 0), pw.this.r)


BELOW_ZERO = ("a pathway table is a set of rows, so a record's multiplicity is a number of rows and never below "
              "zero: {what}")
NO_NEGATION = ("pathway has no negation of a table (a table is a set of rows), and noop_loop's body negates one to "
               "check that a loop whose differences cancel goes quiet; written over a signed count column instead, "
               "the body would cancel inside one groupby and send nothing around the loop, checking nothing")
NO_TIMER = ("pathway's only clock is its processing time, 'when the record arrives to the Pathway engine' (its guide "
            "'Understanding Temporal Behavior'), and its temporal operators act on event times held in the data; an "
            "output cannot appear or leave at a version at which no input arrives, as document 000's {what} needs")

PROGRAMS: dict[str, Callable[..., pw.Table] | str] = {
    "word_count": word_count,
    "count_by_key": count_by_key,
    "sum_by_key": sum_by_key,
    "distinct": distinct_program,
    "join": join,
    "semijoin": semijoin,
    "antijoin": antijoin,
    "left_outer_join": left_outer_join,
    "reachability": reachability,
    "connected_components": connected_components,
    "geometric_series": geometric_series,
    "distinct_lengths": distinct_lengths,
    "min_max_count_distinct": min_max_count_distinct,
    "difference": difference,
    "concat": concat,
    "add_one_squares": add_one_squares,
    "plus_five_evens": plus_five_evens,
    "name_lengths": name_lengths,
    "noop_loop": NO_NEGATION,
    "three_hops": three_hops,
    "enrichment": enrichment,
    "explode": explode,
    "timed_copies": NO_TIMER.format(what="join_function"),
    "temporal_window": NO_TIMER.format(what="temporal filter"),
}


# -- versions ----------------------------------------------------------------------


def less_equal(a: Any, b: Any) -> bool:
    """Document 001's product order on versions (integers compare as numbers)."""
    if isinstance(a, int):
        return a <= b
    return all(x <= y for x, y in zip(a, b, strict=True))


def chain(versions: list) -> list:
    """The versions in order, when every two of them are comparable.

    Raises:
        Unsupported: two incomparable versions, which one processing time after another cannot keep apart.
    """
    for i, a in enumerate(versions):
        for b in versions[i + 1:]:
            if not less_equal(a, b) and not less_equal(b, a):
                raise Unsupported(
                    f"versions {json.dumps(a)} and {json.dumps(b)} are incomparable, and pathway's time is one "
                    "total order: processed one after the other, the later would see the earlier")
    return sorted(versions, key=lambda v: v if isinstance(v, int) else sum(v))  # on a chain, the sum is monotone


def rows_of(name: str, history: list, times: dict[str, int]) -> list[tuple[str, Any, int, int]]:
    """An input's history as pathway rows (id, record, time, +1 or -1): each version's net change of a
    record inserts or deletes its last copies.

    Raises:
        Unsupported: a record whose multiplicity goes below zero at some version.
    """
    net: dict[tuple[int, str], int] = {}
    records: dict[str, Any] = {}
    for record, version, multiplicity in history:
        text = json.dumps(record, sort_keys=True)
        records[text] = record
        key = (times[json.dumps(version)], text)
        net[key] = net.get(key, 0) + multiplicity
    copies: dict[str, int] = {}
    rows = []
    for (at, text), change in sorted(net.items()):
        have = copies.get(text, 0)
        if have + change < 0:
            raise Unsupported(BELOW_ZERO.format(what=f"input {name}'s record {text} goes below zero"))
        value = to_value(records[text])
        if change > 0:
            rows += [(f"{name}:{text}#{k}", value, at, 1) for k in range(have, have + change)]
        else:
            rows += [(f"{name}:{text}#{k}", value, at, -1) for k in range(have + change, have)]
        copies[text] = have + change
    return rows


def input_table(rows: list[tuple[str, Any, int, int]]) -> pw.Table:
    """A pathway debug table whose rows arrive at their times (``__time__``) and are inserted or deleted
    (``__diff__``). The frame is built with its types, since pathway cannot tell them from an empty one."""
    frame = pd.DataFrame({
        "cid": pd.Series([row[0] for row in rows], dtype=object),
        "r": pd.Series([row[1] for row in rows], dtype=object),
        "__time__": pd.Series([row[2] for row in rows], dtype="int64"),
        "__diff__": pd.Series([row[3] for row in rows], dtype="int64"),
    })
    return pw.debug.table_from_pandas(frame, schema=InputSchema)


# -- one case --------------------------------------------------------------------------


def answer(start: dict, messages: list[dict]) -> list[dict]:
    """The protocol lines answering one case: output data, the closing output frontier `[]`, the closing line."""
    builder = PROGRAMS.get(start["program"])
    if builder is None:
        return [{"unsupported": f"no program {json.dumps(start['program'])} in this adapter"}]
    if isinstance(builder, str):
        return [{"unsupported": builder}]
    histories: dict[str, list] = {name: [] for name in start["inputs"]}
    for message in messages:
        if "data" in message:
            histories[message["input"]].extend(message["data"])
    try:
        versions = chain(list({json.dumps(v): v for h in histories.values() for _, v, _ in h}.values()))
        times = {json.dumps(version): 2 * (i + 1) for i, version in enumerate(versions)}
        inputs = [rows_of(name, histories[name], times) for name in start["inputs"]]
    except Unsupported as reason:
        return [{"unsupported": str(reason)}]
    version_at = {time: version for version, time in zip(versions, times.values(), strict=True)}
    updates: list[list] = []

    def on_change(key: Any, row: dict, time: int, is_addition: bool) -> None:
        if time not in version_at:
            raise RuntimeError(f"pathway wrote output at time {time}, at which no input arrived")
        multiplicity = row.get("n", 1)  # a signed output's row carries its record's multiplicity
        updates.append([to_json(row["out"]), version_at[time], multiplicity if is_addition else -multiplicity])

    G.clear()  # a fresh graph for each case: pathway builds every table into one global graph
    try:
        result = builder(*(input_table(rows) for rows in inputs))
        pw.io.subscribe(result, on_change=on_change)
        pw.run(monitoring_level=pw.MonitoringLevel.NONE, default_logging=False)
    except Exception as error:  # pathway's own failure is the finding, reported with its type
        message = "".join(traceback.format_exception_only(error)).strip()
        return [{"error": f"pathway raised {message[:1500]}"}]
    finally:
        G.clear()
    # The whole case is answered at its end: every version is complete at once, which the output frontier says.
    return ([{"data": updates}] if updates else []) + [{"frontier": []}, {"done": True}]


def write(message: dict) -> None:
    PROTOCOL.write(json.dumps(message) + "\n")


def main() -> None:
    start: dict | None = None
    messages: list[dict] = []
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as error:
            write({"error": f"unreadable line: {error}"})
            start = None
            continue
        if "case" in message:
            start, messages = message, []
        elif message.get("end"):
            if start is None:
                write({"error": "end of a case that never started"})
                continue
            began = time.monotonic()
            for reply in answer(start, messages):
                write(reply)
            if TIMES:
                sys.stderr.write(f"pathway adapter: {start['case']} in {time.monotonic() - began:.3f} s\n")
            start = None
        elif start is not None:
            messages.append(message)


if __name__ == "__main__":
    main()
