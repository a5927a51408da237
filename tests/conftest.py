"""Shared fixtures: the ``stage`` parameter, the ``since`` marker, hypothesis profiles, one Spark session,
and the groups the suite's tests run in on two workers.

Every test that takes a ``stage`` argument runs once per stage folder present
(v0 .. v5, final), from the stage named by ``@pytest.mark.since(...)`` on.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from tests.harness import PRESENT_STAGES, STAGES

# CI runs a few hundred examples per property; local runs stay quick. Deadlines
# are off: these machines are shared, and a slow example is not a wrong one.
settings.register_profile("ci", max_examples=300, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def stages_since(first: str) -> list[str]:
    """The present stages from ``first`` on."""
    return [stage for stage in PRESENT_STAGES if STAGES.index(stage) >= STAGES.index(first)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    explicit = any("stage" in str(mark.args[0]) for mark in metafunc.definition.iter_markers("parametrize"))
    if "stage" in metafunc.fixturenames and not explicit:
        marker = metafunc.definition.get_closest_marker("since")
        metafunc.parametrize("stage", stages_since(marker.args[0] if marker else "v0"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests for pytest-xdist's ``--dist loadgroup`` (``scripts/test.sh`` runs the whole suite on two
    workers): a test file's tests run on one worker, in order, since they may share files and module
    fixtures; the Spark tests (test_spark_*.py, test_sql_cli.py, test_sql_dates.py) run on one worker and share
    its one SparkSession."""
    for item in items:
        name = item.path.name
        spark = name.startswith("test_spark") or name in ("test_sql_cli.py", "test_sql_dates.py")
        item.add_marker(pytest.mark.xdist_group("spark" if spark else name))


@pytest.fixture
def known_limitation(request: pytest.FixtureRequest):
    """Call with a reason to list a passing test under "known limitations" in the run's summary."""
    return lambda reason: request.node.user_properties.append(("known_limitation", reason))


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (starting one takes about ten seconds), stopped at the end.

    Two shuffle partitions and two tasks per stage: the test data sets are a few hundred rows, and the
    machines running the suite have about two cores. pyspark is imported only when this fixture runs, so a run
    that needs no Spark never loads it.
    """
    from final.spark.session import spark_session

    session = spark_session(conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    yield session
    session.stop()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    reasons = [
        value
        for report in terminalreporter.stats.get("passed", [])
        for name, value in report.user_properties
        if name == "known_limitation"
    ]
    if reasons:
        terminalreporter.section("known limitations (documented, asserted, and passing)")
        for reason in reasons:
            terminalreporter.write_line(reason)
