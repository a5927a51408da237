"""Solutions to the exercises of ``v4_iteration_lexicographic.ipynb``, and a plausible mistake for each."""

from __future__ import annotations

from v4 import Version

lexicographic_past = [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 1), (1, 2)]
"""Every round of version 0 (the first coordinate decides), and rounds 0..2 of version 1."""

wrong_answer_at_version_2 = [3, 6, 10, 12, 20, 24, 40, 48]
"""Only 5 goes: distinct held 10 twice (5's double at (0, 0), itself at (0, 1)), so 10, 20 and 40 stay."""

input_v4_gets_right = [(1, 0, 1), (16, 1, 1), (16, 2, -1)]
"""Version 1 adds 16, which 1's doubling already reached, and version 2 takes it away again:
16 and 32 should stay, and they do, because distinct holds each of them more than once anyway."""


def build_join(self, other):
    """The least upper bound in lexicographic order: the later of the two versions."""
    return other if self.less_equal(other) else self


def _coordinate_wise_join(self, other):
    """The product order's join, v5's: the coordinate-wise max, a version later than both in lexicographic order."""
    return Version(tuple(max(mine, theirs) for mine, theirs in zip(self.coords, other.coords, strict=True)))


MISTAKES = {
    # The product order's past (v5's): only rounds 0..2 of version 0.
    "lexicographic_past": [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)],
    # The right answer from scratch, not what v4 gives.
    "wrong_answer_at_version_2": [3, 6, 12, 24, 48],
    # Document 002's own history: v4 keeps 6, 12, 24 and 48 at version 2.
    "input_v4_gets_right": [(1, 0, 1), (16, 1, 1), (3, 1, 1), (3, 2, -1)],
    # v5's join: (0, 3) join (1, 0) is (1, 3), which is after (1, 0) in v4's order.
    "build_join": _coordinate_wise_join,
}
