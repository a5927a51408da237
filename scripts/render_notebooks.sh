#!/usr/bin/env bash
# Execute every notebook and write it as HTML, pictures included, to
# docs/notebooks/ (solutions left out). Arguments pick notebooks by name, e.g.
# scripts/render_notebooks.sh v5. Installs what it needs first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
python scripts/render_notebooks.py "$@"
