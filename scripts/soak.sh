#!/usr/bin/env bash
# The soak of issue 9: a queue of 100 short runs (device counts 1 to 4, one in ten made to
# diverge, one in ten cancelled) trained in one process, first through the CLI's training path
# (scalelab-soak), then in the window, offscreen (scalelab-ui-soak). Each checks that every run
# ended as planned and that a new store holds them all, and prints resident memory after the
# 10th and the 100th run: the soak memory growth (FAIL above 10 %). Heap in use is printed
# beside it: what the process holds, without what the allocator keeps for reuse.
# Usage: scripts/soak.sh [build folder]: without one, builds the release preset first.
# Each program's whole output is kept in a temporary log; its figures are printed here.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
if [[ -z $build ]]; then
    cmake --preset release >/dev/null &&
        cmake --build --preset release --target scalelab-soak scalelab-ui-soak || exit 1
    build=build/release
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

status=0
soak() {
    local name=$1
    shift
    echo "# $name: 100 runs"
    "$@" --runs 100 >"$log/$name.log" 2>&1
    local code=$?
    # The figures come last; the window's soak prints what its shown runs hold just before them.
    sed -n '/^heap held/p; /^runs  /,$p' "$log/$name.log"
    [[ $code -eq 0 ]] || status=1
}
soak cli "$build/app/scalelab-soak"
QT_QPA_PLATFORM=offscreen soak app "$build/ui/scalelab-ui-soak"
exit $status
