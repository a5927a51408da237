"""Stage final: the complete engine, built on v5's partially ordered versions.

New since v5: a package with one module per concept (``order``,
``collection``, ``trace``, ``progress``, ``logic``, ``topology``, ``edges``,
``compile`` with its passes ``strategies`` and ``fusion``, ``graph``,
``stream``, ``sessions``, ``viz``, and ``operators/`` with one module per
operator family, each family's operators beside the stream methods that
build them), and what the documents add beyond document 002:

- progress tracked once per graph (``final.progress``), as timely dataflow
  does: pointstamps counted where messages wait and where operators hold
  versions back, path summaries through loops, and the frontier anywhere
  worked out from them, instead of frontier messages passed from operator
  to operator (v3..v5, as 002 teaches); loops end by the same rule, as soon
  as nothing in them can still be at a version;
- a graph recorded as it is built (``final.topology``) and compiled once
  by ``finalize()`` (``final.compile``), in stages that can each be seen:
  passes over the recorded graph (each reduction's rendering chosen, then
  linear operators fused), then its progress tracker, fixed from then on,
  refusing a cycle that does not advance versions, then every operator and
  edge built whole;
- document 000: the general linear operator
  (``explode``, ``join_function``, ``temporal_filter``), and linear operators
  fused, when the graph is compiled, into the operator next to them
  (``final.fusion``): a chain becomes part of the operator that alone reads
  it, or that it alone reads from;
- document 004: in-place ``count``, ``sum``, ``distinct`` and ``threshold``
  (running totals where versions have one coordinate), NULL-aware
  ``count_total``/``sum_total``, hierarchical ``min``/``max`` (one hierarchy
  for both in ``aggregate``; outside loops a key's hierarchy is as deep as
  its values need), ``count_distinct``, and ``aggregate`` factoring several
  aggregates (outside loops one operator, a version's records in one pass),
  each reduction's rendering, in place or general, chosen by a compile pass
  (``final.strategies``);
- document 003: ``arrange()`` and shared
  arrangements, ``half_join``, the delta join ``join_many``,
  ``semijoin``/``antijoin``, and NULL-aware ``left_join``/``left_join_chain``;
- 002's closing list: a work budget per ``step()``, ``graph.frontiers()``
  and ``graph.progress`` for progress, frontiers reaching a reader as
  changes, and speed: versions are tuples, indexes keep one dict of values
  per key and version, reductions over totally ordered versions change their
  state in place;
- ``final.viz``: graphviz diagrams of the graph as recorded, as each pass
  left it and as compiled (with the tracker's counts, if asked), what each
  pass changed, and product-order plots;
- the ends of a graph a user holds, apart from the edges operators use
  (``final.sessions``): 002's input writer and connected reader, and, for
  programs rather than lessons, input sessions that
  buffer changes and send a version's worth at once, ``Output`` handles that
  answer for any finished version, ``graph.run()`` (with CPython's cyclic
  garbage collector paused while it works, ``final.collector``), names on
  inputs, outputs and operators, a read-only view of the graph's shape, and
  failures that break the graph loudly instead of leaving it wrong
  (``final.errors``); and ``add_multiplicity``, the multiset helper
  (record -> multiplicity, a record at zero dropped) with which a program
  sums an output's changes into a result.

Everything v5 computes, final computes the same: it runs the whole shared suite.
"""

from .collection import Collection
from .edges import DataMessage, DifferenceStreamReader, DifferenceStreamWriter
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
from .graph import Graph, GraphBuilder
from .order import Antichain, Version
from .progress import ProgressTracker
from .sessions import ConnectedReader, FrontierMessage, InputSession, InputWriter, Output
from .stream import ArrangedStream, DifferenceStreamBuilder
from .trace import Arrangement, Index, add_multiplicity

__version__ = "0.3.0"
"""The package's version (``pyproject.toml`` reads it): CHANGELOG.md says what each one changed."""

__all__ = [
    "Arrangement",
    "Antichain",
    "ArrangedStream",
    "BrokenGraphError",
    "Collection",
    "ConnectedReader",
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
    "InputWriter",
    "IterationError",
    "Output",
    "ProgressTracker",
    "RecordError",
    "Version",
    "VersionError",
    "add_multiplicity",
]
