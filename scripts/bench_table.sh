#!/usr/bin/env bash
# The run table on a store of repeats (docs/repeats.md): 500 stored runs in 100 groups. How long
# listing the store, building the table model and showing and painting the table take, then the
# whole window's start-up on that store. Runs on a virtual X display (Xvfb).
# Usage: scripts/bench_table.sh [build folder, default build/release]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
store="$folder/repeats.sqlite"

for _ in 1 2 3; do
    rm -f "$store"*
    xvfb-run -a -s "-screen 0 1920x1080x24" "$build/ui/scalelab-table-bench" --runs 500 \
        --groups 100 --store "$store"
done

echo "# window up with that store: process start to the first paint (3 launches)"
for _ in 1 2 3; do
    xvfb-run -a -s "-screen 0 1920x1080x24" "$build/ui/scalelab" --store "$store" \
        --quit-after-first-paint
done
