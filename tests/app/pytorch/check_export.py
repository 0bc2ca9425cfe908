"""`scalelab-cli export pytorch` end to end, one case per model: the exported train_ddp.py
compiles; started by its launch.sh as 2 DistributedDataParallel processes (gloo) from
`train --save-initial`'s weights, it trains, and its step losses follow the ScaleLab run of the
same experiment as far as float32 lets them (each case says how far; check_sgd_steps.py and
check_bn_steps.py say why); its metrics file imports into a run store (`runs import`) as a run
tagged pytorch whose curve is the file's. Bad input to the script (a dataset folder without
the files, an experiment that is not JSON or not there, another run's initial state) is said in
one "error: " line.
Usage: check_export.py SCALELAB_CLI PYTHON DATA_FOLDER"""
import csv
import json
import os
import py_compile
import signal
import socket
import subprocess
import sys
import tempfile

from pytorch_checks import fail, relative, skip_without, step_rows

skip_without("numpy", "torch")

CLI, PYTHON, DATA = sys.argv[1:4]
COMMON = ["--devices", "2", "--epochs", "1", "--seed", "3", "--threads", "1"]
SYNTHETIC = ["--dataset", "synthetic", "--synthetic-train", "512", "--synthetic-test", "128"]
# name, export flags, steps the script trains, relative limit per step held (the rest of the
# steps only train: dropout draws PyTorch's own masks, or float32 noise has grown past it).
CASES = [
    # The plain case, held over 20 steps: the cnn's float32 noise stays below 1e-4 so long.
    ("cnn, Fashion-MNIST, SGD",
     ["--model", "cnn", "--dataset", "fashion-mnist", "--data", DATA, "--batch", "32",
      "--train-subset", "2048", "--test-subset", "1000"], 20, [1e-4] * 20),
    # Batch norm per process, 2 micro-batches a step (no_sync), augmentation drawn per process
    # and sample, LAMB without decay on batch norm and biases. BN training amplifies float32
    # noise about tenfold a step: held to 1e-6, 1e-5, 1e-4 over the first three.
    ("resnet8, synthetic, crop-flip, accumulation 2, LAMB",
     ["--model", "resnet8", *SYNTHETIC, "--batch", "16", "--accumulation", "2",
      "--augment", "crop-flip", "--optimizer", "lamb", "--lr", "0.01",
      "--weight-decay", "0.01", "--no-decay-norm-bias"], 6, [1e-6, 1e-5, 1e-4]),
    ("resnet20, synthetic, ghost batch 8, LARS",
     ["--model", "resnet20", *SYNTHETIC, "--batch", "16", "--ghost-batch", "8",
      "--optimizer", "lars", "--lr", "1"], 3, [1e-6]),
    ("mlp, synthetic 3 channels, assessment, NovoGrad, target accuracy",
     ["--model", "mlp", *SYNTHETIC, "--synthetic-channels", "3", "--synthetic-size", "32",
      "--batch", "32", "--augment", "assessment", "--optimizer", "novograd", "--lr", "0.02",
      "--target-accuracy", "0.05"], 8, [1e-5] * 8),
    ("wrn, width 1, synthetic, AdamW", ["--model", "wrn", "--width", "1", *SYNTHETIC,
                                        "--synthetic-size", "16", "--batch", "16",
                                        "--optimizer", "adamw", "--lr", "0.001"], 3, []),
]


def run(command, cwd, env=None):
    """Runs `command` in a session of its own, so that a command that does not end within
    three minutes is ended with all it started (launch.sh's processes) and said."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        fail(f"{' '.join(command)} did not end within 180 s:\n{output}")
    if process.returncode != 0:
        fail(f"{' '.join(command)} exited {process.returncode}:\n{output}")
    return output


def free_port():
    """A port no one listens on now, for the processes' rendezvous (a fixed one may be taken by
    another test running at the same time)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rows_of(path):
    with open(path) as lines:
        return [json.loads(line) for line in lines]


def compare(name, scalelab, pytorch, limits):
    """The largest relative step-loss difference; a step past its limit, or at another
    learning rate, fails the case."""
    differences = relative([row["loss"] for row in pytorch], [row["loss"] for row in scalelab])
    for mine, theirs, difference in zip(scalelab, pytorch, differences):
        held = mine["step"] <= len(limits)
        if (held and difference > limits[mine["step"] - 1]) or mine["lr"] != theirs["lr"]:
            fail(f"{name}: step {mine['step']}: ScaleLab loss {mine['loss']} at lr "
                 f"{mine['lr']}, PyTorch {theirs['loss']} at lr {theirs['lr']}")
    return max(differences)


def check_import(name, folder, pytorch_steps):
    """The script's metrics file as a stored run: tagged pytorch, and its training-loss curve
    the file's step losses."""
    store = os.path.join(folder, "runs.sqlite")
    run([CLI, "runs", "import", "pytorch.jsonl", "--store", store], folder)
    shown = run([CLI, "runs", "show", "1", "--store", store], folder)
    if "tags:           pytorch" not in shown:
        fail(f"{name}: the imported run is not tagged pytorch:\n{shown}")
    run([CLI, "runs", "export", "1", "-o", "curves.csv", "--csv", "--store", store], folder)
    with open(os.path.join(folder, "curves.csv")) as table:
        curve = [float(row["value"]) for row in csv.DictReader(table)
                 if row["metric"] == "train_loss"]
    if curve != [row["loss"] for row in pytorch_steps]:
        fail(f"{name}: the imported curve {curve[:3]}... is not the file's")


def check_case(root, index, name, flags, steps, limits):
    out = os.path.join(root, f"case{index}")
    run([CLI, "export", "pytorch", *COMMON, *flags, "--out", out], root)
    py_compile.compile(os.path.join(out, "train_ddp.py"), doraise=True)
    run([CLI, "train", "--config", "experiment.json", "--save-initial", "initial.npz",
         "--metrics-out", "scalelab.jsonl", "--no-store"], out)
    env = {**os.environ, "PYTHON": PYTHON, "MASTER_PORT": str(free_port())}
    run(["bash", "launch.sh", "--initial", "initial.npz", "--metrics-out", "pytorch.jsonl",
         "--steps", str(steps), "--timeout-s", "60"], out, env)
    rows = rows_of(os.path.join(out, "pytorch.jsonl"))
    if [row["type"] for row in rows] != ["start"] + ["step"] * steps + ["epoch", "end"]:
        fail(f"{name}: the script's rows are {[row['type'] for row in rows]}")
    scalelab = step_rows(rows_of(os.path.join(out, "scalelab.jsonl")))
    largest = compare(name, scalelab, step_rows(rows), limits)
    check_import(name, out, step_rows(rows))
    return (f"{name}: {steps} steps, largest relative difference {largest:.1e}"
            + (f" (held to {max(limits):g} over {len(limits)})" if limits else " (trains only)"))


# What a user may get wrong, each said in one "error: " line that names it, not a traceback:
# flags, the file's experiment.json, the file to start from.
BAD_INPUTS = [
    (["--data", "empty"], "error: the fashion-mnist dataset: no train-images-idx3-ubyte"),
    (["--experiment", "broken.json"], "error: the experiment broken.json is not JSON"),
    (["--experiment", "absent.json"], "error: cannot read the experiment absent.json"),
    (["--initial", "mlp.npz"], "error: --initial mlp.npz is not this experiment's initial state"),
]


def check_bad_input(root):
    """The exported script as one process, given each of BAD_INPUTS."""
    out = os.path.join(root, "bad")
    run([CLI, "export", "pytorch", "--model", "cnn", "--devices", "1", "--out", out], root)
    os.makedirs(os.path.join(out, "empty"))
    with open(os.path.join(out, "broken.json"), "w") as broken:
        broken.write('{"model": ')
    run([CLI, "train", "--model", "mlp", "--train-subset", "256", "--epochs", "1",
         "--no-store", "--save-initial", "mlp.npz"], out)
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
           "WORLD_SIZE": "1", "RANK": "0"}
    for flags, said in BAD_INPUTS:
        script = subprocess.run([PYTHON, "train_ddp.py", "--data", DATA, *flags], cwd=out,
                                env=env, capture_output=True, text=True, timeout=120)
        if script.returncode == 0 or not script.stderr.startswith(said):
            fail(f"train_ddp.py {' '.join(flags)} exited {script.returncode} saying:\n"
                 f"{script.stderr}")
    return f"bad input: {len(BAD_INPUTS)} cases, each said in one line"


with tempfile.TemporaryDirectory() as root:
    for i, case in enumerate(CASES):
        print(check_case(root, i, *case), flush=True)
    print(check_bad_input(root))
print("ok: every case trained as 2 DDP processes and imported")
