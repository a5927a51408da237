"""The benchmarks stay runnable: each workload on each stage, at a tiny size, with its output check."""

from __future__ import annotations

import pytest

from tests.bench.bench_updates import STAGES, measure


@pytest.mark.parametrize("workload", ["count", "join"])
@pytest.mark.parametrize("stage", STAGES)
def test_bench_workload_runs_and_checks_its_output(stage: str, workload: str) -> None:
    assert measure(stage, workload, n=50, updates=5) >= 0


def test_windows_bench_runs() -> None:
    from tests.bench.bench_windows import QUERIES, measure

    for name in QUERIES:
        load, change = measure(QUERIES[name], customers=3, rows=5, changes=4, rule=name == "latest")
        assert load >= 0 and change >= 0


def test_reachability_bench_runs() -> None:
    from tests.bench.bench_reachability import measure as measure_reachability

    load, update, reached = measure_reachability("v5", 60, updates=4)
    assert load >= 0 and update >= 0 and reached >= 1


def test_final_benchmarks_run(tmp_path) -> None:
    from tests.bench import bench_final

    rows = bench_final.compare_with_v5(200, updates=4, load_repeats=1)
    assert [name for name, _, _ in rows] == ["count by key", "join", "reachability", "no operator"]
    bench_final.plot(rows, 200, tmp_path / "ratios.png")
    assert (tmp_path / "ratios.png").stat().st_size > 0
    assert bench_final.waiting_versions(50, advances=5) > 0
    hierarchical, naive = bench_final.retract_minimum(300)
    assert hierarchical > 0 and naive > 0
    first, last = bench_final.arrangement_memory(50, live=20)
    assert first == last == 20
    assert [name for name, _, _ in bench_final.scaling((50, 100), updates=4)] == [
        "count by key", "join", "MIN of one group"]


def test_instruction_counts_run() -> None:
    import shutil

    from tests.bench import bench_instructions

    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed: bench_instructions counts instructions with its callgrind")
    load, update = bench_instructions.measure("final", "count by key", 50, 2)
    assert load > 0 and update > 0


def test_sessions_bench_runs_and_its_ways_agree() -> None:
    from tests.bench import bench_sessions

    rows = bench_sessions.measure(n=200, count=300, batch=40)
    assert [workload.name for workload, _ in rows] == [
        "count by key, count()", "count by key, count_total()", "join"]
    for workload, timings in rows:
        assert list(timings) == ["batched", "one per version", "plain dicts"]
        assert len({timing.checksum for timing in timings.values()}) == 1, workload.name
    assert rows[0][1]["batched"].checksum == rows[1][1]["batched"].checksum  # count() and count_total() agree
    assert "| join |" in bench_sessions.table(rows, 200, 40)


def test_sessions_bench_refuses_ways_that_disagree(monkeypatch) -> None:
    from tests.bench import bench_sessions

    count_floor = bench_sessions.count_floor

    def off_by_one() -> object:
        apply = count_floor()
        return lambda changes: apply(changes[1:])  # drops each version's first change

    monkeypatch.setattr(bench_sessions, "count_floor", off_by_one)
    with pytest.raises(AssertionError, match="the ways' outputs differ"):
        bench_sessions.measure(n=100, count=100, batch=20)


@pytest.mark.slow
def test_peer_benchmark_quick_mode_runs_and_every_answer_agrees(tmp_path) -> None:
    """``python -m tests.bench.peers --quick``: final, plain dicts and d2mini on every workload at N = 1,000."""
    import json

    from tests.bench.peers import __main__ as peers

    results = tmp_path / "quick.jsonl"
    assert peers.main(["--quick", "--results", str(results), "--figures", str(tmp_path)]) == 0
    found = [json.loads(line) for line in results.read_text().splitlines()]
    assert {(row["engine"], row["workload"]) for row in found} == {
        (engine, workload) for engine in ("final", "plain", "d2mini")
        for workload in ("W1", "W2", "W3", "W4", "W5", "W1b", "W2b")}
    for row in found:
        if (row["engine"], row["workload"]) == ("d2mini", "W3"):
            assert row["status"] == "unsupported" and "iterate" in row["reason"]
            continue
        assert row["status"] == "ok", row
        assert row["checksum"] == row["expected"] and row["median_s"] > 0 and row["peak_rss"] > 0
    for name in ("peers_latency.png", "peers_per_change.png", "peers_load.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_peer_benchmark_reports_a_wrong_answer_with_its_workload_and_size(tmp_path, monkeypatch) -> None:
    from tests.bench.peers import driver

    command = driver.command

    def off_by_one(engine: str, path):
        if engine != "final":
            return command(engine, path)
        script = ('import json; print(json.dumps({"load_s": 0.1, "latencies": [0.1], "rss_before_load": 1, '
                  '"checksum": "1:2"}))')
        return [driver.sys.executable, "-c", script]

    monkeypatch.setattr(driver, "command", off_by_one)
    plan = driver.Plan(["final", "plain"], ["W1"], [50], data=tmp_path)
    results = {row.engine: row for row in driver.runs(plan, missing={})}
    assert results["plain"].status == "ok"
    assert results["final"].status == "wrong answer"
    assert "expected" in results["final"].reason and "plain" in results["final"].reason
    assert (results["final"].workload, results["final"].n) == ("W1", 50)


@pytest.mark.slow  # Spark
def test_spark_load_bench_runs(spark, capsys) -> None:
    from tests.bench import bench_spark_load

    bench_spark_load.main(["--rows", "300", "--partitions", "2"])
    printed = capsys.readouterr().out
    assert "| trips_by_distance (" in printed and "P = 2:" in printed
