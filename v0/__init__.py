"""Stage v0: static collections, multisets whose multiplicities may be negative.

New since nothing: ``Collection`` and the verbs of differential dataflow
(``concat negate map filter flat_map reduce count sum min max distinct
consolidate join iterate``), computed from scratch on data that never changes.
Every later stage must agree with this one; the tests use it as their oracle.
Source: document 002, "v0: Intro / What are we trying
to compute?".
"""

from .collection import Collection
from .errors import DataflowError, IterationError, RecordError

__all__ = ["Collection", "DataflowError", "IterationError", "RecordError"]
