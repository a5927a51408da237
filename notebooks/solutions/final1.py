"""Solutions to the exercises of ``final1_operators.ipynb``, each named after its checker in ``exercises.final1``."""

from __future__ import annotations

import final

read_an_output = {
    "changes(1)": {("a", 2): -1, ("a", 3): 1, ("pen", 1): 1},
    "at(1)": {("a", 3): 1, ("rose", 2): 1, ("is", 1): 1, ("pen", 1): 1},
    "finished(2)": False,
}
"""Version 1 adds a third "a" and a "pen": the count record ("a", 2) goes and ("a", 3) comes. at(1) is the whole
collection there. The session has advanced to 2, so version 2 may still change: it is not finished."""

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
    "read_an_output": {
        "changes(1)": {("a", 1): 1, ("pen", 1): 1},
        "at(1)": {("a", 3): 1, ("rose", 2): 1, ("is", 1): 1, ("pen", 1): 1},
        "finished(2)": False,
    },
    "predict_failures": {
        "divide": (ZeroDivisionError, False), "count": (final.RecordError, True), "late": (final.VersionError, True)},
    "subscription_logic": _subscription_one_short,
}
"""A plausible wrong answer per exercise: version 1's words counted on their own, as if each version had its own
counts; the user's own exception expected from graph.run(), and a bad record
taken for a refused call; the end of a subscription off by one."""
