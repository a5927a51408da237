#!/usr/bin/env bash
# Make this machine ready for the workshop day, and check that it is: only the workshop's pinned set
# (requirements/workshop.txt: Jupyter, matplotlib, graphviz, hypothesis, jsonschema, tqdm) in its own
# virtual environment, .venv-workshop/, plus graphviz's `dot`. No Spark, Java, pyarrow, playwright or
# chromium: those are for the pipeline and for development (scripts/bootstrap.sh, scripts/test.sh).
#
#   scripts/workshop.sh                   install from PyPI (and apt-get graphviz when `dot` is missing), then check
#   scripts/workshop.sh --wheelhouse DIR  on a connected machine, once: download the workshop set's wheels
#                                         (this platform, this python3) into DIR, and graphviz's .deb files
#                                         with their dependencies into DIR/debs; then carry DIR to the room
#   scripts/workshop.sh --offline DIR     install from DIR with no network (pip --no-index, dpkg -i the debs
#                                         when `dot` is missing), then check
#   scripts/workshop.sh --check           only the check (notebooks/workshop/check.py), about ten seconds
#
# Idempotent: pip runs only when requirements/workshop.txt differs from the copy stored at the last
# successful install. Installing graphviz needs root or sudo. Afterwards, open the notebooks with
#   .venv-workshop/bin/jupyter lab notebooks/
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${WORKSHOP_VENV:-$root/.venv-workshop}"
requirements="$root/requirements/workshop.txt"
stamp="$venv/.requirements.installed"
python="${PYTHON:-python3}"

say() { echo "workshop.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# The header above, as help; exits with $1 (2, a usage error, unless told).
usage() {
    sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}

if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi

# The Debian packages `dot` needs that this machine would have to install: graphviz and its
# dependencies, recursively (no recommends), real packages only, one per line.
graphviz_packages() {
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
        --no-enhances graphviz | grep -v '^ ' | grep -v '^<' | sort -u
}

make_wheelhouse() {
    local dir="$1"
    mkdir -p "$dir/debs"
    dir="$(cd "$dir" && pwd)"
    say "downloading the workshop set's wheels for $("$python" -c 'import sys; print(sys.version.split()[0])') into $dir"
    "$python" -m pip download --disable-pip-version-check --quiet --only-binary=:all: \
        -r "$requirements" -d "$dir" ||
        die "pip download failed; check the network to PyPI and run again"
    cp "$requirements" "$dir/workshop.txt"
    if ! command -v apt-get >/dev/null 2>&1; then
        say "no apt-get here: the wheelhouse holds no .deb files; install graphviz on the room's machines yourself"
        return
    fi
    say "downloading graphviz and its dependencies (.deb) into $dir/debs"
    # Fresh package lists when root; otherwise the lists as they are (apt-get download needs no root).
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq >/dev/null || die "apt-get update failed; check the network to the Debian mirror"
    fi
    local packages
    packages="$(graphviz_packages)"
    [ -n "$packages" ] || die "apt-cache knows no graphviz; is a Debian mirror in /etc/apt/sources.list?"
    # apt-get download writes into the current folder, as the unprivileged _apt user when it can.
    # shellcheck disable=SC2086
    (cd "$dir/debs" && apt-get download -qq $packages >/dev/null 2>&1) ||
        die "apt-get download failed for some of: $(echo $packages)"
    say "wheelhouse ready: $(du -sh "$dir" | cut -f1) in $dir ($(ls "$dir"/*.whl | wc -l) wheels," \
        "$(ls "$dir"/debs/*.deb | wc -l) .deb files); on each room machine: scripts/workshop.sh --offline $dir"
}

make_venv() {
    if [ ! -x "$venv/bin/python" ]; then
        say "creating $venv"
        "$python" -m venv "$venv" || die "could not create a venv: install python3-venv (apt-get install python3-venv)"
    fi
}

# pip install the workshop set into the venv; extra arguments go to pip (e.g. --no-index --find-links DIR).
install_packages() {
    if cmp -s "$requirements" "$stamp"; then
        return
    fi
    say "installing requirements/workshop.txt into $venv"
    local log="$venv/pip-install.log"
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check "$@" -r "$requirements" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        die "pip install failed; the whole log is in $log"
    fi
    cp "$requirements" "$stamp"
}

install_dot_online() {
    command -v dot >/dev/null 2>&1 && return
    say "installing graphviz (for dot) with apt-get"
    $sudo apt-get update -qq >/dev/null || die "apt-get update failed; without a network, use --offline DIR"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends graphviz >/dev/null ||
        die "apt-get install graphviz failed; install it by hand (apt-get install graphviz), then run again"
}

install_dot_offline() {
    local dir="$1"
    command -v dot >/dev/null 2>&1 && return
    ls "$dir"/debs/*.deb >/dev/null 2>&1 ||
        die "\`dot\` is missing and $dir/debs holds no .deb files: make the wheelhouse with --wheelhouse on a Debian machine"
    # Only the packages this machine lacks: the others (libc6 and the like) stay as they are.
    local wanted=() deb package
    for deb in "$dir"/debs/*.deb; do
        package="$(dpkg-deb -f "$deb" Package)"
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed"; then
            wanted+=("$deb")
        fi
    done
    say "installing graphviz from $dir/debs (${#wanted[@]} .deb files) with dpkg"
    DEBIAN_FRONTEND=noninteractive $sudo dpkg -i "${wanted[@]}" >/dev/null ||
        die "dpkg -i failed (the wheelhouse may be for another Debian release); install graphviz by hand"
    command -v dot >/dev/null 2>&1 || die "graphviz installed but \`dot\` is not on PATH"
}

check() {
    [ -x "$venv/bin/python" ] || die "no $venv yet: run scripts/workshop.sh (or --offline DIR) first"
    (cd "$root/notebooks" && PYTHONPATH="$root" "$venv/bin/python" -m workshop.check 2> >(grep -v "running over TCP" >&2))
}

case "${1:-}" in
    "")
        make_venv
        install_packages
        install_dot_online
        check
        ;;
    --wheelhouse)
        [ "$#" -eq 2 ] || usage
        make_wheelhouse "$2"
        ;;
    --offline)
        [ "$#" -eq 2 ] || usage
        [ -d "$2" ] || die "no wheelhouse at $2: make one with scripts/workshop.sh --wheelhouse $2 on a connected machine"
        dir="$(cd "$2" && pwd)"
        make_venv
        install_packages --no-index --find-links "$dir"
        install_dot_offline "$dir"
        check
        ;;
    --check)
        [ "$#" -eq 1 ] || usage
        check
        ;;
    -h|--help)
        usage 0
        ;;
    *)
        usage
        ;;
esac
