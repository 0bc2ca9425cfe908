#!/usr/bin/env bash
# Quick start: installs what is missing, builds the release preset and opens the ScaleLab window
# with a default experiment ready to start (Fashion-MNIST, cnn, 2 devices: press Start or
# Ctrl+R). Extra arguments go to `scalelab` (e.g. scripts/run.sh --theme dark).
# Without a display (no DISPLAY or WAYLAND_DISPLAY, e.g. over ssh) it says so and trains the
# same experiment in the terminal with scalelab-cli instead.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release
cmake --build --preset release

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "run: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open;" \
        "training the default experiment in the terminal instead" >&2
    exec build/release/app/scalelab-cli train --dataset fashion-mnist --model cnn --devices 2 \
        --epochs 2
fi
exec build/release/ui/scalelab "$@"
