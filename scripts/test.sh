#!/usr/bin/env bash
# The tests: ruff over the whole tree, then the shared suite with pytest.
# Installs what it needs first (scripts/bootstrap.sh, and Debian's chromium for the
# browser tests of the workshop site). Extra arguments go to pytest,
# e.g. scripts/test.sh -k join -x; without any, the Spark tests run in a second
# pytest process beside the rest. With CI set, hypothesis runs its "ci" profile
# (300 examples per property); locally the lighter "dev" profile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh

if ! command -v chromium >/dev/null 2>&1; then
    echo "test.sh: installing Debian's chromium (for the site's browser tests) with apt-get" >&2
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

ruff check .

# Pytest's exit code 5 means it collected no tests: a failure here, not a pass.
report() {
    if [ "$2" -eq 5 ]; then
        echo "test.sh: pytest collected no tests ($1); that is a failure here, not a pass" >&2
    fi
}

if [ "$#" -gt 0 ]; then
    status=0
    python -m pytest "$@" || status=$?
    report "pytest $*" "$status"
    exit "$status"
fi

# The whole suite runs as two pytest processes side by side: the Spark tests, which mostly wait on
# JVMs and the subprocesses they start, and everything else. Their reports follow each other.
spark_tests=(tests/test_spark.py tests/test_spark_cli.py tests/test_spark_failures.py tests/test_spark_follow.py)
spark_log="$(mktemp)"
python -m pytest "${spark_tests[@]}" >"$spark_log" 2>&1 &
spark_pid=$!
status=0
python -m pytest "${spark_tests[@]/#/--ignore=}" || status=$?
report "all but the Spark tests" "$status"
spark_status=0
wait "$spark_pid" || spark_status=$?
echo "test.sh: the Spark tests, run beside the rest:"
cat "$spark_log"
rm -f "$spark_log"
report "the Spark tests" "$spark_status"
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$spark_status"
