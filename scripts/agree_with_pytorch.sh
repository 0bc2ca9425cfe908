#!/usr/bin/env bash
# How far ScaleLab's step losses are from PyTorch's on the same initial weights, batches,
# normalisation and SGD (tests/app/pytorch/check_sgd_steps.py, the ctest pytorch_sgd_steps),
# each case's largest relative difference beside PyTorch's own against itself from weights
# scaled by 1 + 1e-7: what float32 rounding alone does to that training.
# Usage: scripts/agree_with_pytorch.sh [DATA_FOLDER], from the repository's root after building
# the release preset; needs Debian's python3-numpy and python3-torch (scripts/setup.sh).
set -euo pipefail
data=${1:-/usr/share/datasets/fashion-mnist}
exec /usr/bin/python3 tests/app/pytorch/check_sgd_steps.py build/release/app/scalelab-cli \
    resources/pytorch "$data" --sensitivity
