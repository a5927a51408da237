"""A window's ROW_NUMBER kept to its first k rows (``WHERE rn <= 3``, ``rn = 1``) becomes a top-k per partition
under the window: "the top N per group" and "the latest row per key" kept up to date by ``top_k``.

Without this rule, a change to a partition of n rows sorts all n again
(``Window``'s reduce) and a filter then drops all but k. With it, ``top_k``
keeps each partition sorted and passes on only its first k rows, so a
change costs a binary search and a walk of k rows, and the window
recomputes k rows, not n. The rows are the same: the top-k orders ties by
the whole row, as the window does, so its first k rows are exactly those
numbered 1 to k.

It applies to a filter directly over a window (where ``push_down`` leaves
it) with a conjunct that bounds one of the window's ROW_NUMBERs by an
integer literal (``rn = k``, ``rn <= k``, ``rn < k``, either way round),
when every call of that window depends only on the rows up to the current
one (``WindowCall.prefix``: no LEAD, no frame that reaches past the
current row), so that over the first k rows each has the same value. The
filter stays, to pick ``rn = k`` among them.
"""

from __future__ import annotations

from dataclasses import replace

from ..logical import Filter, Plan, TopK, Window, transform
from ..scalar import Call, Literal, Ref, Scalar, conjuncts

LIMITS = {"=": 0, "<=": 0, "<": -1}
"""How far below the literal the last row kept is, for ``rn op literal``."""

TURNED = {"=": "=", ">=": "<=", ">": "<"}
"""``literal op rn`` as ``rn op' literal``."""


def apply(plan: Plan) -> Plan:
    """``plan`` with each row-number filter over a window computed over a top-k per partition."""
    return transform(plan, _node)


def _node(node: Plan) -> Plan | None:
    if not isinstance(node, Filter) or not isinstance(node.child, Window) or isinstance(node.child.child, TopK):
        return None
    window = node.child
    if not all(call.prefix for call in window.calls):
        return None
    added = window.fields[len(window.child.fields):]
    numbers = {f.id for f, call in zip(added, window.calls, strict=True) if call.function == "row_number"}
    limits = [limit for part in conjuncts(node.condition) if (limit := _limit(part, numbers)) is not None]
    if not limits:
        return None
    top = TopK(window.child, list(window.order), max(min(limits), 0), 0, node.clause, list(window.partition))
    return replace(node, child=replace(window, child=top))


def _limit(part: Scalar, numbers: set[int]) -> int | None:
    """The last row number ``part`` keeps, if it bounds a row number in ``numbers`` by an integer literal."""
    if not isinstance(part, Call) or len(part.args) != 2:
        return None
    left, right = part.args
    symbol = part.name
    if isinstance(left, Literal) and isinstance(right, Ref):
        left, right, symbol = right, left, TURNED.get(symbol, "")
    if not (isinstance(left, Ref) and left.field.id in numbers and isinstance(right, Literal)):
        return None
    value = right.value
    if symbol not in LIMITS or not isinstance(value, int) or isinstance(value, bool):
        return None
    return value + LIMITS[symbol]
