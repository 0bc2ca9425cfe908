"""`scalelab-cli export pytorch` end to end, one case per model: the exported train_ddp.py
compiles; started by its launch.sh as 2 DistributedDataParallel processes (gloo) from
`train --save-initial`'s weights, it trains, and its step losses follow the ScaleLab run of the
same experiment as far as float32 lets them: each step within 1,000 times what the script
does against itself from initial weights one float32 step apart (pytorch_checks.py; the script
is replayed twice from such a nudged copy of the initial state). Its metrics file imports into a
run store (`runs import`) as a run tagged pytorch whose curve is the file's. Bad input to the
script (a dataset folder without the files, an experiment that is not JSON or not there,
another run's initial state) is said in one "error: " line and nothing else, also where this
machine's host name does not resolve (--unresolved-host: the bad inputs alone, under a host
name of its own that nothing resolves, made with `unshare --uts`).
Usage: check_export.py SCALELAB_CLI PYTHON DATA_FOLDER [--unresolved-host]"""
import csv
import json
import os
import py_compile
import signal
import socket
import subprocess
import sys
import tempfile

from pytorch_checks import (Replay, fail, hold_to_noise, noise_envelope, relative,
                            skip_without, step_rows)

skip_without("numpy", "torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

CLI, PYTHON, DATA = sys.argv[1:4]
UNRESOLVED_HOST = "--unresolved-host" in sys.argv[4:]
COMMON = ["--devices", "2", "--epochs", "1", "--seed", "3", "--threads", "1"]
SYNTHETIC = ["--dataset", "synthetic", "--synthetic-train", "512", "--synthetic-test", "128"]
# name, export flags, steps the script trains, steps held (the rest only train: dropout draws
# PyTorch's own masks).
CASES = [
    ("cnn, Fashion-MNIST, SGD",
     ["--model", "cnn", "--dataset", "fashion-mnist", "--data", DATA, "--batch", "32",
      "--train-subset", "2048", "--test-subset", "1000"], 20, 20),
    # Batch norm per process, 2 micro-batches a step (no_sync), augmentation drawn per process
    # and sample, LAMB without decay on batch norm and biases.
    ("resnet8, synthetic, crop-flip, accumulation 2, LAMB",
     ["--model", "resnet8", *SYNTHETIC, "--batch", "16", "--accumulation", "2",
      "--augment", "crop-flip", "--optimizer", "lamb", "--lr", "0.01",
      "--weight-decay", "0.01", "--no-decay-norm-bias"], 6, 6),
    ("resnet20, synthetic, ghost batch 8, LARS",
     ["--model", "resnet20", *SYNTHETIC, "--batch", "16", "--ghost-batch", "8",
      "--optimizer", "lars", "--lr", "1"], 3, 3),
    ("mlp, synthetic 3 channels, assessment, NovoGrad, target accuracy",
     ["--model", "mlp", *SYNTHETIC, "--synthetic-channels", "3", "--synthetic-size", "32",
      "--batch", "32", "--augment", "assessment", "--optimizer", "novograd", "--lr", "0.02",
      "--target-accuracy", "0.05"], 8, 8),
    ("wrn, width 1, synthetic, AdamW", ["--model", "wrn", "--width", "1", *SYNTHETIC,
                                        "--synthetic-size", "16", "--batch", "16",
                                        "--optimizer", "adamw", "--lr", "0.001"], 3, 0),
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


def launch(out, initial, metrics, steps):
    """The exported script as 2 DDP processes from `initial`, its step rows written to
    `metrics`; every row of the file."""
    env = {**os.environ, "PYTHON": PYTHON, "MASTER_PORT": str(free_port())}
    run(["bash", "launch.sh", "--initial", initial, "--metrics-out", metrics,
         "--steps", str(steps), "--timeout-s", "60"], out, env)
    return rows_of(os.path.join(out, metrics))


def replayed_losses(out, steps, seed):
    """The script's step losses from the initial state with every value one float32 step away
    (pytorch_checks.Replay(seed).initial: the part of a replay the script's own --initial can
    take), its metrics in a file of its own."""
    with np.load(os.path.join(out, "initial.npz")) as arrays:
        state = {name: torch.from_numpy(arrays[name].copy()) for name in arrays.files}
    start = f"nudged{seed}.npz"
    np.savez(os.path.join(out, start),
             **{name: values.numpy() for name, values in Replay(seed).initial(state).items()})
    return [row["loss"] for row in step_rows(launch(out, start, f"replay{seed}.jsonl", steps))]


def compare(name, out, scalelab, pytorch, steps, held):
    """The largest relative step-loss difference; a step at another learning rate, or one of
    the first `held` further from ScaleLab's than float32 rounding carries the script from
    itself, fails the case."""
    for mine, theirs in zip(scalelab, pytorch):
        if mine["lr"] != theirs["lr"]:
            fail(f"{name}: step {mine['step']}: ScaleLab at lr {mine['lr']}, PyTorch at lr "
                 f"{theirs['lr']}")
    ours, theirs = [row["loss"] for row in scalelab], [row["loss"] for row in pytorch]
    if held:
        envelope = noise_envelope(lambda seed: replayed_losses(out, steps, seed), theirs)
        _, share = hold_to_noise(name, ours, theirs, envelope, held)
        return f"held over {held}, {share:.1%} of its limit at most"
    return "trains only"


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


def check_case(root, index, name, flags, steps, held):
    out = os.path.join(root, f"case{index}")
    run([CLI, "export", "pytorch", *COMMON, *flags, "--out", out], root)
    py_compile.compile(os.path.join(out, "train_ddp.py"), doraise=True)
    run([CLI, "train", "--config", "experiment.json", "--save-initial", "initial.npz",
         "--metrics-out", "scalelab.jsonl", "--no-store"], out)
    rows = launch(out, "initial.npz", "pytorch.jsonl", steps)
    if [row["type"] for row in rows] != ["start"] + ["step"] * steps + ["epoch", "end"]:
        fail(f"{name}: the script's rows are {[row['type'] for row in rows]}")
    scalelab, pytorch = step_rows(rows_of(os.path.join(out, "scalelab.jsonl"))), step_rows(rows)
    verdict = compare(name, out, scalelab, pytorch, steps, held)
    check_import(name, out, pytorch)
    largest = max(relative([row["loss"] for row in pytorch], [row["loss"] for row in scalelab]))
    return f"{name}: {steps} steps, largest relative difference {largest:.1e} ({verdict})"


# What a user may get wrong, each said in one "error: " line that names it, not a traceback:
# flags, the file's experiment.json, the file to start from.
BAD_INPUTS = [
    (["--data", "empty"], "error: the fashion-mnist dataset: no train-images-idx3-ubyte"),
    (["--experiment", "broken.json"], "error: the experiment broken.json is not JSON"),
    (["--experiment", "absent.json"], "error: cannot read the experiment absent.json"),
    (["--initial", "mlp.npz"], "error: --initial mlp.npz is not this experiment's initial state"),
]


# A host name nothing resolves: .invalid is reserved for that (RFC 6761).
UNRESOLVABLE = "scalelab-unresolved.invalid"


def as_unresolved_host(command):
    """`command` under the host name UNRESOLVABLE, in a UTS namespace of its own."""
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', UNRESOLVABLE, *command]


def check_bad_input(root, wrap):
    """The exported script as one process, given each of BAD_INPUTS, its command wrapped by
    `wrap`: each says its error in one line, and nothing else."""
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
        script = subprocess.run(wrap([PYTHON, "train_ddp.py", "--data", DATA, *flags]),
                                cwd=out, env=env, capture_output=True, text=True, timeout=120)
        if script.returncode == 0 or not script.stderr.startswith(said) \
                or len(script.stderr.strip().splitlines()) != 1:
            fail(f"train_ddp.py {' '.join(flags)} exited {script.returncode} saying:\n"
                 f"{script.stderr}")
    return out, f"bad input: {len(BAD_INPUTS)} cases, each said in one line and nothing else"


def check_unresolved_host(root):
    """Where this machine's host name resolves to nothing, as in many containers: the bad
    inputs say only their line, and launch.sh's processes meet and train over the loopback
    interface without a word about the host name."""
    probe = subprocess.run(as_unresolved_host(["true"]), capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skipped: unshare --uts cannot give a process a host name of its own here "
              f"({probe.stderr.strip()}); the test needs root or user namespaces")
        sys.exit(0)
    out, said = check_bad_input(root, as_unresolved_host)
    output = run(as_unresolved_host(["bash", "launch.sh", "--data", DATA, "--steps", "1",
                                      "--timeout-s", "60"]),
                 out, {**os.environ, "PYTHON": PYTHON, "MASTER_PORT": str(free_port())})
    if "resolve" in output or "Warning" in output:
        fail(f"launch.sh under the host name {UNRESOLVABLE} said:\n{output}")
    print(said)
    print(f"launch.sh under the host name {UNRESOLVABLE}: trained, nothing said")


with tempfile.TemporaryDirectory() as root:
    if UNRESOLVED_HOST:
        check_unresolved_host(root)
        print("ok: the script needs no host name on one machine")
        sys.exit(0)
    for i, case in enumerate(CASES):
        print(check_case(root, i, *case), flush=True)
    print(check_bad_input(root, lambda command: command)[1])
print("ok: every case trained as 2 DDP processes and imported")
