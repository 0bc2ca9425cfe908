#!/usr/bin/env bash
# The desktop app's figures (docs/benchmarks.md): how long the window takes to come up, and
# how long one chart redraw takes with 20 runs of 10,000 steps on screen while the window keeps
# answering input. Runs on a virtual X display (Xvfb), so it needs no desktop.
# Usage: scripts/bench_ui.sh [build folder, default build/release]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}

echo "# window up: from process start to the first paint of the main window (5 launches)"
for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    xvfb-run -a -s "-screen 0 1920x1080x24" "$build/ui/scalelab" --quit-after-first-paint |
        tr '\n' ' '
    echo "process_wall_ms=$((($(date +%s%N) - start) / 1000000)) (includes starting Xvfb)"
done

echo "# chart redraw with 20 runs x 10,000 steps, and the longest event-loop stall while live"
xvfb-run -a -s "-screen 0 1920x1080x24" "$build/ui/scalelab-ui-bench" --runs 20 --steps 10000

echo "# chart redraw with 20 groups x 5 runs x 10,000 steps (mean, ± 1 std band, smoothing 0.6):"
echo "# with the data unchanged, then with every run a step further (every curve recomputed)"
xvfb-run -a -s "-screen 0 1920x1080x24" "$build/ui/scalelab-ui-bench" --runs 100 --seeds 5 --steps 10000
