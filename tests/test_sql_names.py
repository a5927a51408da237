"""Spark's names for SELECT items without AS: ``count(1)``, ``(a + b)``, ``round(d, 0)``, ``RANK() OVER (...)``.

Each list below is one query's SELECT list over one table; the compiled
query's columns must be named as Spark SQL 4.3 names them in the same
query's schema (Spark plans the query, it runs nothing). The lists cover
every form of the subset: operators, literals of each type, casts, each
function as written and with the arguments Spark fills in, aggregates,
window functions with their default frames, and subqueries by the outer
columns they read. (A follow refuses a name its Delta table cannot hold:
``tests/test_sql_cli.py``.)
"""

from __future__ import annotations

import pytest

from final.spark.query import Table
from final.spark.sql import compile_sql

TABLE = Table("t", (("a", "INT"), ("b", "BIGINT"), ("s", "STRING"), ("d", "DOUBLE"), ("dt", "DATE"),
                    ("ts", "TIMESTAMP"), ("m", "DECIMAL(10,2)")))

SCALARS = [
    # columns, operators and their nesting, as written and as Spark rewrites them
    "A", "T.A", "(a)", "a + b", "a+b", "t.a + 1", "a * 2 - b", "a + b + 1", "a + (b + 1)", "a * (b + 1)",
    "((a + b))", "-a", "-(a)", "- (a + b)", "- - a", "-(1)", "-(-1)", "-a + 1", "a * -1", "a - -1", "1 - a",
    "a / b", "a % b", "a div b", "a = 1", "a <> 1", "a != 1", "a <=> 1", "NULL = a", "'x' = s", "a = 1 = true",
    "a % 2 = 0", "a IS NOT DISTINCT FROM b", "a IS NULL", "a IS NOT NULL", "NOT (a = 1)", "NOT NOT (a = 1)",
    "NOT true", "a = 1 AND NOT b = 2", "a > 1 OR b < 2", "a = 1 OR a = 2 AND b = 3", "NOT a = 1 OR s IS NULL",
    "a IN (1, 2)", "a IN (1)", "a NOT IN (1, 2)", "s IN ('x', 'y')", "a BETWEEN 1 AND 2",
    "a NOT BETWEEN 1 AND 2", "s LIKE 'x%'", "s NOT LIKE 'x%'", "NOT s LIKE 'x%'", "s LIKE 'x!_%' ESCAPE '!'",
    r"s LIKE 'x\\_%' ESCAPE '\\'",
    # literals of each type
    "1", "- 1", "-1", "1 + 2", "100000000000", "1.5", "1.50", "-1.5", "0.000001",
    "123456789012345678901234567890.5", "1.5e0", "1e10", "1.0e-5", "d < 1e3", "d = 1.5e0", "1.5 * a", "NULL",
    "true", "'x'", "''", "' '", "'a,b'", "'it''s'", "'q\\'s'", "\"dq\"", "'a' 'b'", "\"say \"\"hi\"\"\"",
    "'it''s' || s", "DATE '2020-01-01'", "date '2020-01-01'",
    "DATE '2020-1-1'", "TIMESTAMP '2020-01-01'", "TIMESTAMP '2020-01-01 10:00:00.5'",
    # CASE, IF and casts (a cast of a column is named by the column)
    "CASE WHEN a = 1 THEN 'one' ELSE 'other' END", "CASE a WHEN 1 THEN 'one' END",
    "CASE WHEN a = 1 THEN 1 WHEN a = 2 THEN 2 END", "CASE WHEN a IS NULL THEN NULL ELSE 1 END",
    "IF(a = 1, 'x', 'y')", "If(a = 1, 1, 2)", "CAST(a AS BIGINT)", "cast(a as string)", "a::bigint",
    "CAST(s AS DECIMAL(5,1))", "CAST(s AS DECIMAL)", "CAST(a AS SMALLINT)", "CAST(a AS BOOLEAN)",
    "CAST(m AS DOUBLE)", "CAST(ts AS DATE)", "CAST(dt AS STRING)", "CAST(a + 1 AS BIGINT)",
    "CAST(a + 1 AS DOUBLE)", "CAST(m * 2 AS DOUBLE)", "CAST(CAST(a AS BIGINT) AS STRING)", "CAST(1 AS BIGINT)",
    "CAST(NULL AS INT)", "CAST('1.50' AS DECIMAL(10,2))", "CAST('2020-01-01' AS DATE)",
    # functions: the name as written in lower case, Spark's own names, the arguments Spark fills in
    "coalesce(a, b)", "Coalesce(a, 1)", "coalesce(s, 'none', 'z')", "nvl(a, 0)", "NVL(a, 1)", "ifnull(a, 0)",
    "nullif(a, 1)", "nullif(s, '')", "greatest(a, b)", "least(a, b, 1)", "upper(s)", "UPPER(s)", "lower(s)",
    "length(s)", "substring(s, 1, 2)", "substring(s, 1)", "substring(s FROM 1 FOR 2)", "substr(s, 1)",
    "concat(s, 'y')", "concat(s, s, 'z')", "s || 'y'", "s || s || 'z'", "a || s", "trim(s)", "ltrim(s)",
    "rtrim(s)", "trim(BOTH FROM s)", "trim(LEADING FROM s)", "trim(TRAILING FROM s)", "trim('x' FROM s)",
    "trim(BOTH 'x' FROM s)", "trim(LEADING 'x' FROM s)", "ltrim('x', s)", "rtrim('x', s)", "trim(s, 'x')",
    "replace(s, 'x')", "instr(s, 'x')", "locate('x', s)", "locate('x', s, 2)", "locate('x', s, a)",
    "position('x' IN s)", "lpad(s, 3)", "lpad(s, 3, 'x')", "rpad(s, 3, 'ab')", "split_part(s, ',', 1)",
    "split_part(s, 'x', -1)", "s RLIKE 'x'", "s REGEXP 'x'", "s NOT RLIKE 'x'", "regexp_like(s, 'x')",
    "NOT regexp_like(s, 'x')", "regexp_extract(s, 'x', 0)", "regexp_extract(s, '(x)')",
    "regexp_replace(s, 'x', 'y')", "abs(a)", "abs(d)", "abs(-a)", "round(d)", "ROUND(m)", "round(d, 2)",
    "round(a, -1)", "round(m, 1)", "bround(d)", "bround(d, 1)", "Bround(m, 1)", "floor(d)", "floor(a)",
    "floor(m)", "ceil(d)", "CEIL(m)", "ceiling(d)", "Ceiling(m)",
    # dates, times and intervals
    "date_add(DATE '2020-01-01', 1)", "date_add(dt, 1)", "date_sub(DATE '2020-01-01', 1)", "add_months(dt, -1)",
    "datediff(dt, dt)", "last_day(dt)", "year(ts)", "month(DATE '2020-01-01')", "dayofweek(dt)", "quarter(dt)",
    "weekofyear(dt)", "dayofmonth(dt)", "day(dt)", "dayofyear(dt)", "hour(ts)", "minute(ts)", "second(ts)",
    "EXTRACT(YEAR FROM dt)", "extract(year from dt)", "EXTRACT(dayofweek FROM dt)", "EXTRACT(DOW FROM dt)",
    "EXTRACT(MONTH FROM ts)", "date_trunc('MONTH', ts)", "date_trunc('month', dt)", "trunc(dt, 'month')",
    "trunc(DATE '2020-01-01', 'MM')", "to_date('2020-01-01')", "to_date(s, 'yyyy-MM-dd')",
    "dt + INTERVAL 1 DAY", "dt - INTERVAL 3 DAYS", "INTERVAL 1 DAY + dt", "dt + INTERVAL 3 WEEKS",
    "dt + INTERVAL 2 HOURS", "dt + INTERVAL 1 DAY 2 HOURS", "dt + INTERVAL 1 YEAR", "dt - INTERVAL 14 MONTHS",
    "dt + INTERVAL '2' YEAR", "DATE '2020-01-01' + INTERVAL '1-2' YEAR TO MONTH", "ts + INTERVAL 1 DAY",
    "ts - INTERVAL 90 MINUTES", "ts + INTERVAL 3 WEEKS", "ts + INTERVAL 1 SECOND", "ts + INTERVAL 30 SECONDS",
    "ts + INTERVAL '1' DAY", "ts + INTERVAL '10 10' DAY TO HOUR",
    "ts - INTERVAL '1 02:03:04' DAY TO SECOND",
]

AGGREGATES = [
    "count(*)", "COUNT(*)", "count(1)", "count(a)", "count(a + 1)", "count(DISTINCT a)", "count(DISTINCT (a))",
    "count(*) + 1", "sum(a)", "sum(A)", "SUM(a + b)", "sum(m)", "avg(d)", "avg(m)", "max(a) - min(a)",
    "stddev(d)", "STDDEV(d)", "STD(d)", "stddev_samp(d)", "stddev_pop(d)", "variance(d)", "var_samp(d)",
    "var_pop(d)", "count_if(a > 1)", "COUNT_IF(a = 1)", "bool_and(a > 1)", "Bool_And(a = 1)", "bool_or(a > 1)",
    "every(a > 1)", "EVERY(a = 1)", "some(a > 1)",
]

WINDOWS = [
    "row_number() OVER (PARTITION BY a ORDER BY b)", "Row_Number() OVER (ORDER BY a)",
    "rank() OVER (ORDER BY b DESC)", "rank() OVER (ORDER BY a ASC NULLS LAST)",
    "dense_rank() OVER (PARTITION BY s ORDER BY b, a DESC)", "lag(a) OVER (ORDER BY b)",
    "lag(a, 2) OVER (ORDER BY b)", "LAG(a, 1, 0) OVER (PARTITION BY s ORDER BY b)", "lead(a) OVER (ORDER BY b)",
    "lead(a, 2, 0) OVER (ORDER BY b)", "first_value(a) OVER (PARTITION BY s ORDER BY b)",
    "FIRST_VALUE(a) OVER (PARTITION BY s)", "last_value(a) OVER (PARTITION BY s ORDER BY b DESC NULLS LAST)",
    "first_value(a) OVER (ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
    "count(*) OVER (PARTITION BY s)", "count(*) OVER ()", "avg(d) OVER ()", "min(a) OVER (ORDER BY b)",
    "sum(a) OVER (PARTITION BY s)", "sum(a) OVER (PARTITION BY s ORDER BY b)", "sum(a + 1) OVER (ORDER BY b)",
    "sum(a) OVER (PARTITION BY s, a ORDER BY b DESC)",
    "sum(a) OVER (PARTITION BY s ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    "sum(a) OVER (PARTITION BY s ORDER BY b RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
    "count(a) OVER (PARTITION BY s ORDER BY b RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
    "max(a) OVER (PARTITION BY s ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
]

SUBQUERIES = [
    "(SELECT max(a) FROM t)", "EXISTS (SELECT 1 FROM t)", "NOT EXISTS (SELECT 1 FROM t)",
    "a IN (SELECT a FROM t)", "a NOT IN (SELECT a FROM t)", "(SELECT max(a) FROM t u WHERE u.a = t.a)",
    "(SELECT count(*) FROM t u WHERE u.a = t.a AND u.b = t.b)",
    "(SELECT count(*) FROM t u WHERE u.b = t.b AND u.a = t.a)",
]

LISTS = {"scalars": SCALARS, "aggregates": AGGREGATES, "windows": WINDOWS, "subqueries": SUBQUERIES}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(LISTS))
def test_unnamed_items_are_named_as_spark_names_them(kind, spark):
    text = f"SELECT {', '.join(LISTS[kind])} FROM t"
    spark.createDataFrame([], TABLE.ddl).createOrReplaceTempView("t")
    expected = spark.sql(text).schema.names
    found = compile_sql(text, {"t": TABLE}).columns
    differing = [(item, want, got) for item, want, got in zip(LISTS[kind], expected, found, strict=True)
                 if want != got]
    assert differing == []


def test_an_aliased_item_keeps_its_alias_and_a_column_its_written_name():
    query = compile_sql("SELECT count(*) AS n, A, t.s, (b) FROM t GROUP BY A, t.s, b", {"t": TABLE})
    assert query.columns == ("n", "A", "s", "b")
