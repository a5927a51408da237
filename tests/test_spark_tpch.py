"""TPC-H through the command a data engineer runs (``python -m final.spark tpch``): two of its queries (Q16's
NOT IN, Q18's IN over an aggregate with ORDER BY ... LIMIT) through a load and a refresh, with 0 differences
against DuckDB and against Spark SQL at every version. All 22 against Spark run in the benchmark
(tests/bench/bench_tpch.py); test_tpch.py checks all 22 against DuckDB; test_sql.py every construct."""

from __future__ import annotations

import json

import pytest

from final.spark.__main__ import main


@pytest.mark.slow
def test_tpch_queries_agree_with_duckdb_and_spark_sql_at_every_version(spark, tmp_path, capsys) -> None:
    out = tmp_path / "tpch"
    assert main(["tpch", "--queries", "16,18", "--refreshes", "1", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "tpch: against DuckDB, 24 query versions checked, 0 differences" in lines
    assert any(line.endswith(" versions checked, 0 differences") for line in lines)  # run's, against Spark SQL
    report = json.loads((out / "spark" / "report.json").read_text())
    assert [query["query"] for query in report["queries"]] == ["q16", "q18"]
    assert all(query["agrees"] for query in report["queries"])
    summary = json.loads((out / "tpch.json").read_text())["queries"]
    assert [(row["query"], row["duckdb_differences"], row["spark_differences"]) for row in summary] == [
        (16, 0, 0), (18, 0, 0)]
    assert all(row["refresh_ms"] > 0 and row["spark_refresh_ms"] > 0 for row in summary)
    assert (out / "queries" / "q16.sql").read_text().startswith("-- source: TPC-H Q16 as DuckDB's tpch extension")
