"""Stage final: the complete engine, built on v5's partially ordered versions.

New since v5: a package with one module per concept (``order``,
``collection``, ``trace``, ``graph``, ``aggregates``, ``joins``, ``viz``, and
``operators/`` with one module per operator family) instead of one file per
stage concept, and what the documents add beyond document 002:

- document 000: the general linear operator
  (``explode``, ``join_function``, ``temporal_filter``), and linear operators
  fused, when the graph is finalized, into the operator they read from: a
  chain of them becomes one, a map after a join becomes part of the join;
- document 004: hierarchical ``min``/``max``,
  in-place NULL-aware ``count_total``/``sum_total``, ``threshold``,
  ``count_distinct``, and ``aggregate`` factoring several aggregates;
- document 003: ``arrange()`` and shared
  arrangements, ``half_join``, the delta join ``join_many``,
  ``semijoin``/``antijoin``, and NULL-aware ``left_join``/``left_join_chain``;
- 002's closing list: a work budget per ``step()``, frontiers sent as
  changes, ``graph.frontiers()`` for progress, and speed: versions are
  tuples, indexes keep one dict of values per key and version, a reduction
  over totally ordered versions merges each key's history in place, and a
  loop ends as soon as nothing inside it holds data (``Feedback``), instead
  of stepping, as v5 does, through each iteration at which an earlier
  version changed;
- ``final.viz``: graphviz diagrams and product-order plots;
- for programs rather than lessons (``final.sessions``): input sessions that
  buffer changes and send a version's worth at once, ``Output`` handles that
  answer for any finished version, ``graph.run()``, names on inputs, outputs
  and operators, a read-only view of the graph's shape, and failures that
  break the graph loudly instead of leaving it wrong (``final.errors``).

Everything v5 computes, final computes the same: it runs the whole shared suite.
"""

from .collection import Collection
from .errors import (
    BrokenGraphError,
    DataflowError,
    FrontierError,
    FunctionError,
    GraphError,
    IterationError,
    RecordError,
    VersionError,
)
from .graph import (
    DataMessage,
    DifferenceStreamReader,
    DifferenceStreamWriter,
    FrontierMessage,
    Graph,
    GraphBuilder,
)
from .order import Antichain, Version
from .progress import ProgressTracker
from .sessions import InputSession, Output
from .stream import ArrangedStream, DifferenceStreamBuilder
from .trace import Arrangement, Index

__all__ = [
    "Arrangement",
    "Antichain",
    "ArrangedStream",
    "BrokenGraphError",
    "Collection",
    "DataMessage",
    "DataflowError",
    "DifferenceStreamBuilder",
    "DifferenceStreamReader",
    "DifferenceStreamWriter",
    "FrontierError",
    "FrontierMessage",
    "FunctionError",
    "Graph",
    "GraphBuilder",
    "GraphError",
    "Index",
    "InputSession",
    "IterationError",
    "Output",
    "ProgressTracker",
    "RecordError",
    "Version",
    "VersionError",
]
