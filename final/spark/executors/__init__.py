"""Keyed state on Spark's executors: a query's plan lowered onto Structured Streaming, each keyed step's state in
Spark's state store (issue 43, item 1; a first slice).

``follow`` keeps all of ``final/``'s state in the one Python driver:
Structured Streaming only cuts the micro-batches, and a restart reads every
table again and recomputes. Here the logical plan a query compiles to
(``sql.logical``) is lowered a second way (``lowering``): the changes flow
as rows of a streaming DataFrame, ``(version, multiplicity, row)``
(``changes``); stateless steps run in ``mapInArrow`` on the executors; a
keyed step is a ``transformWithState`` operator keyed by its key, whose
per-key state lives in Spark's state store (RocksDB, changelog
checkpointing) and whose code is ``final/``'s own (``steps``: a GROUP BY is
``operators.aggregate.Aggregates`` over ``sql.lower.grouping``'s
functions, on one key's groups). The driver plans the micro-batches and
holds no table's rows: a task reads each commit's change feed, a data
set's queries are one stream, and each query's output is a Delta table of
change rows, a micro-batch's written once (``run``).

What runs where today: a scan, filters and projections, and GROUP BY with
COUNT, COUNT(DISTINCT), SUM, AVG, MIN, MAX, STDDEV and the rest of
``final/``'s aggregates; every other step (joins, DISTINCT, set
operations, top-k, windows, a global aggregate, WITH RECURSIVE) is refused
before anything starts (``lowering.check_placement``), and stays with the
driver's follow. ``python -m final.spark follow --state executors`` runs it
(``run.follow_on_executors``), and ``explain`` says where each step runs.

Found feasible in PySpark 4.3 (``local[2]``, RocksDB provider, changelog
checkpointing on):

- ``groupBy(...).transformWithState`` (the row form of
  ``transformWithStateInPandas``; the same operator) runs, fed by a Python
  streaming data source, in the ``Append`` output mode with no time mode.
  It needs ``protobuf`` (its state calls are protobuf messages); without it
  the Python worker dies on ``ImportError: cannot import name 'descriptor'
  from 'google.protobuf'``. The row form is used: the pandas form hands a
  nullable integer column over as floats.
- Two ``transformWithState`` operators chain (the second grouping the
  first's output by another key) with no event time or watermark: each
  keeps its own state, and the result is exact at every version.
- After ``kill -9`` anywhere in a micro-batch, a restart with the same
  checkpoint plans the same micro-batch from Spark's offset log, loads the
  state as of the last committed micro-batch, and runs it again; the
  micro-batches after it read only later commits. Spark 4.3 checks that
  every state store of a micro-batch committed
  (``STATE_STORE_COMMIT_VALIDATION_FAILED`` otherwise), so a sink must run
  a micro-batch it already wrote, and skip only its write.
- Whole versions: a micro-batch is a range of whole commits (the source's
  offsets count commits; a commit is one version), and a key's handler gets
  its rows of a micro-batch in no order, so it sorts them by version and
  applies them a version at a time, emitting each version's changes.

The design of the rest of item 1 (not built): every keyed step is one
``transformWithState`` whose state is the key's part of ``final/``'s
arrangement. An equi-join keys both sides by the join key (a ``union`` of
the two sides' changes, tagged by side, so one operator sees both): state
is each side's rows and multiplicities per key (a ``MapState`` keyed by
row, so a change touches only its rows), and a version's output is 003's
delta of the join, ``dA x B + A' x dB``, from ``final/``'s join code on
the key's two collections; LEFT/RIGHT/FULL keep, per key, whether the other
side is empty. DISTINCT, set operations (``threshold``) and semijoin or
antijoin are keyed by the whole row (or the join key) with a multiplicity
per row (``ThresholdInPlace``'s per-record rule); top-k by its partition
(``top_k``'s per-key window); MIN/MAX over large groups would keep the
``Hierarchy``'s buckets as map entries rather than one value per key.
Chained operators exchange change rows through Spark's shuffle, each with
its own key. ``WITH RECURSIVE`` stays on the driver: a loop's rounds are
versions of a partial order that a micro-batch cannot express.
"""

from .changes import ChangeStream
from .lowering import PlacementError, check_placement, lowered, placement
from .run import WORKERS, DeltaSink, follow_on_executors, start

__all__ = ["WORKERS", "ChangeStream", "DeltaSink", "PlacementError", "check_placement", "follow_on_executors",
           "lowered", "placement", "start"]
