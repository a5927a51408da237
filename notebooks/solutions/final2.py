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


MISTAKES = {
    "left_join_at_1": {
        ("ann", ("tea", "Oslo")): 1,
        (None, ("jam", "Nowhere")): 1,
        ("bo", ("cake", None)): 1,
        ("cy", ("pie", None)): 1,
    },
    "two_hops": _two_hops_arranged_twice,
}
"""A plausible wrong answer per exercise: the NULL customer taken to match the customer with a NULL name; links
arranged once per join, which gives the right answers but shares nothing."""
