"""A SparkSession with safe local defaults, or any master the user names.

The pipeline runs on one machine by default: ``local[*]``, the web UI off,
the driver bound to 127.0.0.1, a few shuffle partitions (the data sets are
small; Spark's default of 200 would spend its time scheduling empty tasks),
no console progress bars, warnings only. Everything can be overridden, from
the command line (``--master``, ``--conf key=value``) or the environment
(``FINAL_SPARK_MASTER``, ``FINAL_SPARK_CONF``), so the same pipeline runs on a
cluster unchanged. Python workers run the driver's own interpreter unless
``PYSPARK_PYTHON`` names another.

A master URL is checked before Spark starts (``check_master``): one of the
forms Spark knows, and for a standalone cluster (``spark://host:port``) a
master that answers. Given a ``log_file``, the JVM writes its stderr (log4j's
errors, with their stack traces, and whatever else Java prints) to that file,
not to the terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
"""Spark's JVM logs errors only (its default is every warning, and a banner at start)."""

DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # Small data sets: 4 partitions keep both cores busy without 200 near-empty tasks per shuffle.
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    # Timestamps are read and written in UTC, so a data set means the same on every machine.
    "spark.sql.session.timeZone": "UTC",
    # The from-scratch side runs hundreds of small queries; adaptive re-planning costs more than it saves.
    "spark.sql.adaptive.enabled": "false",
    # Exact decimal AVG: this rule computes AVG of a small DECIMAL through a double (AVG(4165.47 over 160 rows)
    # gives 26.034187, not 26.034188), which is not SQL's decimal arithmetic.
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}",
    "spark.sql.optimizer.excludedRules": "org.apache.spark.sql.catalyst.optimizer.DecimalAggregates",
}
"""Settings applied unless the command line or the environment says otherwise."""

MASTER_VARIABLE = "FINAL_SPARK_MASTER"
CONF_VARIABLE = "FINAL_SPARK_CONF"
"""Whitespace-separated ``key=value`` pairs, e.g. ``spark.executor.memory=4g spark.sql.shuffle.partitions=8``."""


MASTER_FORMS = re.compile(
    r"local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|local-cluster\[[0-9]+,[0-9]+,[0-9]+\]|yarn|k8s://\S+"
    r"|spark://[^\s/,]+:[0-9]+(,[^\s/,]+:[0-9]+)*"
)
"""The master URLs Spark 4 accepts: local, local[N], local[*], local[N,F], local-cluster[N,C,M] (Spark's own
tests), yarn, k8s://..., and spark://host:port (a comma-separated list for standby masters)."""

CONNECT_SECONDS = 2.0
"""How long a standalone master has to accept a TCP connection: a live one answers in milliseconds."""


class SparkUnavailableError(RuntimeError):
    """Spark could not start: Java is missing, the JVM gateway exited, or the master does not answer."""


class MasterURLError(ValueError):
    """A master URL that is none of the forms Spark knows."""


def parse_conf(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["k=v", ...]`` as a dict; a pair without ``=`` is a ValueError naming it.

    >>> parse_conf(["spark.sql.shuffle.partitions=2"])
    {'spark.sql.shuffle.partitions': '2'}
    """
    conf = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"a Spark setting is key=value, not {pair!r}; e.g. spark.sql.shuffle.partitions=2")
        conf[key.strip()] = value.strip()
    return conf


def settings(master: str | None = None, conf: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """The master URL and the settings a session gets: defaults, then the environment, then the arguments."""
    merged = dict(DEFAULTS)
    merged.update(parse_conf(shlex.split(os.environ.get(CONF_VARIABLE, ""))))
    merged.update(conf or {})
    return master or os.environ.get(MASTER_VARIABLE) or "local[*]", merged


def check_master(url: str) -> None:
    """Refuse a master URL Spark would not understand, or a standalone master that does not answer.

    Raises:
        MasterURLError: ``url`` is none of ``MASTER_FORMS``.
        SparkUnavailableError: ``url`` is ``spark://host:port`` and no master
            there accepts a connection within ``CONNECT_SECONDS``.
    """
    if not MASTER_FORMS.fullmatch(url):
        raise MasterURLError(
            f"malformed master URL {url!r}: Spark's masters are local, local[N], local[*], local[N,F], "
            f"spark://host:port, yarn and k8s://https://host:port; e.g. --master local[2]"
        )
    if not url.startswith("spark://"):
        return
    reasons = []
    for address in url.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
            return
        except TimeoutError:
            reasons.append(f"no answer within {CONNECT_SECONDS:.0f} s")
        except OSError as error:
            reasons.append((error.strerror or str(error)).lower())
    raise SparkUnavailableError(
        f"Spark master {url} is unreachable ({'; '.join(reasons)}); check that the master runs and the host "
        f"and port are right, or run on this machine with --master local[*]"
    )


def spark_session(
    master: str | None = None, conf: Mapping[str, str] | None = None, app_name: str = "final-pipeline",
    log_file: str | None = None,
) -> SparkSession:
    """A SparkSession (the active one if there is one) with the pipeline's settings.

    A new JVM writes its stderr to ``log_file`` (when given); an active
    session keeps the stderr it started with.

    Raises:
        SparkUnavailableError: pyspark is not installed, Java is not found, or
            the JVM did not start (``JAVA_GATEWAY_EXITED``); the message says what to install.
    """
    try:
        from pyspark.errors import PySparkRuntimeError
        from pyspark.sql import SparkSession
    except ImportError as error:
        raise SparkUnavailableError(
            "pyspark is not installed in this Python; run scripts/bootstrap.sh (or pip install -r requirements.txt)"
        ) from error
    if not _java_found():
        raise SparkUnavailableError(
            "Spark needs Java 17 or newer and none was found: install it (e.g. apt-get install -y "
            "openjdk-17-jre-headless) or set JAVA_HOME to a JDK"
        )
    # Workers run this interpreter (the project's), so they import the same packages as the driver.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    url, merged = settings(master, conf)
    builder = SparkSession.builder.master(url).appName(app_name)
    for key, value in merged.items():
        builder = builder.config(key, value)
    try:
        session = _with_stderr(log_file, builder.getOrCreate)
    except PySparkRuntimeError as error:
        if getattr(error, "getCondition", lambda: None)() == "JAVA_GATEWAY_EXITED" or "JAVA_GATEWAY" in str(error):
            output = f" (Java's output is in {log_file})" if log_file else ""
            raise SparkUnavailableError(
                f"Spark's JVM exited while starting ({error}){output}; check that Java 17+ runs (java -version), that "
                f"JAVA_HOME points at it, and that the settings passed to Spark are valid"
            ) from error
        raise
    session.sparkContext.setLogLevel("ERROR")
    return session


def _with_stderr(log_file: str | None, start: Callable[[], SparkSession]) -> SparkSession:
    """``start()`` with file descriptor 2 on ``log_file``, emptied first: a JVM it launches inherits that stderr."""
    if log_file is None:
        return start()
    os.makedirs(os.path.dirname(os.path.abspath(log_file)), exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(log, 2)
        return start()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)


def _java_found() -> bool:
    """True if Spark can find a ``java``: through JAVA_HOME or on the PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        return os.access(os.path.join(java_home, "bin", "java"), os.X_OK)
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return any(os.access(os.path.join(folder, "java"), os.X_OK) for folder in folders)
