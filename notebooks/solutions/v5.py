"""Solutions to the exercises of ``v5_partial_orders.ipynb``, and a plausible mistake for each."""

from __future__ import annotations

allowed_by_frontier = {(2, 3), (5, 0), (0, 4), (2, 1)}
"""(0, 3) <= (2, 3) and (0, 3) <= (0, 4); (4, 0) <= (5, 0); (2, 1) is itself an element.
(1, 2), (3, 0) and (1, 1) are below or beside the staircase: finished."""

advance_by_by_hand = {
    # (v join (1, 2)) meet (v join (2, 0)):
    (0, 0): (1, 0),  # (1, 2) meet (2, 0)
    (0, 1): (1, 1),  # (1, 2) meet (2, 1)
    (0, 3): (1, 3),  # (1, 3) meet (2, 3)
    (1, 1): (1, 1),  # (1, 2) meet (2, 1): it does not move, though the frontier has passed it
}

correction_at_the_join = {("fruit", 1): 1, ("fruit", 2): -2, ("fruit", 3): 1}
"""Before (1, 1) the differences add up to ('fruit', 1): -1 and ('fruit', 2): +2 (two versions each
replaced the count 1 by 2); the count at (1, 1) is 3, so add ('fruit', 1), take away both
('fruit', 2) and add ('fruit', 3)."""


def build_advance_by(self, frontier):
    """The meet, over the frontier's elements, of this version joined with each."""
    if not frontier.elements:
        return self
    joins = [self.join(element) for element in frontier.elements]
    advanced = joins[0]
    for other in joins[1:]:
        advanced = advanced.meet(other)
    return advanced


def _advance_by_the_first_element(self, frontier):
    """Joins with one frontier element only: too far whenever the frontier has another one."""
    return self.join(frontier.elements[0]) if frontier.elements else self


MISTAKES = {
    # Lexicographic order, v4's: every candidate is at or after (0, 3).
    "allowed_by_frontier": {(1, 2), (2, 3), (5, 0), (0, 4), (3, 0), (1, 1), (2, 1)},
    # The join of the joins instead of their meet: too far, past versions the frontier still allows.
    "advance_by_by_hand": {(0, 0): (2, 2), (0, 1): (2, 2), (0, 3): (2, 3), (1, 1): (2, 2)},
    # "No input at (1, 1), so no output there."
    "correction_at_the_join": {},
    # Only the first frontier element: (0, 0) with frontier {(0, 1), (1, 0)} moves to (0, 1), not (0, 0).
    "build_advance_by": _advance_by_the_first_element,
}
