"""The SQL compiler's function library (strings, Java regular expressions, rounding, aggregates) against Spark SQL.

As in ``test_sql.py``, each query runs incrementally over a small history
(a load, deletes, re-inserts) and is compared with Spark SQL 4.3 (ANSI on)
from scratch at every version: rows with their multiplicities, each value
with its type (``row_key``: a DECIMAL with its scale), and the output's
Spark types. One query per group of functions, with many calls in its
SELECT list, keeps Spark's part short. The spread aggregates (``stddev``,
``variance``) are compared within the fuzzer's ``TOLERANCE``, as its SUM
and AVG of doubles are: Spark updates a running mean in row order, so its
last bits depend on the partitioning.

Without Spark: refusals, with their message and position; Java's regular
expressions read into Python's ``re`` (the expected answers are Spark's,
recorded from Spark 4.3 on Java 17); aggregates kept exactly under
retractions.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from final.spark.fuzz.compare import same_rows
from final.spark.incremental import IncrementalQuery
from final.spark.query import Table
from final.spark.sql import SqlError, compile_sql
from final.spark.sql.regex import java_regex, java_replacement, replace_all
from tests.sql_history import TableHistory

NAN, INF = float("nan"), float("inf")

TABLES = {
    "w": Table("w", (("id", "INT"), ("s", "STRING"), ("t", "STRING"), ("n", "INT"))),
    "m": Table("m", (("id", "INT"), ("i", "INT"), ("v", "BIGINT"), ("d", "DECIMAL(6,2)"), ("x", "DOUBLE"))),
    "g": Table("g", (("k", "INT"), ("b", "BOOLEAN"), ("v", "BIGINT"), ("d", "DECIMAL(6,2)"), ("x", "DOUBLE"))),
    "z": Table("z", (("id", "INT"), ("s", "STRING"), ("i", "INT"), ("x", "DOUBLE"))),
}

W = [(1, "  abc  ", "b", 3), (2, "xxaxbxx", "x", -1), (3, "a,b,,c", ",", 2), (4, "ab\r\n", "a", 1),
     (5, "\tab c\t", "", 7), (6, "日本語 é😀x", "語", -2), (7, None, "a", 1), (8, "", None, None),
     (9, "Hello World 42", "o", 4), (10, "ab\n", "ab", 3), (11, "banana", "[$0]", 2), (12, "xa\u2028", "a", 5)]
M = [(1, 15, 25, Decimal("2.50"), 2.5), (2, -15, -25, Decimal("-2.50"), -2.5), (3, 2147483640, 9, Decimal("9.99"),
     2.675), (4, 0, None, Decimal("-0.05"), NAN), (5, None, 7, None, -0.0), (6, 7, -7, Decimal("1234.56"), 0.125),
     (7, 2, 2, Decimal("0.00"), 1e15 + 0.5), (8, -1, 1, Decimal("-9999.99"), -123.456)]
G = [(1, True, 10, Decimal("1.50"), 1.5), (1, False, 20, Decimal("-2.25"), 0.1), (1, None, None, None, None),
     (2, True, 5, Decimal("3.00"), 0.2), (2, True, 5, Decimal("3.00"), 0.3), (3, None, 7, Decimal("0.01"), NAN),
     (4, False, -3, Decimal("9.99"), INF), (4, True, 8, Decimal("-1.00"), 2.0), (None, True, 1, Decimal("1.00"), 1.0)]
Z = [(1, "ab", 2, 1.5)]

HISTORY = [
    [("w", row, 1) for row in W] + [("m", row, 1) for row in M] + [("g", row, 1) for row in G]
    + [("z", row, 1) for row in Z],
    # version 1: deletes, a duplicate, new rows; the NaN and the infinity leave their groups; z gets a row Spark
    # fails on
    [("w", W[0], -1), ("w", W[10], 1), ("w", (13, "a1b22c333", "b", -3), 1), ("m", M[2], -1), ("m", M[6], 1),
     ("g", G[5], -1), ("g", G[6], -1), ("g", G[1], 1), ("g", (3, False, 4, Decimal("2.00"), 4.0), 1),
     ("g", (5, None, None, None, None), 1), ("z", (2, "b", 2147483647, INF), 1)],
    # version 2: re-inserts; group 1 loses all its rows but the NULL one, group 2 keeps one
    [("w", W[0], 1), ("w", W[4], -1), ("m", M[2], 1), ("m", M[0], -1), ("g", G[0], -1), ("g", G[1], -2),
     ("g", G[3], -1), ("g", G[5], 1)],
]

SQL_HISTORY = TableHistory(TABLES, HISTORY)
ours = SQL_HISTORY.ours


@pytest.fixture(scope="module")
def spark_at(spark):
    """A function: Spark SQL's rows of a query at every version (or the error it stopped with), and its columns'
    names and types."""
    yield from SQL_HISTORY.spark(spark)


FUNCTION_GROUPS = {
    "trimming, replacing, finding, padding, splitting": (
        "SELECT id, trim(s), ltrim(s), rtrim(s), trim(BOTH 'x' FROM s), trim(LEADING t FROM s), "
        "trim(TRAILING 'c\\t' FROM s), replace(s, 'a'), replace(s, t, '-'), replace(s, 'a', t), instr(s, t), "
        "instr(s, 'b'), position('b' IN s), locate(t, s), locate('a', s, n), locate('', s, n), lpad(s, n), "
        "lpad(s, 8, t), rpad(s, n, 'xy'), rpad(s, 9, t), split_part(s, ',', 2), split_part(s, t, -1), "
        "split_part(s, ' ', n), trim(n), lpad(n, 4, '0') FROM w"),
    "regular expressions": (
        r"SELECT id, s RLIKE 'b$', s RLIKE '^a', regexp_like(s, '(?i)HELLO'), s NOT RLIKE '\\d', "
        r"s REGEXP 'a.$', s RLIKE '(?s)a.$', s RLIKE 'a\\Z', s RLIKE 'a\\z', s RLIKE '[^\\x00-\\x7f]', "
        r"regexp_extract(s, '([a-z]+)(\\d+)?', 1), regexp_extract(s, '([a-z]+)(\\d+)?', 2), "
        r"regexp_extract(s, '(\\w+) (?<second>\\w+)', 0), regexp_extract(s, '(?:an)++', 0), "
        r"regexp_extract(s, '(a|b)\\1'), regexp_replace(s, '[aeiou]', '*'), "
        r"regexp_replace(s, '(\\w)(\\w)', '$2$1'), regexp_replace(s, '\\s+', '_'), regexp_replace(t, 'a*?', '-'), "
        r"regexp_replace(s, '(a)|(b)', '[$1|$2]'), regexp_replace(s, '(?<v>[ab])', '$1$1'), "
        r"regexp_replace(s, 'a', t), regexp_replace(s, '\\Q,\\E|\\.', '\\$'), regexp_replace(s, 'n(?=a)', 'N'), "
        r"regexp_replace(s, '\\d{2,}', '#') FROM w"),
    "rounding and comparing numbers": (
        "SELECT id, round(d), round(d, 1), bround(d, 1), round(d, -1), round(d, 5), round(d, -3), round(x), "
        "round(x, 2), bround(x), bround(x, 1), round(x, -1), round(i, -1), bround(v, -1), round(v), round(2.5), "
        "bround(-2.5), round(1234.5, -2), floor(d), ceil(d), floor(x), ceil(x), floor(i), ceil(v), "
        "ceiling(d), greatest(i, v), greatest(d, x), least(d, i, NULL), least(d, 1.255), nullif(i, 2), "
        "nullif(d, 2.5), nvl(v, i), ifnull(x, 0.5), floor(1099511627776) * d, round(7) * d, CAST(5 AS INT) * d "
        "FROM m"),
    "aggregates by group": (
        "SELECT k, count_if(v > 5), bool_and(b), bool_or(b), every(v > 0), some(b), any(b), stddev(v), "
        "stddev_samp(d), stddev_pop(x), variance(v), var_samp(x), var_pop(d), std(v), any_value(k), "
        "any_value(k * 2), COUNT(v), SUM(x) FROM g GROUP BY k"),
    "aggregates of everything, over rows that come and go": (
        "SELECT count_if(b), bool_and(b), bool_or(v > 9), stddev(v), var_pop(v), stddev_pop(d) FROM g WHERE k = 2"),
    "count_if over no rows is 0": "SELECT id, (SELECT count_if(g.b) FROM g WHERE g.k = m.id) FROM m",
}

SPREADS = {"aggregates by group": (7, 8, 9, 10, 11, 12, 13, 17),
           "aggregates of everything, over rows that come and go": (3, 4, 5)}
"""The columns of ``stddev``, ``variance`` and a DOUBLE's ``SUM`` in each group: compared within the fuzzer's
``TOLERANCE``."""


def differences(expected: list, found: list, tolerant: tuple[int, ...]) -> list:
    """Where two histories of results differ, version by version (an error is the same as an error)."""
    if len(expected) != len(found):
        return [("versions", len(expected), len(found))]
    differing = []
    for version, (spark_rows, our_rows) in enumerate(zip(expected, found, strict=True)):
        if isinstance(spark_rows, str) or isinstance(our_rows, str):
            if spark_rows != our_rows:
                differing.append((version, spark_rows, our_rows))
            continue
        differing += [(version, *row) for row in same_rows(spark_rows, our_rows, tolerant)]
    return differing


@pytest.mark.slow
@pytest.mark.parametrize("group", list(FUNCTION_GROUPS))
def test_each_group_of_functions_agrees_with_spark_sql_at_every_version(group, spark_at):
    text = FUNCTION_GROUPS[group]
    expected, expected_schema = spark_at(text)
    found, schema = ours(text)
    assert differences(expected, found, SPREADS.get(group, ())) == []
    assert schema == expected_schema  # names and types


RUNTIME_ERRORS = {
    "split_part with the index 0": "SELECT split_part(s, 'a', i - 2147483647) FROM z",
    "floor of an infinity": "SELECT floor(x) FROM z",
    "regexp_extract of a group the pattern lacks, once it matches": "SELECT regexp_extract(s, '^(b)', 2) FROM z",
    "regexp_replace naming a group the pattern lacks, once it matches": "SELECT regexp_replace(s, '^(b)', '$2') "
                                                                        "FROM z",
    "round past INT's range": "SELECT round(i, -1) FROM z",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(RUNTIME_ERRORS))
def test_where_spark_sql_raises_for_the_data_the_compiled_query_raises_its_error_at_the_same_version(case, spark_at):
    expected, _ = spark_at(RUNTIME_ERRORS[case])
    found, _ = ours(RUNTIME_ERRORS[case])
    assert len(expected) == 2 and expected[-1].startswith("error: ")  # the row of version 1 raises, in Spark
    assert [value if isinstance(value, str) else Counter(value) for value in expected] == found


REFUSALS = {
    "SELECT s RLIKE t FROM w": (1, 8, "rlike() takes its pattern as a literal string"),
    r"SELECT regexp_extract(s, '\\p{L}+') FROM w": (1, 8, "\\p{...} (Java's Unicode and POSIX classes), at "
                                                          "character 1, is not read here"),
    r"SELECT id FROM w WHERE s RLIKE '\\bword'": (1, 24, "\\b (Java 17's word boundary counts every Unicode letter"),
    "SELECT s RLIKE 'a(?i)b' FROM w": (1, 8, "the flag group '(?i)' after the start"),
    "SELECT s RLIKE '[a-z&&[^b]]' FROM w": (1, 8, "&& in a class (Java's intersection of classes), at character 5"),
    "SELECT s RLIKE '(?m)^a' FROM w": (1, 8, "the flag 'm' (only i and s are read)"),
    "SELECT id, s RLIKE 'a{' FROM w": (1, 12, "Java rejects it ('{' starts no repetition"),
    "SELECT regexp_replace(s, 'a', 'b', 2) FROM w": (1, 8, "regexp_replace's fourth argument"),
    "SELECT regexp_replace(s, '(?<v>a)', '${v}') FROM w": (1, 8, "Spark SQL reads as a variable and substitutes"),
    "SELECT lpad(s, 2.5) FROM w": (1, 8, "lpad() takes an integer here, not decimal(2,1)"),
    "SELECT trim(x) FROM m": (1, 13, "x is double: Spark prints it as text its own (Java's) way"),
    "SELECT round(d, i) FROM m": (1, 8, "round()'s scale is an integer literal here, not i"),
    "SELECT round('1.5', 1), round(b) FROM g": (1, 31, "round() needs a number, not boolean"),
    "SELECT floor(x, 1) FROM m": (1, 8, "floor() with a scale is not in the subset"),
    "SELECT greatest(i) FROM m": (1, 8, "greatest() takes two or more arguments"),
    "SELECT greatest(i, s) FROM m JOIN w ON m.id = w.id": (1, 8, "int and string have no common type"),
    "SELECT nvl2(k, 1, 2) FROM g": (1, 8, "the function nvl2() is not in the SQL subset"),
    "SELECT count_if(v) FROM g": (1, 17, "v is bigint, where a BOOLEAN condition is needed"),
    "SELECT stddev(b) FROM g": (1, 8, "stddev() needs numbers, not boolean"),
    "SELECT k, stddev(DISTINCT v) FROM g GROUP BY k": (1, 11, "stddev(DISTINCT ...) is not in the subset"),
    "SELECT k, any_value(v) FROM g GROUP BY k": (1, 11, "any_value(v) is Spark's value of whichever row it reads "
                                                         "first"),
    "SELECT any_value(v) FROM g": (1, 8, "use MIN or MAX, or group by the expression"),
    "SELECT k, first(v) FROM g GROUP BY k": (1, 11, "the aggregate first() is not in the subset"),
    "SELECT k FROM g WHERE bool_or(b)": (1, 23, "bool_or() is an aggregate: it belongs in a SELECT list or HAVING"),
}


@pytest.mark.parametrize("text", list(REFUSALS))
def test_a_function_outside_the_subset_is_refused_naming_it_and_where_it_is(text):
    line, column, words = REFUSALS[text]
    with pytest.raises(SqlError) as refused:
        compile_sql(text, TABLES, "q")
    assert words in refused.value.message
    assert (refused.value.line, refused.value.column) == (line, column)


SPARK_MATCHES = [
    ("abc", "^b", False), ("abc", "(?i)A", True), ("ÄBC", "(?i)ä", False), ("a1", r"\d", True),
    ("a\u0661", r"\d", False), ("é", r"\w", False), ("ab\n", "b$", True), ("ab\r", "b$", True),
    ("ab\r\n", "b$", True), ("ab\n\n", "b$", False), ("ab\r\n", "b\r$", False), ("a\u0085", "a$", True),
    ("a\u2028", "a$", True), ("a\rb", "a.b", False), ("a\nb", "(?s)a.b", True), ("ab\n", r"b\Z", True),
    ("ab\n", r"b\z", False), ("aaa", "a*+a", False), ("aaa", "(?>a*)a", False), ("aaab", "a++b", True),
    ("abab", r"(?<x>ab)\k<x>", True), ("a.b", r"a\Q.\Eb", True), ("axb", r"a\Q.\Eb", False),
    ("a\tb", r"a\011b", True), ("a\tb", r"a\0011b", True), ("a\tb", r"a\x09b", True), ("x", "[^]x]", False),
    ("\U0001d518x", "^.x$", True),
]


@pytest.mark.parametrize(("text", "pattern", "matches"), SPARK_MATCHES)
def test_a_java_pattern_matches_what_it_matches_in_spark(text, pattern, matches):
    """Each answer is Spark 4.3's ``text RLIKE pattern`` on Java 17, recorded: ASCII classes and case, Java's
    line terminators for ``.`` and ``$``, ``\\Z`` against ``\\z``, possessive and atomic forms, named groups,
    quotation, octal and hexadecimal escapes, a ``]`` first in a class, a character outside the BMP."""
    assert (java_regex(pattern).search(text) is not None) is matches


def test_a_java_replacement_inserts_groups_as_spark_does():
    """Spark 4.3's ``regexp_replace`` answers, recorded: ``$10`` is group 1 then a 0 when there is no group 10,
    an escaped ``$`` is itself, an unmatched group is empty, and after an empty match the search moves on one
    character (Python's ``re.sub`` would replace ``a*?`` seven times in ``aaa``)."""

    def replaced(text: str, pattern: str, template: str) -> str:
        compiled = java_regex(pattern)
        return replace_all(compiled, text, java_replacement(template, compiled))

    assert replaced("abc", "(b)", "$10") == "ab0c"
    assert replaced("abcdefghijkl", "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)", "$11$12") == "ka2l"
    assert replaced("abc", "(b)", "\\$1") == "a$1c"
    assert replaced("abc", "(x)?b", "[$1]") == "a[]c"
    assert replaced("aaa", "a*?", "-") == "-a-a-a-"
    assert replaced("abc", "", "-") == "-a-b-c-"
    for template, reason in [("$2", "No group 2"), ("$", "group index is missing"), ("$x", "Illegal group"),
                             ("a\\", "character to be escaped is missing")]:
        with pytest.raises(ValueError, match=reason):
            replaced("abc", "(b)", template)
    assert replaced("xyz", "(b)", "$2") == "xyz"  # Java reads the replacement only at a match


def test_an_empty_match_before_a_character_outside_the_bmp_keeps_it_whole(known_limitation):
    """Spark (Java, over UTF-16) searches on from the middle of the emoji's surrogate pair and prints each half as
    '?': ``regexp_replace('😀', 'x*', '-')`` is ``-?-?-`` there (recorded from Spark 4.3)."""
    known_limitation("regexp_replace with a pattern that matches the empty string next to a character outside the "
                     "BMP keeps the character whole, where Spark splits its UTF-16 pair into two '?'")
    compiled = java_regex("x*")
    assert replace_all(compiled, "\U0001f600", java_replacement("-", compiled)) == "-\U0001f600-"


def test_spread_and_boolean_aggregates_stay_exact_under_retractions():
    """Values far apart in size come and go many times: the kept sums are exact, so the variance after they leave
    is the one of the rows that stay, to the last bit, as if they had never come."""
    text = "SELECT k, var_pop(x), stddev(x), var_samp(v), bool_and(b), bool_or(b), count_if(b) FROM g GROUP BY k"
    query = compile_sql(text, TABLES, "q")
    engine = IncrementalQuery(query)
    stay = [(1, True, 3, Decimal("1.00"), 0.1), (1, True, 4, Decimal("1.00"), 0.7), (1, None, 5, None, 0.2)]
    come_and_go = [(1, False, 10**15, Decimal("1.00"), 1e300), (1, False, -(10**15), Decimal("1.00"), -3e-300),
                   (1, None, 7, None, 1e16)]
    engine.apply(0, [("g", row, 1) for row in stay])
    for version in range(1, 21):
        engine.apply(version, [("g", row, 1 if version % 2 else -1) for row in come_and_go])
    fresh = IncrementalQuery(compile_sql(text, TABLES, "q"))
    fresh.apply(0, [("g", row, 1) for row in stay])
    assert engine.snapshot == fresh.snapshot
    ((_, variance, deviation, sample, every, some, trues), _), = engine.snapshot.items()
    assert variance == pytest.approx(0.06888888888888889, rel=1e-15) and (every, some, trues) == (True, True, 2)
    assert deviation == pytest.approx(0.3214550253664318, rel=1e-15) and sample == 1.0
