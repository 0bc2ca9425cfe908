#!/usr/bin/env bash
# How far ScaleLab's step losses are from PyTorch's on the same initial weights, batches,
# normalisation and updates, each case's largest relative difference and the share of its limit
# it reaches, beside PyTorch's own against itself with the samples of each batch in another
# order: what float32 rounding alone does to that training here, which sets the limits
# (tests/app/pytorch/pytorch_checks.py). Three checks, each also a ctest (docs/pytorch.md):
#   tests/app/pytorch/check_sgd_steps.py        mlp and cnn, SGD (pytorch_sgd_steps)
#   tests/app/pytorch/check_bn_steps.py         resnet8: per-device, sync and ghost batch norm,
#                                               zero-init residual (pytorch_bn_steps)
#   tests/app/pytorch/check_optimizer_steps.py  LARS, LARC, LAMB, NovoGrad, AdamW
#                                               (pytorch_optimizer_steps)
# Usage: scripts/agree_with_pytorch.sh [openblas|reference] [DATA_FOLDER], from the repository's
# root after building the release preset; needs what scripts/setup.sh installs. PyTorch
# multiplies with OpenBLAS (the default, as the ctests) or Debian's reference BLAS.
set -euo pipefail
blas=${1:-openblas}
data=${2:-/usr/share/datasets/fashion-mnist}
libraries=/usr/lib/$(gcc -print-multiarch)
case "$blas" in
openblas) export LD_LIBRARY_PATH=$libraries/openblas-openmp flags=() ;;
reference) export LD_LIBRARY_PATH=$libraries/blas:$libraries/lapack flags=(--reference-blas) ;;
*) echo "usage: $0 [openblas|reference] [DATA_FOLDER]" >&2; exit 2 ;;
esac
for check in sgd bn optimizer; do
    echo "== tests/app/pytorch/check_${check}_steps.py"
    /usr/bin/python3 "tests/app/pytorch/check_${check}_steps.py" build/release/app/scalelab-cli \
        resources/pytorch "$data" --sensitivity "${flags[@]}"
done
