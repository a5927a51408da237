"""Solutions to the exercises of ``final2_arrangements.ipynb``, each named after its checker in ``exercises.final2``."""

from __future__ import annotations

left_join_at_1 = {
    ("ann", ("tea", "Oslo")): 1,
    (None, ("jam", None)): 1,
    ("bo", ("cake", None)): 1,
    ("cy", ("pie", None)): 1,
}
"""ann matches Oslo; the NULL customer matches nothing (not even the NULL name); bo is gone at version 1; cy has
no customer record at all."""


def two_hops(query, links):
    """Arrange ``links`` once; both hops join with the arranged stream."""
    shared = links.arrange()
    one = query.map(lambda node: (node, node)).join(shared).map(lambda pair: (pair[1][1], pair[1][0]))
    return one.join(shared).map(lambda pair: (pair[1][1], pair[1][0]))


def _two_hops_arranged_twice(query, links):
    """Arranges ``links`` anew for each hop: right answers, but two indexes of links."""
    one = query.map(lambda node: (node, node)).join(links.arrange()).map(lambda pair: (pair[1][1], pair[1][0]))
    return one.join(links.arrange()).map(lambda pair: (pair[1][1], pair[1][0]))


def build_meet(self, version, updates, left=True):
    """Each update ``((key, a), m)`` meets every ``(b, m_b)`` held under ``key``, at the join of the two versions."""
    met = {}
    for (key, value), multiplicity in updates:
        for other_version, entries in self.entries(key).items():
            pairs = met.setdefault(version.join(other_version), [])
            for other, other_multiplicity in entries.items():
                pair = (value, other) if left else (other, value)
                pairs.append(((key, pair), multiplicity * other_multiplicity))
    return met


def _meet_at_the_differences_version(self, version, updates, left=True):
    """Puts every pair at the arriving difference's version, as if what the index holds were all there by then."""
    met = build_meet(self, version, updates, left)
    return {version: [pair for pairs in met.values() for pair in pairs]} if met else {}


MISTAKES = {
    "left_join_at_1": {
        ("ann", ("tea", "Oslo")): 1,
        (None, ("jam", "Nowhere")): 1,
        ("bo", ("cake", None)): 1,
        ("cy", ("pie", None)): 1,
    },
    "two_hops": _two_hops_arranged_twice,
    "build_meet": _meet_at_the_differences_version,
}
"""A plausible wrong answer per exercise: the NULL customer taken to match the customer with a NULL name; links
arranged once per join, which gives the right answers but shares nothing; a pair put at the version of the
difference that arrived, though the record it met may be at a later version (versions arrive in any order)."""
