#!/usr/bin/env bash
# The run store's figures (docs/benchmarks.md): a store of 200 runs x 10,000 steps is filled,
# then: how long opening it and listing its runs takes, how long one run's curves take to load,
# what recording costs a training run, and how long the window takes to come up on it (on a
# virtual X display). The store (about 450 MB) is written to a temporary folder and removed.
# Usage: scripts/bench_store.sh [build folder, default build/release]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
store="$folder/runs.sqlite"

"$build/app/scalelab-store-bench" --runs 200 --steps 10000 --store "$store" --repeats 5

echo "# window up with that store: process start to the first paint, the run list filled (3 launches)"
for _ in 1 2 3; do
    xvfb-run -a -s "-screen 0 1920x1080x24" "$build/ui/scalelab" --store "$store" \
        --quit-after-first-paint
done
