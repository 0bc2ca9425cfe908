"""resources/pytorch/scalelab_lr.py against the learning rate ScaleLab's step rows report, for
every schedule, warm-up kind and unit and scaling rule, over runs of 2 devices and 5 epochs of
8 steps. Usage: check_lr.py SCALELAB_CLI RESOURCES_PYTORCH_DIR"""
import json
import os
import subprocess
import sys
import tempfile

CLI, RESOURCES = sys.argv[1:3]
sys.path.insert(0, RESOURCES)
from scalelab_lr import LearningRate  # noqa: E402

DEVICES, BATCH, SUBSET, EPOCHS = 2, 16, 256, 5
STEPS_PER_EPOCH = SUBSET // (DEVICES * BATCH)
CASES = [
    {"schedule": "cosine", "min_lr": 0.001, "lr_scaling": "linear", "warmup": "gradual",
     "warmup_length": 1.5, "warmup_unit": "epochs"},
    {"schedule": "multistep", "milestones": [1, 3], "gamma": 0.5, "lr_scaling": "sqrt",
     "warmup": "per-epoch", "warmup_length": 2, "warmup_unit": "epochs",
     "warmup_start_factor": 0.25},
    {"schedule": "step", "step_epochs": 2, "gamma": 0.3, "warmup": "constant",
     "warmup_length": 10, "warmup_unit": "steps", "reference_batch": 64, "lr_scaling": "linear"},
    {"schedule": "poly", "poly_power": 1.5, "warmup": "gradual", "warmup_length": 7,
     "warmup_unit": "steps", "lr": 0.2},
    {"schedule": "exp", "gamma": 0.9},
    {},
]
LIMIT = 1e-12  # relative: the same double formulas; cos and pow may differ by an ulp

worst = 0.0
with tempfile.TemporaryDirectory() as folder:
    for number, case in enumerate(CASES):
        config = os.path.join(folder, f"case{number}.json")
        metrics = os.path.join(folder, f"case{number}.jsonl")
        with open(config, "w") as out:
            json.dump(case, out)
        run = subprocess.run(
            [CLI, "train", "--config", config, "--dataset", "synthetic", "--model", "mlp",
             "--train-subset", str(SUBSET), "--batch", str(BATCH), "--devices", str(DEVICES),
             "--epochs", str(EPOCHS), "--threads", "1", "--no-store", "--metrics-out", metrics],
            capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"FAIL: case {case} exited {run.returncode}:\n{run.stdout}{run.stderr}")
        with open(metrics) as lines:
            steps = [r for r in map(json.loads, lines) if r["type"] == "step"]
        if len(steps) != EPOCHS * STEPS_PER_EPOCH:
            sys.exit(f"FAIL: case {case}: {len(steps)} step rows")
        lr = LearningRate({**case, "batch": BATCH, "epochs": EPOCHS}, DEVICES, STEPS_PER_EPOCH)
        for row in steps:
            step = row["step"] - 1  # rows count steps from 1, the schedule from 0
            expected = lr(step)
            difference = abs(expected - row["lr"]) / max(abs(row["lr"]), 1e-300)
            worst = max(worst, difference)
            if difference > LIMIT:
                sys.exit(f"FAIL: case {case}, step {row['step']}: ScaleLab {row['lr']!r}, "
                         f"Python {expected!r}")
print(f"ok: {len(CASES)} schedules, largest relative difference {worst:.1e}")
