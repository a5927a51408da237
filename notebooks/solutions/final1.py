"""Solutions to the exercises of ``final1_operators.ipynb``, each named after its checker in ``exercises.final1``."""

from __future__ import annotations

import final

predict_failures = {
    "divide": (final.FunctionError, False),
    "count": (final.RecordError, False),
    "late": (final.VersionError, True),
}
"""map's function raised: FunctionError, and the graph is broken. count met a record that is not a pair while
the graph was stepping: RecordError, and the graph is broken too. The session refused a change at a finished
version before buffering it: VersionError, and nothing changed, so the graph goes on."""


def subscription_logic(record):
    """``(user, start, months)``: the user comes in at ``start`` and goes out ``months`` versions later."""
    user, start, months = record
    return [(user, start, +1), (user, start + months, -1)]


def _subscription_one_short(record):
    """Ends a version early: ``start + months - 1`` is the last version subscribed, not the first one after."""
    user, start, months = record
    return [(user, start, +1), (user, start + months - 1, -1)]


MISTAKES = {
    "predict_failures": {
        "divide": (ZeroDivisionError, False), "count": (final.RecordError, True), "late": (final.VersionError, True)},
    "subscription_logic": _subscription_one_short,
}
"""A plausible wrong answer per exercise: the user's own exception expected from graph.run(), and a bad record
taken for a refused call; the end of a subscription off by one."""
