#!/usr/bin/env bash
# Quick start: installs what is missing, builds the release preset, and trains the default
# model on Fashion-MNIST on the CPU for 2 epochs, printing a summary line per epoch.
# Extra arguments go to `scalelab-cli train` (e.g. scripts/run.sh --model mlp --threads 2).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release
cmake --build --preset release
exec build/release/app/scalelab-cli train --dataset fashion-mnist --epochs 2 "$@"
