"""The operator families of the engine: one module each, its operators beside the stream methods that add them.

A family is a module here holding its operator classes and a ``...Methods``
class with the stream methods that build them; ``STREAM_METHODS`` lists
those classes, and a stream (``final.stream.DifferenceStreamBuilder``) has
every method of every family. A new family is one module and one line in
``STREAM_METHODS``. What a family may use of the engine, the internal protocol,
is written down in ``base``.
"""

from ..logic import Logic
from .aggregate import AggregateInPlace, AggregateMethods, Hierarchy, HierarchyInPlace
from .base import Operator, Pending, Place, StreamMethods
from .delta_join import Constraint, DeltaJoin, DeltaJoinMethods
from .iterate import Egress, Enter, Feedback, Ingress, IterateMethods
from .join import Arrange, HalfJoin, Join, JoinMethods
from .linear import Concat, Debug, LinearMethods, LinearUnaryOperator
from .reduce import Consolidate, CountInPlace, InPlace, Reduce, ReduceMethods, SumInPlace, ThresholdInPlace
from .top_k import TopKInPlace, TopKMethods

STREAM_METHODS: tuple[type[StreamMethods], ...] = (
    LinearMethods,
    ReduceMethods,
    AggregateMethods,
    TopKMethods,
    JoinMethods,
    DeltaJoinMethods,
    IterateMethods,
)
"""Every family's stream methods, in the order ``help(stream)`` lists them."""

__all__ = [
    "STREAM_METHODS",
    "AggregateInPlace",
    "AggregateMethods",
    "Arrange",
    "Concat",
    "Consolidate",
    "Constraint",
    "CountInPlace",
    "Debug",
    "DeltaJoin",
    "DeltaJoinMethods",
    "Egress",
    "Enter",
    "Feedback",
    "HalfJoin",
    "Hierarchy",
    "HierarchyInPlace",
    "InPlace",
    "Ingress",
    "IterateMethods",
    "Join",
    "JoinMethods",
    "LinearMethods",
    "LinearUnaryOperator",
    "Logic",
    "Operator",
    "Pending",
    "Place",
    "Reduce",
    "ReduceMethods",
    "StreamMethods",
    "SumInPlace",
    "ThresholdInPlace",
    "TopKInPlace",
    "TopKMethods",
]
