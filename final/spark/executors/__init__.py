"""Keyed state on Spark's executors: a query's plan lowered onto Structured Streaming, each keyed step's state in
Spark's state store (issue 43, item 1).

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
set's queries are one stream, and each query's output is written to its
Delta table as the driver's follow writes it, a micro-batch's once
(``run``).

What runs where: a scan, filters and projections; GROUP BY and global
aggregates with every aggregate of ``final/``; joins of every kind (a
delta join as the binary joins it was made from), DISTINCT, set
operations, top-k, windows and a scalar subquery's one row, each keyed by
its own key (``steps.KeyedStep``, the step built by ``sql.lower`` itself
over ``at_once`` streams). ``WITH RECURSIVE`` is refused before anything
starts (``lowering.check_placement``) and stays with the driver's follow:
a loop's rounds are versions of a partial order that a micro-batch cannot
express. ``python -m final.spark follow --state executors`` runs it
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

How a keyed step keeps a key: its state is the key's rows of each input
(a ``ValueState`` of them, pickled), and a version's output change is
the step over the key's rows after the version minus before it, which is
000's definition of a difference collection's operator; an inner join is
bilinear, so it takes 003's ``dA x B + A' x dB`` and never pairs rows that
did not change. A step's cost per changed key is thus the key's rows: a
large group (a global top-k, a cross join, a NULL join key's rows) is one
task's work. Chained steps exchange change rows through Spark's shuffle,
each with its own key.
"""

from .changes import ChangeStream
from .lowering import PlacementError, check_placement, lowered, placement
from .run import WORKERS, DeltaSink, follow_on_executors, start

__all__ = ["WORKERS", "ChangeStream", "DeltaSink", "PlacementError", "check_placement", "follow_on_executors",
           "lowered", "placement", "start"]
