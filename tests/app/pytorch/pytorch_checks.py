"""What the checks against PyTorch in this folder share: the skip without Debian's numpy and
torch, a ScaleLab run's initial state and metrics rows, and the relative difference of two
loss curves. Each check imports it from beside itself (a script's folder is on sys.path)."""
import importlib.util
import json
import subprocess
import sys


def skip_without(*modules):
    """Exits 0 with the "skipped: ..." line ctest's SKIP_REGULAR_EXPRESSION reads when one of
    `modules` is not installed for this Python: the checks need Debian's python3-numpy,
    python3-torch and python3-pyflakes, which scripts/setup.sh installs."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            print(f"skipped: {module} is not installed for {sys.executable} "
                  f"(apt install python3-{module})")
            sys.exit(0)


def arguments():
    """The step checks' arguments, SCALELAB_CLI RESOURCES_PYTORCH_DIR DATA_FOLDER
    [--sensitivity]: the CLI, the data folder and whether to print PyTorch against itself.
    resources/pytorch joins sys.path, for the modules the checks compare with the engine."""
    cli, resources, data = sys.argv[1:4]
    sys.path.insert(0, resources)
    return cli, data, "--sensitivity" in sys.argv[4:]


def fail(message):
    sys.exit(f"FAIL: {message}")


def scalelab_run(cli, flags, stem):
    """Trains `scalelab-cli train FLAGS` without the run store, its initial state written to
    STEM.npz and its metrics to STEM.jsonl; the state file's path and every metrics row."""
    initial, metrics = stem + ".npz", stem + ".jsonl"
    run = subprocess.run([cli, "train", *flags, "--no-store", "--save-initial", initial,
                          "--metrics-out", metrics], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"scalelab-cli train {' '.join(flags)} exited {run.returncode}:\n"
             f"{run.stdout}{run.stderr}")
    with open(metrics) as lines:
        return initial, [json.loads(line) for line in lines]


def step_rows(rows):
    return [row for row in rows if row["type"] == "step"]


def relative(a, b):
    """|a - b| / |b|, step by step: b is the reference curve."""
    return [abs(x - y) / abs(y) for x, y in zip(a, b)]
