#!/usr/bin/env bash
# Every GPU check and benchmark in one go, on a machine with an NVIDIA GPU, CUDA 13 and PyTorch
# (which brings cuDNN 9 and NCCL 2), from the bundle scripts/gpu/bundle.sh made:
#   - the GPU tests (layers against the CPU backend, fused optimisers, NCCL, the module, a few
#     training steps against the CPU's, cnn on Fashion-MNIST to 0.89 in 2 epochs on one GPU);
#   - `scalelab-cli train --device gpu`: cnn on Fashion-MNIST, 2 epochs (the issue asks >= 0.89);
#   - training images/s, ScaleLab against PyTorch eager on the same model and batch (cnn at
#     512, wrn k=10 at 256; float32, TF32 off in both);
#   - `bench allreduce --backend cuda` over every GPU present;
#   - with compute-sanitizer installed, ScaleLab's own kernels' tests under memcheck, racecheck
#     and initcheck, and a few training steps under memcheck;
#   - with Nsight Systems installed, the kernel and CUDA-call summaries of ScaleLab's cnn step.
# Each step's output goes to results/<step>.txt and its verdict (exit status or cut short, and
# how many tests skipped) to summary.txt; a step that fails does not stop the others, but no GPU
# stops them all. $OUT ends up with three files, all a device run hands back (at most 8 files
# come back from one): summary.txt, results.tar.gz (every step's output, packed again after each
# step, so that what ran comes back even if the run is cut short) and, at the end, figures.txt.
# One device command may run 600 s: the steps share BUDGET seconds (540 by default), each cut to
# what is left of it, the correctness tests first.
#
#   OUT=/tmp/gpu-results scripts/gpu/check.sh [build/gpu-bundle.tar.xz]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bundle=${1:-build/gpu-bundle.tar.xz}
out=${OUT:-build/gpu-check}
[ -f "$bundle" ] || { echo "error: no bundle at $bundle: run scripts/gpu/bundle.sh first" >&2; exit 2; }
deadline=$((SECONDS + ${BUDGET:-540}))
mkdir -p "$out"
root=$(mktemp -d)
tar -C "$root" -xJf "$bundle"
results="$root/results"
mkdir -p "$results"

# ScaleLab's programs find the bundle's libraries first, then NVIDIA's: the toolkit's, then those
# PyTorch's wheels carry (cuDNN, NCCL, cuBLAS). PyTorch itself runs with the machine's own (the
# bundle's libstdc++ is Debian 12's).
wheel_libs=$(python3 -c "
import glob, os, site
print(':'.join(d for base in site.getsitepackages() for d in glob.glob(os.path.join(base, 'nvidia', '*', 'lib'))))" 2>/dev/null)
scalelab_env=(env "LD_LIBRARY_PATH=$root/lib:/usr/local/cuda/lib64:${wheel_libs}:${LD_LIBRARY_PATH:-}"
              "SCALELAB_CUDA_MODULE=$root/lib/libscalelab_cuda.so" QT_QPA_PLATFORM=offscreen)
cli="$root/bin/scalelab-cli"

pack() {
    tar -C "$root" -czf "$out/results.tar.gz" results
}
step() {  # step NAME SECONDS COMMAND...: at most SECONDS, and never past the deadline
    local name=$1 limit=$2
    shift 2
    local left=$((deadline - SECONDS))
    ((left < limit)) && limit=$left
    if ((limit < 10)); then
        echo "$name: not run, out of time" | tee -a "$out/summary.txt"
        return
    fi
    echo "== $name"
    timeout -k 5 "$limit" "$@" >"$results/$name.txt" 2>&1
    local rc=$?
    # A cut-short step is inconclusive, not failed; a skipped test exits 0 as a passed one does,
    # so the skips are counted (their reasons are in the step's output).
    local verdict="rc=$rc" skips
    ((rc == 124 || rc == 137)) && verdict="cut short at $limit s (inconclusive)"
    skips=$(grep -c '^SKIP' "$results/$name.txt")
    ((skips > 0)) && verdict+=", $skips skipped"
    echo "$name $verdict ($limit s allowed)" | tee -a "$out/summary.txt"
    pack
}
# The path of tool $1: on the PATH, else the first of the other arguments that exists.
find_tool() {
    command -v "$1" || ls "${@:2}" 2>/dev/null | head -1
}
# Field $2 of the last JSON line of file $1, or "n/a" when there is none.
last_json() {
    python3 -c "
import json
rows = [json.loads(l) for l in open('$1') if l.startswith('{')]
print(rows[-1]['$2'] if rows else 'n/a')" 2>/dev/null || echo n/a
}

: >"$out/summary.txt"
nvidia-smi >"$results/nvidia-smi.txt" 2>&1
"${scalelab_env[@]}" ldd "$root/lib/libscalelab_cuda.so" >"$results/ldd-module.txt" 2>&1
# The module was built against the toolkit's cuDNN and NCCL headers and runs on the libraries
# found here (PyTorch's wheels, most likely): which versions those are.
python3 -c "
import torch
print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn',
      torch.backends.cudnn.version(), 'nccl', torch.cuda.nccl.version())" \
    >"$results/versions.txt" 2>&1
step devices 30 "${scalelab_env[@]}" "$cli" devices
# Without a GPU every GPU test would skip and pass: say so and stop, leaving the device time.
if ! grep -q '^GPU [0-9]*:' "$results/devices.txt"; then
    echo "no GPU can be used: $(sed -n 's/^No GPU: //p' "$results/devices.txt")" |
        tee -a "$out/summary.txt" "$out/figures.txt"
    exit 1
fi
for test in test_cuda_devices test_gpu_module test_gpu_cudnn_layers test_gpu_own_kernels \
            test_fused_optimizers test_nccl_group test_gpu_training_steps; do
    step "$test" 90 "${scalelab_env[@]}" "$root/bin/$test"
done
# The accuracy test reads Fashion-MNIST from Debian's folder: the bundle's copy, linked there.
if [ ! -e /usr/share/datasets/fashion-mnist ]; then
    mkdir -p /usr/share/datasets && ln -s "$root/data" /usr/share/datasets/fashion-mnist
fi
step test_fashion_mnist_accuracy_gpu 120 "${scalelab_env[@]}" \
    "$root/bin/test_fashion_mnist_accuracy" cnn_reaches_089_in_two_epochs_on_one_gpu
for case in "cnn 10 512" "wrn 10 256"; do
    read -r model width batch <<<"$case"
    step "scalelab_${model}_${batch}" 90 "${scalelab_env[@]}" "$cli" bench train --device gpu \
        --model "$model" --width "$width" --batch "$batch" --devices 1 --json
    step "pytorch_${model}_${batch}" 90 python3 "$root/torch_gpu_throughput.py" \
        --anchor "$root/torch_anchor.py" --model "$model" --width "$width" --batch "$batch"
done
step train_cnn 120 "${scalelab_env[@]}" "$cli" train --device gpu --model cnn --epochs 2 \
    --batch 128 --lr 0.05 --data "$root/data" --no-store --metrics-out "$results/train_cnn.jsonl"
step allreduce 60 "${scalelab_env[@]}" "$cli" bench allreduce --backend cuda \
    --sizes 1M,16M,64M,256M --json
# ScaleLab's own kernels (layers, loss, optimisers, norms, block reductions) under
# compute-sanitizer, where the machine has it, each check cut short when time runs out:
#   - memcheck: out-of-bounds and misaligned accesses, CUDA API errors; for whole training
#     steps too, for the buffers a replica sizes (activations, workspaces, the pinned stage);
#   - racecheck: shared-memory hazards in the block reductions;
#   - initcheck: reads of device memory never written, which fresh cudaMalloc memory, often all
#     zeros, can hide from a comparison with the CPU.
# The tests compare results, which a stray write outside a buffer or a missing __syncthreads can
# leave right on one run. The sanitizer runs with the machine's libraries, the test (through
# env, which it follows) with the bundle's.
sanitizer=$(find_tool compute-sanitizer /usr/local/cuda/bin/compute-sanitizer \
            /usr/local/cuda/compute-sanitizer/compute-sanitizer)
sanitized=()  # each check's step name, for the figures
# sanitize TOOL TEST SECONDS [FUNCTION...]: TEST's functions (all when none are named) under
# compute-sanitizer's TOOL.
sanitize() {
    local tool=$1 test=$2 limit=$3
    shift 3
    sanitized+=("${tool}_$test")
    if [ -z "$sanitizer" ]; then
        echo "${tool}_$test: not run, no compute-sanitizer on this machine" |
            tee -a "$out/summary.txt"
        return
    fi
    step "${tool}_$test" "$limit" "$sanitizer" --tool "$tool" --target-processes all \
        --error-exitcode 1 --print-limit 20 "${scalelab_env[@]}" "$root/bin/$test" "$@"
}
# The own kernels' test functions but the timestamps' one, which checks that 200 copies take
# the GPU longer than the host takes to enqueue them: a sanitizer slows every CUDA call down.
mapfile -t own_kernel_functions < <("${scalelab_env[@]}" "$root/bin/test_gpu_own_kernels" \
    -functions | sed -n 's/()$//p' | grep -v '^timestamps_')
sanitize memcheck test_gpu_own_kernels 60 "${own_kernel_functions[@]}"
sanitize memcheck test_fused_optimizers 45
# Two of the step cases (convolution, pooling and dropout; batch norm and residual adds): under
# memcheck, cuDNN's search of the convolution algorithms runs each of them instrumented.
sanitize memcheck test_gpu_training_steps 75 "gpu_steps_match_cpu_steps:cnn, sgd" \
    "gpu_steps_match_cpu_steps:resnet8 (batch norm), sgd"
sanitize racecheck test_gpu_own_kernels 60 "${own_kernel_functions[@]}"
sanitize racecheck test_fused_optimizers 45
sanitize initcheck test_gpu_own_kernels 45 "${own_kernel_functions[@]}"
# Where the GPU's time goes in ScaleLab's cnn step at 512, kernel by kernel and call by call,
# where Nsight Systems is installed (its report files are left out: only the summaries return).
nsys=$(find_tool nsys /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys)
if [ -n "$nsys" ]; then
    step nsys_cnn_512 90 "$nsys" profile --stats=true --force-overwrite=true \
        --output "$root/nsys_cnn_512" "${scalelab_env[@]}" "$cli" bench train --device gpu \
        --model cnn --batch 512 --devices 1 --windows 1 --json
else
    echo "nsys_cnn_512: not run, no nsys on this machine" | tee -a "$out/summary.txt"
fi

{
    echo "GPU libraries as PyTorch loads them: $(tail -1 "$results/versions.txt")"
    echo "test accuracy after each epoch (cnn, batch 128, 1 GPU): $(python3 -c "
import json
rows = [json.loads(l) for l in open('$results/train_cnn.jsonl')]
print(', '.join(str(round(r['val_accuracy'], 4)) for r in rows if r.get('type') == 'epoch') or 'n/a')" 2>/dev/null || echo n/a)"
    for case in "cnn 512" "wrn 256"; do
        read -r model batch <<<"$case"
        ours=$(last_json "$results/scalelab_${model}_${batch}.txt" images_per_s 2>&1)
        torch=$(last_json "$results/pytorch_${model}_${batch}.txt" images_per_s 2>&1)
        echo "$model batch $batch: scalelab $ours, pytorch $torch images/s" \
             "(ratio $(python3 -c "print(f'{$ours / $torch:.2f}')" 2>/dev/null || echo n/a))"
        echo "  scalelab's step, ms: $(python3 -c "
import json
rows = [json.loads(l) for l in open('$results/scalelab_${model}_${batch}.txt') if l.startswith('{')]
parts = ('data', 'forward', 'backward', 'exposed_comm', 'wait', 'optimizer')
print(', '.join(f'{p} {rows[-1][p + \"_ms\"]:.3f}' for p in parts) if rows else 'n/a')" 2>/dev/null ||
            echo n/a)"
    done
    for check in "${sanitized[@]}"; do
        summary=$(grep -h 'ERROR SUMMARY' "$results/$check.txt" 2>/dev/null | sed 's/^=* *//')
        echo "compute-sanitizer ${check/_/, }: ${summary:-n/a}"
    done
} | tee "$out/figures.txt"
cp "$out/figures.txt" "$results/" && pack
