"""The SQL fuzzer (final/spark/fuzz/): its generator, its comparison, and a run against Spark SQL.

The generator must be a function of its seed (a reported case is rerun from
``--seed`` and its number), cover every construct of the subset and the
awkward values (NULL, NaN, signed zeros, infinities, decimals at their
scale, empty and unicode strings, tables that empty), and stay inside the
subset: a seeded run against Spark SQL finds no difference and no query
either side refuses. A planted fault shows the check is not vacuous: it is
found, shrunk to a case of a row or two, and written as a reproducer that
runs without Spark.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from decimal import Decimal

import pytest

from final.spark import fuzz
from final.spark.query import Table
from final.spark.sql import compile_sql
from final.spark.sqlfloat import NAN


def test_the_generator_is_a_function_of_its_seed() -> None:
    first = fuzz.generate(7, 40)
    assert fuzz.generate(7, 40) == first
    # A case does not depend on the cases before it: one is rerun from its number alone.
    assert fuzz.generate_case(7, 33) == first[33]
    assert [case.text for case in fuzz.generate(8, 40)] != [case.text for case in first]


def test_the_generator_covers_every_construct_of_the_subset() -> None:
    counts = fuzz.coverage(fuzz.generate(3, 600))
    assert {name: count for name, count in counts.items() if count < 3} == {}


def test_the_generated_data_holds_the_awkward_values() -> None:
    """Across a few data sets: NULL, NaN, both zeros, both infinities, DECIMALs at their column's scale, empty
    and non-BMP strings, a table that is empty at some version, rows deleted and inserted again."""
    datasets = [fuzz.generate_case(5, number * fuzz.QUERIES_PER_DATASET).dataset for number in range(40)]
    values = {(kind, value if not isinstance(value, float) else "nan" if math.isnan(value) else repr(value))
              for dataset in datasets for index, table in enumerate(dataset.tables)
              for commit in dataset.commits for row in commit.rows[index]
              for (_, kind), value in zip(table.columns, row, strict=True)}
    seen = {value for _, value in values}
    assert {None, "nan", "inf", "-inf", "0.0", "-0.0", "", "😀"} <= seen
    for kind, value in values:
        if kind.startswith("DECIMAL") and value is not None:
            scale = int(re.search(r",(\d+)\)", kind).group(1))
            assert value.as_tuple().exponent == -scale, (kind, value)
    assert any(not commit.rows[index] for dataset in datasets for commit in dataset.commits[1:]
               for index in range(len(dataset.tables)))
    assert any(commit.churn for dataset in datasets for commit in dataset.commits)
    assert all(4 <= len(dataset.commits) <= 6 for dataset in datasets)
    assert all(len(rows) <= fuzz.MAX_ROWS for dataset in datasets for commit in dataset.commits
               for rows in commit.rows)


def test_a_dataset_s_updates_replay_its_versions() -> None:
    dataset = fuzz.generate_case(11, 0).dataset
    held = [dict() for _ in dataset.tables]
    for version, commit in enumerate(dataset.commits):
        for name, row, count in dataset.updates(version):
            table = held[dataset.names.index(name)]
            table[row] = table.get(row, 0) + count
        for index, rows in enumerate(commit.rows):
            assert {row: count for row, count in held[index].items() if count} == \
                {row: rows.count(row) for row in rows}


def test_values_compare_exactly_but_for_signed_zero_and_summed_doubles() -> None:
    same = fuzz.same_rows
    assert same([(Decimal("1.50"),)], {(Decimal("1.50"),): 1}) == []
    assert same([(Decimal("1.50"),)], {(Decimal("1.5"),): 1})  # the scale is part of the value
    assert same([(1,)], {(True,): 1})  # an int is not a bool
    assert same([(1.0,)], {(1,): 1})  # nor a double
    assert same([(-0.0,)], {(0.0,): 1}) == []
    assert same([(float("nan"),)], {(NAN,): 1}) == []
    assert same([(1,), (1,)], {(1,): 1}) == [((1,), 2, 1)]  # multisets
    assert same([(1,)], {(1,): 1, (2,): -1}) == [((2,), 0, -1)]
    summed = 0.1 + 0.2
    assert same([("a", summed)], {("a", 0.3): 1})
    assert same([("a", summed)], {("a", 0.3): 1}, tolerant=(1,)) == []
    assert same([("a", summed)], {("b", 0.3): 1}, tolerant=(1,))
    assert fuzz.tolerant_columns("SELECT SUM(x) AS c0, k AS c1 FROM t", ("double", "double")) == (0, 1)
    assert fuzz.tolerant_columns("SELECT MAX(x) AS c0 FROM t", ("double",)) == ()
    # A spread too: Spark updates a running mean row by row (var_samp of 733, 926, ... ends in other bits).
    assert fuzz.tolerant_columns("SELECT k AS c0, var_samp(i) AS c1 FROM t GROUP BY k", ("int", "double")) == (1,)


def test_a_reproducer_replays_without_spark(tmp_path) -> None:
    """A reproducer written for a made-up finding passes when the answers are right and fails, naming the
    version, when one is wrong."""
    table = Table("t0", (("k", "INT"), ("d", "DECIMAL(4,2)")))
    dataset = fuzz.Dataset((table,), (
        fuzz.DatasetCommit(((((1, Decimal("1.50")), (2, None)),)),),
        fuzz.DatasetCommit((((1, Decimal("1.50")),),), ((0, (1, Decimal("1.50"))),)),
    ))
    case = fuzz.FuzzCase(dataset, "SELECT k AS c0, SUM(d) AS c1 FROM t0 GROUP BY k", origin="made up")
    right = (fuzz.Answer(((1, Decimal("1.50")), (2, None)), ("int", "decimal(14,2)")),
             fuzz.Answer(((1, Decimal("1.50")),), ("int", "decimal(14,2)")))
    wrong = (right[0], fuzz.Answer(((1, Decimal("1.5")),), ("int", "decimal(14,2)")))
    for name, answers in (("right", right), ("wrong", wrong)):
        outcome = fuzz.Outcome("differ", 2, "rows", 1, "made up", answers, answers[-1])
        path = fuzz.write_reproducer(case, outcome, str(tmp_path), name)
        spec = importlib.util.spec_from_file_location(f"reproducer_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if name == "right":
            getattr(module, f"test_{name}")()
        else:
            wrong_row = r"version 1: rows differ: \(1, Decimal\(\"1\.5\"\)\): Spark 1, final/ 0"
            with pytest.raises(AssertionError, match=wrong_row):
                getattr(module, f"test_{name}")()


def test_a_top_k_s_ties_at_its_cut_compare_as_spark_ranks_them() -> None:
    """Spark breaks ties at a LIMIT's cut in no stated order: there, as many rows on both sides is the same
    answer, whichever rows they are; anywhere else in the window a row is a row."""
    table = Table("t0", (("k", "INT"), ("s", "STRING")))
    rank = compile_sql("SELECT k, s FROM t0 ORDER BY k LIMIT 3", {"t0": table}).rank
    spark = [(0, "z"), (1, "b"), (2, "c")]
    assert fuzz.same_rows(spark, {(0, "z"): 1, (1, "b"): 1, (2, "d"): 1}, rank=rank) == []
    assert fuzz.same_rows(spark, {(0, "z"): 1, (1, "b"): 1, (2, "d"): 1}) != []
    assert fuzz.same_rows(spark, {(0, "z"): 1, (1, "a"): 1, (2, "c"): 1}, rank=rank) == [
        ((1, "b"), 1, 0), ((1, "a"), 0, 1)]
    assert fuzz.same_rows(spark, {(0, "z"): 1, (1, "b"): 1, (2, "c"): 1, (2, "d"): 1}, rank=rank) != []


def test_a_reproducer_holds_dates_and_replays_a_top_k(tmp_path) -> None:
    """A reproducer of a query over DATE and TIMESTAMP columns imports what its values need, and compares a
    top-k as the fuzzer does: Spark's row tied at the cut stands for ours."""
    table = Table("t0", (("k", "INT"), ("d", "DATE"), ("ts", "TIMESTAMP")))
    rows = ((1, date(2024, 1, 31), datetime(2024, 2, 29, 23, 59, 59, 999999)),
            (2, date(2024, 2, 29), None), (2, date(1969, 12, 31), datetime(1970, 1, 1)))
    dataset = fuzz.Dataset((table,), (fuzz.DatasetCommit((rows,)),))
    case = fuzz.FuzzCase(dataset, "SELECT k AS c0, add_months(d, 1) AS c1, ts AS c2 FROM t0 ORDER BY c0 LIMIT 2",
                         origin="made up")
    spark = fuzz.Answer(((1, date(2024, 2, 29), datetime(2024, 2, 29, 23, 59, 59, 999999)),
                         (2, date(2024, 3, 29), None)), ("int", "date", "timestamp"))
    outcome = fuzz.Outcome("differ", 1, "rows", 0, "made up", (spark,), spark)
    path = fuzz.write_reproducer(case, outcome, str(tmp_path), "dated")
    assert "from datetime import date, datetime\n" in open(path).read()
    spec = importlib.util.spec_from_file_location("reproducer_dated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_dated()  # final/ keeps (2, 1970-01-31, ...) at the cut (the lower row), Spark the other


@contextmanager
def fuzzer_settings(spark) -> Iterator[None]:
    """The suite's session with the fuzzer's Spark settings (``SPARK_CONF``: one partition, no generated code), as
    ``python -m final.spark fuzz`` runs, while the block runs; the suite's own put back after."""
    saved = {key: spark.conf.get(key, None) for key in fuzz.SPARK_CONF}
    try:
        for key, value in fuzz.SPARK_CONF.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@pytest.mark.slow
def test_a_seeded_run_finds_no_difference(spark) -> None:
    with fuzzer_settings(spark):
        found = fuzz.fuzz(spark, seed=2024, queries=30, shrink=0)
    assert [(finding.case.origin, finding.outcome.detail) for finding in found.refused] == []
    assert [(finding.case.origin, finding.case.text, finding.outcome.detail)
            for finding in found.differences] == []
    assert found.versions >= 3 * found.queries


def _drops_twos(case: fuzz.FuzzCase, snapshot: dict) -> dict:
    """A planted fault: every result row holding the integer 2 is lost."""
    return {row: count for row, count in snapshot.items()
            if not any(type(value) is int and value == 2 for value in row)}


@pytest.mark.slow
def test_a_planted_fault_is_found_shrunk_and_written(spark, tmp_path) -> None:
    with fuzzer_settings(spark):
        found = fuzz.fuzz(spark, seed=1, queries=6, first=10, out=str(tmp_path), shrink=1, fault=_drops_twos,
                          shrink_seconds=180)
    assert found.differences, "the planted fault went unnoticed"
    finding = found.differences[0]
    assert finding.outcome.kind == finding.shrunk_outcome.kind == "rows"
    shrunk = finding.shrunk.dataset
    rows = {row for commit in shrunk.commits for held in commit.rows for row in held}
    assert len(shrunk.commits) == 1 and len(rows) <= 2, shrunk
    assert len(finding.shrunk.text) <= len(finding.case.text)
    # The reproducer replays against the engine itself, which has no fault: it passes.
    spec = importlib.util.spec_from_file_location("planted", finding.path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    next(getattr(module, name) for name in dir(module) if name.startswith("test_"))()
    assert math.isfinite(found.seconds)


@pytest.mark.slow
def test_the_command_line_runs_and_sums_up(spark, tmp_path, capsys) -> None:
    from final.spark.__main__ import main

    with fuzzer_settings(spark):  # the command sets them on the session it gets (this one): put back after
        status = main(["fuzz", "--queries", "4", "--seed", "3", "--out", str(tmp_path)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 0, lines
    assert re.fullmatch(r"4 queries x \d+ versions checked, 0 differences", lines[-1])
    assert main(["fuzz", "--queries", "0", "--out", str(tmp_path)]) == 2
    assert "error: --queries" in capsys.readouterr().err
