#!/usr/bin/env bash
# Packs what scripts/gpu/check.sh needs on a GPU machine that has CUDA 13 (and PyTorch, which
# brings cuDNN 9 and NCCL 2) but no Qt, oneDNN or spdlog: the release build's CLI, the GPU
# tests and libscalelab_cuda.so, every library they load that is not glibc or an NVIDIA one,
# Fashion-MNIST, and the PyTorch anchor. Writes build/gpu-bundle.tar.xz (carry it with the run).
#
#   scripts/gpu/bundle.sh           # after scripts/test.sh (or any release build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${SCALELAB_BUILD:-build/release}
anchor=${ANCHOR:-../shared/anchors/torch_anchor.py}
data=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
module="$build/lib/libscalelab_cuda.so"
[ -f "$module" ] || { echo "error: $module is missing: build the release preset with CUDA first" >&2; exit 2; }
[ -f "$anchor" ] || { echo "error: the PyTorch anchor is not at $anchor: set ANCHOR" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/data"
programs=("$build/app/scalelab-cli")
for test in test_cuda_devices test_gpu_module test_gpu_cudnn_layers test_gpu_own_kernels \
            test_fused_optimizers test_nccl_group; do
    programs+=("$build/tests/engine/backend/$test")
done
for test in test_gpu_training_steps test_fashion_mnist_accuracy; do
    programs+=("$build/tests/engine/train/$test")
done
cp "${programs[@]}" "$stage/bin/"
cp "$module" "$stage/lib/"
# Libraries the target machine may lack or have in other versions; glibc's own and NVIDIA's
# (the driver's, the toolkit's, cuDNN, NCCL) come from that machine.
for binary in "${programs[@]}" "$module"; do
    ldd "$binary" | awk '/=> \// { print $3 }'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so|/(libcuda|libcudart|libcublas|libcublasLt|libcudnn[^/]*|libnccl)\.so' \
    | while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp "$data"/*.gz "$stage/data/"
cp "$anchor" scripts/gpu/torch_gpu_throughput.py "$stage/"
tar -C "$stage" -cJf build/gpu-bundle.tar.xz .
echo "build/gpu-bundle.tar.xz: $(du -h build/gpu-bundle.tar.xz | cut -f1)"
