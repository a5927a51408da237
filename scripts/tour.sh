#!/usr/bin/env bash
# The main job: the tour, then the Spark pipeline. The tour runs every stage on
# every example of the documents (tests/catalog.py), printed beside what the
# document printed, with a verdict against v0 recomputed from scratch. The
# pipeline (python -m final.spark run) checks final/ against Spark SQL at every
# version of its embedded data sets and writes its report to out/spark/; then
# follow keeps every query up to date over those logs (Structured Streaming,
# --available-now) and writes each query's change feed to out/spark/follow/.
# Installs what it needs first. Extra arguments pick examples by name, e.g.
# scripts/tour.sh add_one, and skip the pipeline.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh

python -m tests.tour "$@"
if [ "$#" -eq 0 ]; then
    echo
    echo "== The Spark pipeline: final/ against Spark SQL from scratch, version by version =="
    python -m final.spark run --out out/spark
    echo
    echo "== follow: the same logs as a live source, each query's change feed written exactly once =="
    rm -rf out/spark/follow
    python -m final.spark follow --logs out/spark/logs --out out/spark/follow --available-now
fi
