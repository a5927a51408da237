#!/usr/bin/env bash
# Prepare this checkout to run: a virtual environment in .venv with the pinned
# requirements, and graphviz's `dot` for the diagrams. Idempotent: pip runs only
# when requirements.txt or one of the sets it includes (requirements/*.txt)
# differs from the copy stored at the last successful install, and apt only when
# `dot` is missing. Meant to be sourced by the two
# commands (scripts/tour.sh, scripts/test.sh) so the environment variables stick;
# sourced from an interactive shell, it leaves that shell's options as it found them.
_bootstrap_caller_flags="$-"
_bootstrap_caller_pipefail="$(shopt -po pipefail || true)"
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.requirements.installed"

if [ ! -x "$venv/bin/python" ]; then
    echo "bootstrap: creating $venv" >&2
    python3 -m venv "$venv"
fi
# What was installed is stamped as requirements.txt followed by every set it includes, so that a
# change in an included file reinstalls too.
_bootstrap_wanted="$(cat "$root/requirements.txt" "$root"/requirements/*.txt)"
if [ ! -f "$stamp" ] || [ "$_bootstrap_wanted" != "$(cat "$stamp")" ]; then
    echo "bootstrap: installing requirements.txt into .venv (first run takes about a minute)" >&2
    log="$venv/pip-install.log"
    if ! { "$venv/bin/python" -m pip install --disable-pip-version-check --upgrade pip &&
           "$venv/bin/python" -m pip install --disable-pip-version-check -r "$root/requirements.txt"; } >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "bootstrap: pip install failed; the whole log is in $log" >&2
        exit 1
    fi
    printf '%s\n' "$_bootstrap_wanted" >"$stamp"
fi
unset _bootstrap_wanted
if ! command -v dot >/dev/null 2>&1; then
    echo "bootstrap: installing graphviz (for dot) with apt-get" >&2
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends graphviz >/dev/null
fi

# Spark runs locally with the venv's Python on both sides, bound to loopback.
export PYSPARK_PYTHON="$venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$venv/bin/python"
export SPARK_LOCAL_IP=127.0.0.1
export PATH="$venv/bin:$PATH"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
case "$_bootstrap_caller_flags" in *e*) ;; *) set +e ;; esac
case "$_bootstrap_caller_flags" in *u*) ;; *) set +u ;; esac
eval "$_bootstrap_caller_pipefail"
unset _bootstrap_caller_flags _bootstrap_caller_pipefail
