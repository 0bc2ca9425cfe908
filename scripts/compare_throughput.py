#!/usr/bin/env python3
"""Training images/s of ScaleLab against PyTorch, every model of the zoo over a batch sweep.

For each model, thread count and batch it runs `scalelab-cli bench train` and the PyTorch
anchor (torch_anchor.py tput) back to back with the same windows and steps per window, and
prints one row: both rates, their ratio, and ScaleLab's GFLOP/s as a share of `bench sgemm`'s
peak at that thread count. After each model and thread count it prints ScaleLab's curve against
the batch and says where it steps down by more than 10% from a smaller batch, where the ratio is
below 2 (the goal from batch 32 on; with the share of the peak 2x would need: where PyTorch
already runs above half the peak, 2x is beyond the machine) and where it is below 1.5.

  scripts/compare_with_pytorch.sh tput
  scripts/compare_with_pytorch.sh tput --models cnn,wrn-4 --batches 32,128 --threads 2

The machine must be otherwise idle: compare ratios taken in one sitting, never absolute figures.
"""
import argparse
import json
import os
import subprocess
import sys

# Debian's PyTorch runs its linear layers on whichever BLAS this link points to. The reference
# BLAS it falls back to is 10 to 30 times slower than OpenBLAS: a comparison with it is unfair.
SYSTEM_BLAS = "/usr/lib/x86_64-linux-gnu/libblas.so.3"

# Images per timed window, so that a window takes about a second or more on one core; a
# window is never shorter than 8 steps (bench train's rule, given to the anchor as --steps).
IMAGES_PER_WINDOW = {"mlp": 8192, "cnn": 2048, "resnet8": 1024, "resnet20": 512,
                     "wrn-1": 1024, "wrn-4": 128}
ZOO = list(IMAGES_PER_WINDOW)


def model_flags(model):
    """'wrn-4' -> ['--model', 'wrn', '--width', '4']."""
    name, _, width = model.partition("-")
    return ["--model", name] + (["--width", width] if width else [])


def last_json(command):
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def sgemm_peaks(cli, threads):
    out = subprocess.run([cli, "bench", "sgemm", "--threads", ",".join(map(str, threads)),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return {row["threads"]: row["gflops"] for row in map(json.loads, out.split("\n")[:-1])}


def measure(args, model, batch, threads):
    images = IMAGES_PER_WINDOW.get(model, 1024)
    steps = max(8, -(-images // batch))
    ours = last_json([args.cli, "bench", "train", *model_flags(model), "--batch", str(batch),
                      "--threads", str(threads), "--windows", str(args.windows),
                      "--images", str(steps * batch), "--json"])
    torch = last_json([args.anchor, "tput", *model_flags(model), "--batch", str(batch),
                       "--threads", str(threads), "--windows", str(args.windows),
                       "--steps", str(steps)])
    return ours, torch["ips_med"]


def report_curve(model, threads, rows):
    curve = "  ".join(f"{row[0]}:{row[1]:,.0f}" for row in rows)
    print(f"  {model}, {threads} thread(s), scalelab images/s by batch: {curve}")
    best_below = 0.0
    for batch, ips, ratio, share in rows:
        if best_below > 0 and ips < 0.9 * best_below:
            print(f"  ! step down at batch {batch}: {ips:,.0f} images/s, "
                  f"{100 * (1 - ips / best_below):.0f}% below a smaller batch")
        best_below = max(best_below, ips)
        if ratio < 1.5:
            print(f"  ! batch {batch}: {ratio:.2f}x PyTorch, below the 1.5x floor")
        elif ratio < 2 and batch >= 32:
            print(f"  ! batch {batch}: {ratio:.2f}x PyTorch, below the 2x goal (2x would run "
                  f"at {200 * share / ratio:.0f}% of the sgemm peak)")


def check_pytorch_blas():
    blas = os.path.realpath(SYSTEM_BLAS)
    if os.path.exists(SYSTEM_BLAS) and "openblas" not in blas:
        sys.exit(f"PyTorch would multiply matrices with {blas}, the reference BLAS, and lose "
                 "by a factor 10 or more: install OpenBLAS (apt-get install -y "
                 "libopenblas0-openmp) for a fair comparison")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default="build/release/app/scalelab-cli")
    ap.add_argument("--anchor", default="../shared/anchors/torch_anchor.py")
    ap.add_argument("--models", default=",".join(ZOO), help="comma-separated; wrn-K is wrn, k=K")
    ap.add_argument("--batches", default="8,16,32,64,128,256,512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--windows", type=int, default=3)
    args = ap.parse_args()
    check_pytorch_blas()
    threads_list = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]

    peaks = sgemm_peaks(args.cli, threads_list)
    print("sgemm peak (bench sgemm): " +
          ", ".join(f"{t} thread(s) {g:.1f} GFLOP/s" for t, g in peaks.items()))
    print(f"{'model':<9} {'batch':>5} {'thr':>3} {'pytorch':>10} {'scalelab':>10} "
          f"{'ratio':>6} {'GFLOP/s':>8} {'of peak':>7}")
    for model in args.models.split(","):
        for threads in threads_list:
            rows = []
            for batch in batches:
                ours, torch = measure(args, model, batch, threads)
                ips = ours["images_per_s"]
                ratio = ips / torch
                share = ours["gflops"] / peaks[threads]
                rows.append((batch, ips, ratio, share))
                print(f"{model:<9} {batch:>5} {threads:>3} {torch:>10.1f} {ips:>10.1f} "
                      f"{ratio:>6.2f} {ours['gflops']:>8.1f} "
                      f"{100 * share:>6.0f}%", flush=True)
            report_curve(model, threads, rows)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
