#!/usr/bin/env bash
# The tests: ruff over the whole tree, then the shared suite with pytest.
# Installs what it needs first (scripts/bootstrap.sh, and Debian's chromium for the
# browser tests of the workshop site). Extra arguments go to pytest,
# e.g. scripts/test.sh -k join -x, in one process; without any, the whole suite
# runs on two workers (pytest-xdist). With CI set, hypothesis runs its "ci" profile
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

# The whole suite runs on two workers (pytest-xdist), each test file on one of them and the Spark
# tests together (tests/conftest.py groups them).
status=0
python -m pytest -n 2 --dist loadgroup || status=$?
report "pytest -n 2" "$status"
exit "$status"
