"""A ScaleLab run's step losses against PyTorch's on the same numbers, step by step: the module
of resources/pytorch/scalelab_models.py loaded from `train --save-initial`, each step's batch
taken in ScaleLab's order (scalelab_order.py) from the same Fashion-MNIST files, normalised as
ScaleLab does (scalelab_data.py), and torch.optim.SGD with ScaleLab's momentum at ScaleLab's
learning rate (scalelab_lr.py, checked against the rows' rates). The first step's loss checks
the forward pass (architecture, names, layouts, inputs, order); the later ones the gradients,
their average over the devices and the update. Every step is held to the limit float32
rounding sets here (pytorch_checks.py): 1,000 times what PyTorch does against itself rounded
otherwise. Prints each case's largest relative difference, that of
PyTorch against itself and the BLAS PyTorch multiplied with.
Usage: check_sgd_steps.py SCALELAB_CLI RESOURCES_PYTORCH_DIR DATA_FOLDER [--reference-blas]"""
import functools
import os
import tempfile

from pytorch_checks import (Replay, arguments, blas_in_use, fail, hold_to_noise, noise_envelope,
                            scalelab_run, skip_without, step_rows)

skip_without("numpy", "torch")
import torch  # noqa: E402

CLI, DATA, _ = arguments()
from scalelab_data import channel_statistics, normalise, read_idx_set  # noqa: E402
from scalelab_lr import LearningRate  # noqa: E402
from scalelab_models import build, load_initial_state  # noqa: E402
from scalelab_order import epoch_indices  # noqa: E402

SUBSET, SEED, STEPS, MOMENTUM = 2048, 3, 100, 0.9
# model, devices, batch per device
CASES = [("mlp", 2, 32), ("cnn", 2, 32), ("cnn", 1, 64)]

torch.set_num_threads(1)
images, labels = read_idx_set(DATA, "train", SUBSET)
inputs, targets = torch.from_numpy(normalise(images, channel_statistics(images))), \
    torch.from_numpy(labels)


def epochs_for(devices, batch):
    """Enough epochs for STEPS steps."""
    return -(-STEPS // (SUBSET // (devices * batch)))


def scalelab_steps(folder, model, devices, batch):
    """The run's initial state file and its first STEPS step rows."""
    initial, rows = scalelab_run(
        CLI, ["--dataset", "fashion-mnist", "--data", DATA, "--model", model, "--train-subset",
              str(SUBSET), "--batch", str(batch), "--devices", str(devices), "--threads", "1",
              "--epochs", str(epochs_for(devices, batch)), "--seed", str(SEED), "--momentum",
              str(MOMENTUM)],
        os.path.join(folder, f"{model}{devices}"))
    return initial, step_rows(rows)[:STEPS]


def global_batch(step, devices, batch):
    """Step `step`'s samples over every device: device r takes positions r, r + devices, ... of
    the epoch's shuffle, so the devices' k-th batches together are positions [k B, (k + 1) B)
    for the global batch B; their mean loss is the step's loss, and DDP's average of the
    devices' gradients is that mean's gradient."""
    size = devices * batch
    per_epoch = SUBSET // size
    epoch, k = divmod(step, per_epoch)
    return epoch_order(epoch)[k * size:(k + 1) * size]


@functools.lru_cache(maxsize=None)
def epoch_order(epoch):
    """The whole epoch's shuffle, made once per epoch rather than once per step."""
    return epoch_indices(SUBSET, SEED, 1, 0, epoch)


def pytorch_losses(model, initial, rows, devices, batch, replay_seed=0):
    """PyTorch's loss at each of the rows' steps, from the initial state; with a replay seed,
    rounded otherwise (pytorch_checks.Replay)."""
    replay = Replay(replay_seed)
    net = build(model, channels=1, size=28)
    net.load_state_dict(replay.initial(load_initial_state(initial)), strict=True)
    lr = LearningRate({"batch": batch, "epochs": epochs_for(devices, batch)}, devices,
                      SUBSET // (devices * batch))
    sgd = torch.optim.SGD(net.parameters(), lr=lr(0), momentum=MOMENTUM)
    losses = []
    for step, row in enumerate(rows):
        if abs(row["lr"] - lr(step)) > 1e-12 * lr(step):
            fail(f"{model}: step {step + 1} at lr {row['lr']!r} in ScaleLab, {lr(step)!r} here")
        for group in sgd.param_groups:
            group["lr"] = lr(step)
        order = replay.order(global_batch(step, devices, batch))
        loss = torch.nn.functional.cross_entropy(net(inputs[order]), targets[order])
        sgd.zero_grad()
        loss.backward()
        sgd.step()
        losses.append(loss.item())
    return losses


worst = 0.0
with tempfile.TemporaryDirectory() as folder:
    for model, devices, batch in CASES:
        initial, rows = scalelab_steps(folder, model, devices, batch)
        if len(rows) != STEPS:
            fail(f"{model}: {len(rows)} step rows, not {STEPS}")
        losses = pytorch_losses(model, initial, rows, devices, batch)
        envelope = noise_envelope(
            lambda seed: pytorch_losses(model, initial, rows, devices, batch, seed), losses)
        largest, share = hold_to_noise(f"{model}, {devices} x {batch}",
                                       [row["loss"] for row in rows], losses, envelope)
        worst = max(worst, share)
        print(f"{model}, {devices} device(s) x batch {batch}, SGD momentum {MOMENTUM}: largest "
              f"relative difference {largest:.1e} in {STEPS} steps, {share:.1%} of its limit; "
              f"PyTorch against itself {envelope[19]:.1e} in 20 steps, {envelope[-1]:.1e} in "
              f"{STEPS}")
print(f"ok: every step within its limit, the closest at {worst:.1%} of it; PyTorch multiplied "
      f"with {blas_in_use()}")
