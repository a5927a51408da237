"""The operator families of the engine, one module each."""

from .base import (
    BinaryOperator,
    DataMessage,
    FrontierMessage,
    Holding,
    Logic,
    Operator,
    Pending,
    Refusal,
    UnaryOperator,
)
from .iterate import Egress, Enter, Feedback, Ingress
from .join import Arrange, Constraint, DeltaJoin, HalfJoin, Join
from .linear import Concat, Debug, LinearUnaryOperator
from .reduce import Consolidate, Reduce

__all__ = [
    "Arrange",
    "BinaryOperator",
    "Concat",
    "Consolidate",
    "DataMessage",
    "Constraint",
    "Debug",
    "DeltaJoin",
    "Egress",
    "Enter",
    "Feedback",
    "FrontierMessage",
    "HalfJoin",
    "Holding",
    "Ingress",
    "Join",
    "LinearUnaryOperator",
    "Logic",
    "Operator",
    "Pending",
    "Reduce",
    "Refusal",
    "UnaryOperator",
]
