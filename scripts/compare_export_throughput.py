#!/usr/bin/env python3
"""Training images/s of ScaleLab against its own experiment exported to PyTorch DDP
(`scalelab-cli export pytorch`), one line per model, on the same CPU setting: the same
processes/devices, one thread each, batch per device, images and steps. ScaleLab trains with
`train --metrics-out`, the exported script with `launch.sh --steps N --metrics-out`, and each
rate is the mean images/s of the step rows after the first five (ScaleLab's steady rate leaves
them out too), read from the two metrics files alike.

  scripts/compare_with_pytorch.sh export
  scripts/compare_with_pytorch.sh export --models cnn --devices 2 --batch 64 --steps 40

Needs Debian's python3-torch and python3-numpy (scripts/setup.sh). The machine must be
otherwise idle: compare ratios taken in one sitting, never absolute figures.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

WARMUP_STEPS = 5


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default="build/release/app/scalelab-cli")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the Python with torch and numpy (Debian's)")
    parser.add_argument("--models", default="mlp,cnn,resnet8,resnet20")
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    return parser.parse_args()


def steady_rate(path):
    """The mean images/s of the step rows after the first WARMUP_STEPS."""
    with open(path) as lines:
        rows = [json.loads(line) for line in lines]
    rates = [row["images_per_s"] for row in rows
             if row["type"] == "step" and row["step"] > WARMUP_STEPS]
    if not rates:
        sys.exit(f"{path} has no step rows past step {WARMUP_STEPS}: give more --steps")
    return sum(rates) / len(rates)


def run(command, cwd, env=None):
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}")


def compare(model, args, root):
    """ScaleLab's and the exported script's steady images/s for `model`."""
    out = os.path.join(root, model)
    images = args.devices * args.batch * (args.steps + 1)
    run([os.path.abspath(args.cli), "export", "pytorch", "--model", model, "--data", args.data,
         "--devices", str(args.devices), "--batch", str(args.batch), "--threads", "1",
         "--train-subset", str(images), "--test-subset", "500", "--epochs", "1",
         "--out", out], root)
    run([os.path.abspath(args.cli), "train", "--config", "experiment.json", "--no-store",
         "--metrics-out", "scalelab.jsonl"], out)
    run(["bash", "launch.sh", "--steps", str(args.steps), "--metrics-out", "pytorch.jsonl"], out,
        {**os.environ, "PYTHON": args.python})
    return steady_rate(os.path.join(out, "scalelab.jsonl")), \
        steady_rate(os.path.join(out, "pytorch.jsonl"))


def main():
    args = arguments()
    print(f"{args.devices} processes/devices x 1 thread, batch {args.batch} per device, "
          f"Fashion-MNIST, mean images/s of steps {WARMUP_STEPS + 1}-{args.steps}")
    with tempfile.TemporaryDirectory() as root:
        for model in args.models.split(","):
            scalelab, pytorch = compare(model, args, root)
            print(f"{model}: ScaleLab {scalelab:,.0f} img/s, exported PyTorch DDP script "
                  f"{pytorch:,.0f} img/s, ratio {scalelab / pytorch:.2f}", flush=True)


if __name__ == "__main__":
    main()
