"""Solutions to the exercises of ``spark_pipeline.ipynb``, each named after its checker in ``exercises.spark``."""

from __future__ import annotations

from decimal import Decimal

null_totals = {1: (1, 1, Decimal("12.50")), None: (1, 1, Decimal("6.00")), 2: (2, 0, None)}
"""At version 2: group 1 keeps trip 1 at its corrected fare (trip 2 moved to group 2); the NULL group lost
trip 3 and holds trip 6; group 2 holds trips 2 and 4, both NULL fares, so COUNT(*) is 2, COUNT(fare) 0 and
SUM NULL; group 3 lost its only trip, so it has no row."""


def fares_program(trips):
    """COUNT(fare_amount) and MAX(fare_amount) by passenger_count: ``aggregate`` skips NULL fares, keeps every group."""
    found = trips.aggregate(lambda trip: trip[1], {
        "fares": ("count", lambda trip: trip[2]),
        "max_fare": ("max", lambda trip: trip[2]),
    })
    return found.map(lambda pair: (pair[0], dict(pair[1])["fares"], dict(pair[1])["max_fare"]))


lost_retraction = {
    (1, (1, 2), 1, 0), (1, (1, 3), 0, 1),
    (2, (1, 1), 1, 0), (2, (1, 2), 0, 1),
    (3, (1, 1), 1, 0), (3, (1, 2), 0, 1),
}
"""Group 1 is one trip too many in final/ from version 1 on (the old copy of trip 1 is never retracted):
at each version, Spark SQL's row is missing from final/ and final/'s row is one Spark SQL does not have."""


def _fares_counting_rows(trips):
    """Counts every trip of a group, NULL fares included: COUNT(*), not COUNT(fare_amount)."""
    found = trips.aggregate(lambda trip: trip[1], {
        "fares": ("count", lambda trip: 1),
        "max_fare": ("max", lambda trip: trip[2]),
    })
    return found.map(lambda pair: (pair[0], dict(pair[1])["fares"], dict(pair[1])["max_fare"]))


MISTAKES = {
    "null_totals": {1: (1, 1, Decimal("12.50")), None: (1, 1, Decimal("6.00")), 2: (2, 0, 0)},
    "fares_program": _fares_counting_rows,
    "lost_retraction": {(1, (1, 2), 1, 0), (1, (1, 3), 0, 1)},
}
"""A plausible wrong answer per exercise: a SUM of only NULLs given as 0; NULL fares counted; the fault
reported only at the version where the retraction was lost."""
