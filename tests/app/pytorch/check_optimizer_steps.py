"""ScaleLab's LARS, LARC, LAMB, NovoGrad and AdamW against resources/pytorch/scalelab_optim.py's,
step by step: a ScaleLab run of each, then PyTorch from the run's initial state (`train
--save-initial`) on the same batches (ScaleLab's order and normalisation), with the optimiser
make_optimizer builds from the same spec and a LambdaLR of ScaleLab's learning rate, as
train_ddp.py runs them (checked against the rows' rates). Weight decay is on and spared the
biases (decay_norm_and_bias false), and the biases are not adapted (the default), so every
exclusion is exercised. The first step's loss checks the forward pass; the later ones the
updates. Every step is held to the limit float32 rounding sets here (pytorch_checks.py): 1,000
times what PyTorch does against itself rounded otherwise. Prints each
case's largest relative difference of the step losses and PyTorch's against itself; with
--sensitivity also PyTorch's with decay on the biases or the biases adapted (what the check
would see of an exclusion missed). Usage: check_optimizer_steps.py SCALELAB_CLI
RESOURCES_PYTORCH_DIR DATA_FOLDER [--sensitivity] [--reference-blas]"""
import json
import os
import tempfile
import time

from pytorch_checks import (Replay, arguments, blas_in_use, fail, hold_to_noise, noise_envelope,
                            relative, scalelab_run, skip_without, step_rows)

skip_without("numpy", "torch")
import torch  # noqa: E402

CLI, DATA, SENSITIVITY = arguments()
from scalelab_data import channel_statistics, normalise, read_idx_set  # noqa: E402
from scalelab_lr import LearningRate  # noqa: E402
from scalelab_models import build, load_initial_state  # noqa: E402
from scalelab_optim import make_optimizer  # noqa: E402
from scalelab_order import epoch_indices  # noqa: E402

SUBSET, SEED, DEVICES, BATCH = 2048, 3, 2, 32
STEPS_PER_EPOCH = SUBSET // (DEVICES * BATCH)
STEPS = 20
# The experiment every case shares: a warm-up over the first 10 steps, so that the rate
# changes under the optimisers (LARC divides by it).
BASE = {"dataset": "fashion-mnist", "train_subset": SUBSET, "test_subset": 256,
        "devices": DEVICES, "batch": BATCH, "threads": 1, "epochs": 1, "seed": SEED,
        "warmup_length": 10, "warmup_unit": "steps", "decay_norm_and_bias": False}
# name, model, the optimiser's keys: rates at which each trains, weight decay at the usual
# values. LARC's trust coefficient is 0.01 so that its clip binds on every tensor early in the
# warm-up and on none by its end; the cnn cases add Nesterov and a LAMB trust clamp that binds
# (on conv1 and on the biases' 1). The mlp's cases see every exclusion: --sensitivity prints
# how far the losses move with decay on the biases or the biases adapted (1e-3 to 0.4; 2.6e-4
# for LAMB's decay). Rates are where float32 noise stays small (PyTorch against itself): at
# LARS's lr 5 with warm-up a pre-activation of the mlp comes within float32 rounding of 0 (4e-8
# of its sum of |w x|) at step 4, its ReLU goes one way in ScaleLab and the other in PyTorch,
# and the losses part by 6e-4, one device against two as much as ScaleLab against PyTorch. The
# cnn amplifies such noise (check_sgd_steps.py): PyTorch against itself reaches 3e-5 to 7e-4 in
# 20 steps at the rates where NovoGrad trains it, so NovoGrad is held on the mlp only.
CASES = [
    ("LARS", "mlp", {"optimizer": "lars", "lr": 8.0, "weight_decay": 5e-4}),
    ("LARC", "mlp", {"optimizer": "lars", "lr": 0.1, "weight_decay": 5e-4, "larc": True,
                     "trust_coefficient": 0.01}),
    ("LAMB", "mlp", {"optimizer": "lamb", "lr": 0.01, "weight_decay": 0.01}),
    ("NovoGrad", "mlp", {"optimizer": "novograd", "lr": 0.02, "weight_decay": 0.001}),
    ("AdamW", "mlp", {"optimizer": "adamw", "lr": 0.002, "weight_decay": 0.05}),
    ("LARS", "cnn", {"optimizer": "lars", "lr": 1.0, "weight_decay": 5e-4, "nesterov": True}),
    ("LAMB", "cnn", {"optimizer": "lamb", "lr": 0.01, "weight_decay": 0.01, "trust_clamp": 0.1}),
    ("AdamW", "cnn", {"optimizer": "adamw", "lr": 0.002, "weight_decay": 0.05}),
]

torch.set_num_threads(1)
images, labels = read_idx_set(DATA, "train", SUBSET)
inputs, targets = torch.from_numpy(normalise(images, channel_statistics(images))), \
    torch.from_numpy(labels)
FIRST_EPOCH = epoch_indices(SUBSET, SEED, 1, 0, 0)


def scalelab_steps(folder, case, spec):
    """The run's initial state file and its first STEPS step rows."""
    stem = os.path.join(folder, case.replace(", ", "-"))
    with open(stem + ".json", "w") as out:
        json.dump(spec, out)
    initial, rows = scalelab_run(CLI, ["--config", stem + ".json", "--data", DATA], stem)
    return initial, step_rows(rows)[:STEPS]


def global_batch(step):
    """Step `step`'s samples over every device (all in the first epoch): device r takes
    positions r, r + devices, ... of the epoch's shuffle, so the devices' k-th batches together
    are positions [k B, (k + 1) B) for the global batch B, and DDP's average of their gradients
    is the gradient of that batch's mean loss."""
    size = DEVICES * BATCH
    return FIRST_EPOCH[step * size:(step + 1) * size]


def pytorch_run(spec, initial, replay_seed=0):
    """PyTorch's loss and learning rate at each of the first STEPS steps, from the initial
    state, with the optimiser and schedule train_ddp.py makes; with a replay seed, rounded
    otherwise (pytorch_checks.Replay)."""
    replay = Replay(replay_seed)
    net = build(spec["model"], channels=1, size=28)
    net.load_state_dict(replay.initial(load_initial_state(initial)), strict=True)
    optimizer = make_optimizer(spec, net)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer,
                                                 LearningRate(spec, DEVICES, STEPS_PER_EPOCH))
    losses, rates = [], []
    for step in range(STEPS):
        order = replay.order(global_batch(step))
        loss = torch.nn.functional.cross_entropy(net(inputs[order]), targets[order])
        optimizer.zero_grad()
        loss.backward()
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return losses, rates


started = time.perf_counter()
worst = 0.0
with tempfile.TemporaryDirectory() as folder:
    for name, model, optimizer in CASES:
        case, spec = f"{name}, {model}", {**BASE, "model": model, **optimizer}
        initial, rows = scalelab_steps(folder, case, spec)
        if len(rows) != STEPS:
            fail(f"{case}: {len(rows)} step rows, not {STEPS}")
        losses, rates = pytorch_run(spec, initial)
        for step, (row, rate) in enumerate(zip(rows, rates)):
            if abs(row["lr"] - rate) > 1e-12 * abs(rate):
                fail(f"{case}: step {step + 1} at lr {row['lr']!r} in ScaleLab, "
                     f"{rate!r} in PyTorch")
        envelope = noise_envelope(lambda seed: pytorch_run(spec, initial, seed)[0], losses)
        largest, share = hold_to_noise(case, [row["loss"] for row in rows], losses, envelope)
        worst = max(worst, share)
        line = (f"{case}, {DEVICES} devices x batch {BATCH}, lr {optimizer['lr']:g}: "
                f"largest relative difference {largest:.1e} in {STEPS} steps, {share:.1%} of "
                f"its limit (loss {losses[0]:.3f} to {losses[-1]:.3f}); PyTorch against itself "
                f"{envelope[-1]:.1e}")
        if SENSITIVITY:
            decayed = relative(pytorch_run({**spec, "decay_norm_and_bias": True}, initial)[0],
                               losses)
            adapted = relative(pytorch_run({**spec, "adapt_norm_and_bias": True}, initial)[0],
                               losses)
            line += f"; with decay on the biases: {max(decayed):.1e}, biases adapted: " \
                    f"{max(adapted):.1e}"
        print(line)
print(f"ok: every step within its limit, the closest at {worst:.1%} of it; PyTorch multiplied "
      f"with {blas_in_use()}; {time.perf_counter() - started:.1f} s")
