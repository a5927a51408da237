#!/usr/bin/env bash
# The main job: the tour, then the Spark pipeline. The tour runs every stage on
# every example of the documents (tests/examples.py), printed beside what the
# document printed, with a verdict against v0 recomputed from scratch. The
# pipeline (python -m final.spark run) checks final/ against Spark SQL at every
# version of its embedded data sets (its six queries compiled from the SQL files
# in final/spark/queries/) and writes its report to out/spark/, and explain shows
# one query's plan; then
# generate writes the embedded data sets as Delta tables (out/spark/live/), and
# a live follow keeps every query up to date over them (Structured Streaming)
# while more commits land table by table, is stopped with SIGINT, restarted, and
# verified against Spark SQL at every version.
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
    echo "== explain: how a query's SQL (final/spark/queries/) became its final/ dataflow =="
    python -m final.spark explain --sql final/spark/queries/fares_by_passengers.sql --out out/spark/explain
    echo
    echo "== follow: Delta tables as a live source, each query's output table kept up to date exactly once =="
    live=out/spark/live
    rm -rf "$live"
    python -m final.spark generate --out "$live"
    python -m final.spark follow --logs "$live/logs" --out "$live/follow" --trigger-seconds 2 &
    follower=$!
    python -m final.spark generate --append 2 --logs "$live/logs"
    python -m final.spark status --logs "$live/logs" --out "$live/follow" --wait 600
    kill -INT "$follower"
    status=0
    wait "$follower" || status=$?
    echo "(the live follow exited with status $status: 130 is SIGINT's, at a micro-batch boundary)"
    python -m final.spark generate --append 1 --logs "$live/logs"
    python -m final.spark follow --logs "$live/logs" --out "$live/follow" --available-now
    python -m final.spark verify --logs "$live/logs" --out "$live/follow"
fi
