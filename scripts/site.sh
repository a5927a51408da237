#!/usr/bin/env bash
# The workshop site: execute the notebooks and write site/ (home page site/index.html), with the
# teacher's guide, the glossary, the README's pipeline, oracle and library sections and the
# benchmarks. Works offline. `scripts/site.sh v3` executes only the notebooks whose name contains v3;
# `scripts/site.sh --pages` executes none (after editing the README or docs/site/). Cells that only
# measure time keep the committed output while their code is the same; `--remeasure` takes new timings.
# Installs what it needs first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
python scripts/build_site.py "$@"
