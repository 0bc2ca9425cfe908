#!/usr/bin/env bash
# How far ScaleLab's step losses are from PyTorch's on the same initial weights, batches,
# normalisation and updates, each case's largest relative difference beside PyTorch's own
# against itself from weights scaled by 1 + 1e-7: what float32 rounding alone does to that
# training. Three checks, each also a ctest (docs/pytorch.md):
#   tests/app/pytorch/check_sgd_steps.py        mlp and cnn, SGD (pytorch_sgd_steps)
#   tests/app/pytorch/check_bn_steps.py         resnet8: per-device, sync and ghost batch norm,
#                                               zero-init residual (pytorch_bn_steps)
#   tests/app/pytorch/check_optimizer_steps.py  LARS, LARC, LAMB, NovoGrad, AdamW
#                                               (pytorch_optimizer_steps)
# Usage: scripts/agree_with_pytorch.sh [DATA_FOLDER], from the repository's root after building
# the release preset; needs Debian's python3-numpy and python3-torch (scripts/setup.sh).
set -euo pipefail
data=${1:-/usr/share/datasets/fashion-mnist}
for check in sgd bn optimizer; do
    echo "== tests/app/pytorch/check_${check}_steps.py"
    /usr/bin/python3 "tests/app/pytorch/check_${check}_steps.py" build/release/app/scalelab-cli \
        resources/pytorch "$data" --sensitivity
done
