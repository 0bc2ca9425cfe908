"""scalelab-cli train --save-initial, read by numpy as a user would: the arrays, their names,
shapes and dtype for mlp, cnn and resnet8; values drawn as PyTorch draws its defaults (uniform in
+-1/sqrt(fan_in)) and batch-norm buffers at their starting values; the same file for the same
seed, another for another seed; an unwritable path refused with exit 2.
Usage: check_initial_state.py SCALELAB_CLI"""
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print(f"skipped: numpy is not installed for {sys.executable} (apt install python3-numpy)")
    sys.exit(0)

CLI = sys.argv[1]

# What each model's file must hold: name -> shape (28x28 one-channel synthetic images).
EXPECTED = {
    "mlp": {"fc1.weight": (256, 784), "fc1.bias": (256,), "fc2.weight": (256, 256),
            "fc2.bias": (256,), "fc3.weight": (10, 256), "fc3.bias": (10,)},
    "cnn": {"conv1.weight": (32, 1, 3, 3), "conv1.bias": (32,), "conv2.weight": (64, 32, 3, 3),
            "conv2.bias": (64,), "fc1.weight": (128, 3136), "fc1.bias": (128,),
            "fc2.weight": (10, 128), "fc2.bias": (10,)},
}


def save_initial(model, path, seed=0):
    result = subprocess.run(
        [CLI, "train", "--dataset", "synthetic", "--model", model, "--epochs", "1",
         "--train-subset", "64", "--batch", "32", "--no-store", "--seed", str(seed),
         "--save-initial", path], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: train --model {model} --save-initial exited {result.returncode}:\n"
                 f"{result.stdout}{result.stderr}")
    return np.load(path)


def check(holds, what):
    if not holds:
        sys.exit("FAIL: " + what)


with tempfile.TemporaryDirectory() as folder:
    for model, expected in EXPECTED.items():
        arrays = save_initial(model, os.path.join(folder, model + ".npz"))
        check(sorted(arrays.keys()) == sorted(expected), f"{model}: names {sorted(arrays.keys())}")
        for name, shape in expected.items():
            values = arrays[name]
            check(values.shape == shape, f"{model} {name}: shape {values.shape}, not {shape}")
            check(values.dtype == np.float32, f"{model} {name}: dtype {values.dtype}")
            # Weights of a layer and its bias share the bound 1/sqrt(fan_in).
            fan_in = np.prod(expected[name.rsplit(".", 1)[0] + ".weight"][1:])
            bound = 1 / math.sqrt(fan_in)
            check(np.abs(values).max() <= bound and values.std() > bound / 4,
                  f"{model} {name}: not uniform in +-{bound:.4f}")

    resnet = save_initial("resnet8", os.path.join(folder, "resnet8.npz"))
    check(resnet["stem.conv.weight"].shape == (16, 1, 3, 3), "resnet8 stem.conv.weight")
    check(resnet["stem.bn.running_var"].shape == (16,), "resnet8 stem.bn.running_var")
    check((resnet["stem.bn.running_var"] == 1).all() and (resnet["stem.bn.running_mean"] == 0).all(),
          "resnet8: batch-norm buffers not at 0 and 1")
    check((resnet["stem.bn.weight"] == 1).all() and (resnet["stem.bn.bias"] == 0).all(),
          "resnet8: batch-norm scale and shift not at 1 and 0")
    check(resnet["fc.weight"].shape == (10, 64), "resnet8 fc.weight")

    again = save_initial("cnn", os.path.join(folder, "again.npz"))
    other = save_initial("cnn", os.path.join(folder, "other.npz"), seed=1)
    first = np.load(os.path.join(folder, "cnn.npz"))
    check(all((again[n] == first[n]).all() for n in first.keys()), "the same seed, other values")
    check(not (other["conv1.weight"] == first["conv1.weight"]).all(), "another seed, same values")

    refused = subprocess.run(
        [CLI, "train", "--dataset", "synthetic", "--model", "mlp", "--epochs", "1", "--no-store",
         "--save-initial", os.path.join(folder, "no such folder", "init.npz")],
        capture_output=True, text=True)
    check(refused.returncode == 2, f"an unwritable path exited {refused.returncode}, not 2")
    check("--save-initial: Cannot write" in refused.stderr, "the message: " + refused.stderr)
print("ok")
