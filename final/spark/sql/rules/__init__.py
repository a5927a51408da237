"""Rewrite rules over the logical plan, each its own module, run in the order ``RULES`` states.

A rule takes a plan and returns an equal one (the same rows, with the same
multiplicities, at every version) that is cheaper to keep up to date or that
lowering can build at all. The order matters and is stated once here, as
sqlglot's optimizer states its ``RULES``:

1. ``decorrelate``: subqueries in expressions become joins: EXISTS a
   semijoin, NOT EXISTS an antijoin, IN and NOT IN (with NOT IN's NULL rules)
   a semijoin and a null-aware antijoin, a scalar subquery a left join with
   its value, correlated ones grouped by their correlation (Neumann and
   Kemper, "Unnesting Arbitrary Queries", 2015, for the shapes SQL writes);
   it runs first, so the joins it makes are pushed into like any other;
2. ``factor_or``: a conjunct found in every branch of an OR is taken out of
   it (TPC-H Q19's join key sits in each of its three branches);
3. ``push_down``: WHERE's conjuncts move to the inputs they read, and
   those that read two sides of a join become its condition (a comma join
   becomes an equi-join, not every pair);
4. ``window_top_k``: a window's ROW_NUMBER kept to its first k rows
   (``WHERE rn = 1``) is computed over a top-k per partition, which
   ``push_down`` has put the filter right above;
5. ``prune``: what each join arranges, and what each SELECT computes, are
   only the columns read above it;
6. ``delta_join``: three inputs joined by inner equi-joins become one
   delta join (003), outside loops.

``rewrite`` returns the plan and the names of the rules that changed it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..logical import Plan
from . import decorrelate, delta_join, factor_or, prune, push_down, window_top_k

Rule = Callable[[Plan], Plan]

RULES: tuple[tuple[str, Rule], ...] = (
    ("decorrelate", decorrelate.apply),
    ("factor_or", factor_or.apply),
    ("push_down", push_down.apply),
    ("window_top_k", window_top_k.apply),
    ("prune", prune.apply),
    ("delta_join", delta_join.apply),
)


def rewrite(plan: Plan) -> tuple[Plan, list[str]]:
    """``plan`` after every rule of ``RULES`` in order, and the names of those that changed it."""
    applied = []
    for name, rule in RULES:
        before = plan.explain()
        plan = rule(plan)
        if plan.explain() != before:
            applied.append(name)
    return plan, applied
