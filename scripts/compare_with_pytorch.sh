#!/usr/bin/env bash
# Measures ScaleLab against the PyTorch anchor (../shared/anchors/torch_anchor.py) back to back,
# same model, batch and thread count, and prints one line per case with the ratio. The machine
# must be otherwise idle: compare ratios taken in one sitting, never absolute figures.
#
#   scripts/compare_with_pytorch.sh tput        # training images/s, every model, batch 8-512, 1-2 threads
#                                               # (scripts/compare_throughput.py; --help for a subset)
#   scripts/compare_with_pytorch.sh ddp         # 2 devices vs 1 (one core each) against DDP over gloo
#   scripts/compare_with_pytorch.sh allreduce   # bench allreduce --devices 2 against gloo
#   scripts/compare_with_pytorch.sh accuracy    # time to 0.89 test accuracy, cnn, batch 128, 2 threads
#   scripts/compare_with_pytorch.sh breakdown   # how well the per-device step-time breakdown adds up
#   scripts/compare_with_pytorch.sh export      # against the experiment exported as a DDP script
#                                               # (scripts/compare_export_throughput.py; --help)
#
# Needs what scripts/setup.sh installs (python3-torch, libopenblas0-openmp) and, for tput, ddp,
# allreduce and accuracy, the anchor, which lives beside the repository: ANCHOR=PATH names another place.
# PyTorch multiplies with OpenBLAS built for OpenMP, named here as the tests name it
# (tests/CMakeLists.txt): it follows PyTorch's thread count, as the comparison needs, whatever
# BLAS the machine's alternatives pick.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${SCALELAB_CLI:-build/release/app/scalelab-cli}
anchor=${ANCHOR:-../shared/anchors/torch_anchor.py}
openblas=/usr/lib/$(gcc -print-multiarch)/openblas-openmp
[ -d "$openblas" ] || { echo "compare_with_pytorch: no $openblas: run scripts/setup.sh" >&2; exit 2; }
export LD_LIBRARY_PATH=$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
case "${1:-tput}" in tput | ddp | allreduce | accuracy)
    [ -f "$anchor" ] || {
        echo "compare_with_pytorch: no PyTorch anchor at $anchor: set ANCHOR=PATH to torch_anchor.py" >&2
        exit 2
    } ;;
esac
field() { python3 -c "import json,sys; print(json.loads(sys.stdin.readlines()[-1])['$1'])"; }

case "${1:-tput}" in
tput)
    shift $(($# > 0 ? 1 : 0))
    python3 scripts/compare_throughput.py --cli "$cli" --anchor "$anchor" "$@"
    ;;
ddp)
    for batch in 64 256; do
        torch=$("$anchor" ddp --model cnn --batch $batch --world 2)
        one=$("$cli" bench train --model cnn --batch $batch --threads 1 --devices 1 --json | field images_per_s)
        two=$("$cli" bench train --model cnn --batch $batch --threads 1 --devices 2 --json | field images_per_s)
        printf 'cnn batch %d per device: scalelab 1 device %.1f, 2 devices %.1f img/s, efficiency %s; pytorch DDP efficiency %s\n' \
            $batch "$one" "$two" "$(python3 -c "print(f'{$two / (2 * $one):.3f}')")" \
            "$(echo "$torch" | field efficiency)"
        # The hardware's own ceiling: two independent one-device processes at the same time
        # (shared caches and memory bandwidth), with no communication at all.
        a=$(mktemp) b=$(mktemp)
        "$cli" bench train --model cnn --batch $batch --threads 1 --json >"$a" &
        "$cli" bench train --model cnn --batch $batch --threads 1 --json >"$b"
        wait
        both=$(python3 -c "print($(field images_per_s <"$a") + $(field images_per_s <"$b"))")
        printf '  two independent 1-device processes at once: %.1f img/s in all (%s of twice one alone); 2 devices reach %s of that\n' \
            "$both" "$(python3 -c "print(f'{$both / (2 * $one):.3f}')")" \
            "$(python3 -c "print(f'{$two / $both:.3f}')")"
        rm -f "$a" "$b"
    done
    ;;
allreduce)
    "$cli" bench allreduce --devices 2 --sizes 1M,4M,16M,64M
    "$anchor" allreduce --world 2 --sizes-mb 1 4 16 64
    ;;
export)
    shift
    python3 scripts/compare_export_throughput.py --cli "$cli" "$@"
    ;;
accuracy)
    "$anchor" acc --model cnn --batch 128 --threads 2 --epochs 2
    "$cli" train --model cnn --batch 128 --threads 2 --epochs 2 --target-accuracy 0.89
    ;;
breakdown)
    out=$(mktemp --suffix .jsonl)
    "$cli" train --model cnn --devices 2 --threads 1 --batch 64 --epochs 1 --metrics-out "$out" >/dev/null
    python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l]
parts = ("data", "forward", "backward", "exposed_comm", "wait", "optimizer")
for rank in range(len(rows[0]["devices"])):
    ratios = [sum(r["devices"][rank][p] for p in parts) / r["seconds"] for r in rows[5:]]
    mean = sum(ratios) / len(ratios)
    print(f"rank {rank}: parts / step time = {mean:.4f} (mean over {len(ratios)} steps), "
          f"worst {min(ratios):.4f}")
PY
    rm -f "$out"
    ;;
*)
    echo "usage: $0 tput|ddp|allreduce|export|accuracy|breakdown" >&2
    exit 2
    ;;
esac
