"""`scalelab-cli export pytorch` end to end: the exported train_ddp.py compiles, and started by
its launch.sh as 2 DistributedDataParallel processes (gloo) from `train --save-initial`'s
weights, its step losses follow the ScaleLab run of the same experiment within 1e-4 over the
first 20 steps (a cnn: past that float32 rounding grows, see check_sgd_steps.py); its metrics
file imports into a run store (`runs import`) as a run tagged pytorch beside ScaleLab's.
Usage: check_export.py SCALELAB_CLI PYTHON DATA_FOLDER"""
import json
import os
import py_compile
import signal
import socket
import subprocess
import sys
import tempfile

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed for {sys.executable} "
          "(apt install python3-numpy python3-torch)")
    sys.exit(0)

CLI, PYTHON, DATA = sys.argv[1:4]
STEPS, LIMIT = 20, 1e-4


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
        sys.exit(f"FAIL: {' '.join(command)} did not end within 180 s:\n{output}")
    if process.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {process.returncode}:\n{output}")
    return output


def free_port():
    """A port no one listens on now, for the processes' rendezvous (a fixed one may be taken by
    another test running at the same time)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def steps(path):
    with open(path) as lines:
        rows = [json.loads(line) for line in lines]
    return rows, [row for row in rows if row["type"] == "step"]


with tempfile.TemporaryDirectory() as folder:
    out = os.path.join(folder, "exported")
    run([CLI, "export", "pytorch", "--model", "cnn", "--dataset", "fashion-mnist", "--data", DATA,
         "--devices", "2", "--batch", "32", "--train-subset", "2048", "--test-subset", "1000",
         "--epochs", "1", "--seed", "3", "--threads", "1", "--out", out], folder)
    py_compile.compile(os.path.join(out, "train_ddp.py"), doraise=True)
    run([CLI, "train", "--config", "experiment.json", "--save-initial", "initial.npz",
         "--metrics-out", "scalelab.jsonl", "--no-store"], out)
    env = {**os.environ, "PYTHON": PYTHON, "MASTER_PORT": str(free_port())}
    run(["bash", "launch.sh", "--initial", "initial.npz", "--metrics-out", "pytorch.jsonl",
         "--steps", str(STEPS), "--timeout-s", "60"], out, env)
    _, scalelab = steps(os.path.join(out, "scalelab.jsonl"))
    rows, pytorch = steps(os.path.join(out, "pytorch.jsonl"))
    if [row["type"] for row in rows] != ["start"] + ["step"] * STEPS + ["epoch", "end"]:
        sys.exit(f"FAIL: the script's rows are {[row['type'] for row in rows]}")
    largest = 0.0
    for mine, theirs in zip(scalelab, pytorch):
        difference = abs(mine["loss"] - theirs["loss"]) / abs(mine["loss"])
        largest = max(largest, difference)
        if difference > LIMIT or mine["lr"] != theirs["lr"]:
            sys.exit(f"FAIL: step {mine['step']}: ScaleLab loss {mine['loss']} at lr "
                     f"{mine['lr']}, PyTorch {theirs['loss']} at lr {theirs['lr']}")
    store = os.path.join(folder, "runs.sqlite")
    for metrics in ("scalelab.jsonl", "pytorch.jsonl"):
        run([CLI, "runs", "import", metrics, "--store", store], out)
    shown = run([CLI, "runs", "show", "2", "--store", store], out)
    if "tags:           pytorch" not in shown or f"step {STEPS}," not in shown:
        sys.exit(f"FAIL: the imported PyTorch run:\n{shown}")
print(f"ok: {STEPS} steps of 2 DDP processes, largest relative difference {largest:.1e}; "
      "both runs imported")
