#!/usr/bin/env bash
# The main job, the tour: every stage runs every example of the documents
# (tests/catalog.py), printed beside what the document printed, with a verdict
# against v0 recomputed from scratch. Installs what it needs first.
# Extra arguments pick examples by name, e.g. scripts/tour.sh add_one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh

python -m tests.tour "$@"
