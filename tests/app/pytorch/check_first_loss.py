"""The first step's loss of a ScaleLab run against PyTorch's on the same numbers: the module of
resources/pytorch/scalelab_models.py loaded from `train --save-initial`, the batch taken in
ScaleLab's order (scalelab_order.py) from the same Fashion-MNIST files and normalised as
ScaleLab does (scalelab_data.py). Equal forward passes mean equal architectures, names,
layouts, inputs and order. mlp and cnn, 1 and 2 devices.
Usage: check_first_loss.py SCALELAB_CLI RESOURCES_PYTORCH_DIR DATA_FOLDER"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed for {sys.executable} "
          "(apt install python3-numpy python3-torch)")
    sys.exit(0)

CLI, RESOURCES, DATA = sys.argv[1:4]
sys.path.insert(0, RESOURCES)
from scalelab_data import channel_statistics, normalise, read_idx_set  # noqa: E402
from scalelab_models import build, load_initial_state  # noqa: E402
from scalelab_order import epoch_indices  # noqa: E402

SUBSET, BATCH, SEED = 2048, 64, 3
LIMIT = 1e-5  # relative: float32 sums in another order (oneDNN's against PyTorch's kernels)

torch.set_num_threads(1)
images, labels = read_idx_set(DATA, "train", SUBSET)
inputs = normalise(images, channel_statistics(images))
worst = 0.0
with tempfile.TemporaryDirectory() as folder:
    for model in ("mlp", "cnn"):
        for devices in (1, 2):
            initial = os.path.join(folder, f"{model}{devices}.npz")
            metrics = os.path.join(folder, f"{model}{devices}.jsonl")
            run = subprocess.run(
                [CLI, "train", "--dataset", "fashion-mnist", "--data", DATA, "--model", model,
                 "--train-subset", str(SUBSET), "--batch", str(BATCH), "--devices", str(devices),
                 "--threads", "1", "--epochs", "1", "--seed", str(SEED), "--no-store",
                 "--save-initial", initial, "--metrics-out", metrics],
                capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"FAIL: {model} on {devices} devices exited {run.returncode}:\n"
                         f"{run.stdout}{run.stderr}")
            with open(metrics) as rows:
                first = next(json.loads(r) for r in rows if json.loads(r)["type"] == "step")
            # Device r's first batch: positions r, r + devices, ... of the epoch's shuffle; the
            # step's loss is the mean over every device's batch.
            order = epoch_indices(SUBSET, SEED, 1, 0, 0)[:BATCH * devices]
            net = build(model, channels=1, size=28)
            net.load_state_dict(load_initial_state(initial), strict=True)
            with torch.no_grad():
                loss = torch.nn.functional.cross_entropy(
                    net(torch.from_numpy(inputs[order])), torch.from_numpy(labels[order]))
            difference = abs(loss.item() - first["loss"]) / abs(first["loss"])
            worst = max(worst, difference)
            print(f"{model}, {devices} device(s): ScaleLab {first['loss']:.7f}, "
                  f"PyTorch {loss.item():.7f}, relative difference {difference:.1e}")
            if difference > LIMIT:
                sys.exit(f"FAIL: {model} on {devices} devices differs by {difference:.1e}")
print(f"ok: largest relative difference {worst:.1e}")
