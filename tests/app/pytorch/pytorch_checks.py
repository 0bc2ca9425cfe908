"""What the checks against PyTorch in this folder share: the skip without Debian's numpy and
torch, the BLAS PyTorch multiplies with, a ScaleLab run's initial state and metrics rows, the
relative difference of two loss curves, and the limits that float32 rounding sets on it. Each
check imports it from beside itself (a script's folder is on sys.path).

The limits (docs/pytorch.md#what-each-limit-is-made-of). ScaleLab and PyTorch both compute in
float32 and sum in different orders, so their losses differ in the last bits from the first
step on, and training carries the difference forward, damped by some models and amplified
tenfold every few steps by others; by how much depends on the machine (on Debian's reference
BLAS the mlp's PyTorch run parts from ScaleLab by 1.6e-4 at step 11, on OpenBLAS by 7e-7 in 100
steps). So each check measures what float32 rounding alone does to its training where it runs:
PyTorch replayed REPLAYS times more, rounded otherwise (Replay), against PyTorch as it is. Step
s is held to NOISE_FACTOR times the replays' largest relative difference up to s, and never
below NOISE_FACTOR float32 epsilons. The factor covers what separates the engines beyond a
replay: ScaleLab sums over channels and kernels in other orders too, and oneDNN sums batch
norm's statistics in float32 where PyTorch's CPU kernels accumulate in double (measured: up to
480 times the replays' difference, resnet8's step 3 on an AVX2 CPU)."""
import importlib.util
import json
import subprocess
import sys

NOISE_FACTOR = 1000
REPLAYS = 2
FLOAT32_EPSILON = 2.0 ** -23  # float32's machine epsilon
REFERENCE_BLAS_FLAG = "--reference-blas"


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
    [--sensitivity] [--reference-blas]: the CLI, the data folder and whether to print more of
    PyTorch against itself. resources/pytorch joins sys.path, for the modules the checks compare
    with the engine. --reference-blas makes sure that PyTorch multiplies with Debian's reference
    BLAS (the ctest that asks for it points LD_LIBRARY_PATH at it)."""
    cli, resources, data = sys.argv[1:4]
    sys.path.insert(0, resources)
    if REFERENCE_BLAS_FLAG in sys.argv[4:] and blas_in_use() != "the reference BLAS":
        fail(f"{REFERENCE_BLAS_FLAG}: PyTorch multiplies with {blas_in_use()}, not Debian's "
             f"reference BLAS (libblas3, which scripts/setup.sh installs; run with "
             f"LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack)")
    return cli, data, "--sensitivity" in sys.argv[4:]


def blas_in_use():
    """The BLAS library this process multiplies matrices with, after a product has loaded it:
    OpenBLAS (what scripts/setup.sh installs for PyTorch), Debian's reference BLAS or another."""
    import torch
    torch.ones(4, 4) @ torch.ones(4, 4)
    with open("/proc/self/maps") as maps:
        libraries = {line.split()[-1] for line in maps if ".so" in line}
    if any("openblas" in library for library in libraries):
        return "OpenBLAS"
    if any("/blas/libblas.so" in library for library in libraries):
        return "the reference BLAS"
    others = sorted(library for library in libraries
                    if any(name in library for name in ("blas", "mkl", "blis", "atlas")))
    return ", ".join(others) or "no BLAS library"


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


class Replay:
    """What a replay of PyTorch rounds otherwise than the reference run, drawn from `seed`: its
    initial weights each moved one float32 step (ulp) up or down at random, and the samples of
    every batch in another order, so that every sum over them (the loss's mean, batch norm's
    statistics and gradients, each weight's gradient) rounds in another order, as another
    engine's kernels round them. Seed 0 changes nothing (the reference run)."""

    def __init__(self, seed):
        import torch
        self.generator = torch.Generator().manual_seed(seed) if seed else None

    def initial(self, state):
        """The state dict `state`, every value moved one float32 step."""
        import torch
        if self.generator is None:
            return state
        moved = {}
        for name, values in state.items():
            up = torch.randint(0, 2, values.shape, generator=self.generator, dtype=torch.bool)
            infinity = torch.tensor(float("inf"), dtype=values.dtype)
            moved[name] = torch.nextafter(values, torch.where(up, infinity, -infinity))
        return moved

    def order(self, samples, block=0):
        """`samples` (indices) reordered, each run of `block` of them within itself when
        `block` is given (ghost batches normalise each run on its own)."""
        import torch
        if self.generator is None:
            return samples
        runs = torch.as_tensor(samples).split(block or len(samples))
        return torch.cat([run[torch.randperm(len(run), generator=self.generator)]
                          for run in runs])


def noise_envelope(replay, reference):
    """Per step, the largest relative difference up to that step of replay(seed) (PyTorch's
    losses as Replay(seed) changes them) from the `reference` losses, over REPLAYS seeds: what
    float32 rounding alone does to this training here."""
    replays = [relative(replay(seed), reference) for seed in range(1, REPLAYS + 1)]
    envelope, largest = [], 0.0
    for step in range(len(reference)):
        largest = max(largest, *(differences[step] for differences in replays))
        envelope.append(largest)
    return envelope


def noise_limit(envelope_value):
    return NOISE_FACTOR * max(envelope_value, FLOAT32_EPSILON)


def hold_to_noise(case, scalelab, pytorch, envelope, steps=None):
    """Fails the case at the first of its first `steps` steps (all by default) where ScaleLab's
    loss is further from PyTorch's than noise_limit of the envelope; otherwise returns the
    largest difference and the largest share of its limit."""
    steps = len(scalelab) if steps is None else steps
    differences = relative(pytorch[:steps], scalelab[:steps])
    for step, difference in enumerate(differences):
        if difference > noise_limit(envelope[step]):
            fail(f"{case}: step {step + 1} loss {scalelab[step]:.8f} in ScaleLab, "
                 f"{pytorch[step]:.8f} in PyTorch ({difference:.1e}; limit "
                 f"{noise_limit(envelope[step]):.1e}, {NOISE_FACTOR} x PyTorch against itself "
                 f"rounded otherwise, {envelope[step]:.1e})")
    share = max(d / noise_limit(e) for d, e in zip(differences, envelope))
    return max(differences), share
