"""A ScaleLab resnet8 run against PyTorch on the same numbers, with batch norm per device
(DDP's default), synchronised over the devices (--sync-bn, PyTorch's SyncBatchNorm), over ghost
batches (--ghost-batch) and with zero-initialised residuals (--zero-init-residual): the module
of resources/pytorch/scalelab_models.py loaded from `train --save-initial`, each device's batch
taken in ScaleLab's order from the same Fashion-MNIST files and normalised as ScaleLab does, and
torch.optim.SGD with ScaleLab's momentum and learning rate, as check_sgd_steps.py does for mlp
and cnn. The replay runs in one process: with batch norm per device it runs the model on each
device's batch in turn, with that device's running statistics, and averages the devices' losses
(so their gradients, as DDP does); synchronised, it runs the model once on the global batch,
whose statistics are what SyncBatchNorm computes.

Each case runs twice:
- training (lr 0.05): PyTorch's own initialisation against ScaleLab's (the batch norms'
  constants equal, the weights from the same uniform distribution); the first step's loss
  checks the forward pass (architecture, names, layouts, inputs, batch norm's statistics), the
  second the gradients through batch norm, the third the momentum;
- weights frozen (lr 1e-9): every step's loss checks the forward pass on another batch, and
  the validation loss after the first epoch the running statistics, the one number of
  ScaleLab's that uses them. ScaleLab keeps them per device and averages them over the devices
  before it evaluates (engine/train/device_worker.cpp evaluate), and the replay does the same.
  DDP instead broadcasts rank 0's buffers at every forward, so its running statistics follow
  rank 0's batches alone: the check prints the validation loss with those as well (not held:
  it is another definition, not an error).

Every step, and the validation loss, is held to the limit float32 rounding sets here
(pytorch_checks.py): 1,000 times what PyTorch does against itself rounded otherwise. Batch
norm amplifies rounding about tenfold a step at first: it centres every ReLU's input on 0, where the smallest change flips ReLUs and with them whole terms of the
gradient, and 1 / sqrt(var + eps) magnifies it in channels of small variance, so PyTorch
against itself differs by 1e-3 after about 10 steps and by 0.1 within 50; the limit follows.
It still tells a wrong batch norm apart in the first steps: ScaleLab's per-device run against
PyTorch's statistics over the global batch differs by 4e-4 at step 1, ghost batches of 8
against 16 by 3e-3.
Usage: check_bn_steps.py SCALELAB_CLI RESOURCES_PYTORCH_DIR DATA_FOLDER [--reference-blas]"""
import functools
import math
import os
import tempfile
import time

from pytorch_checks import (Replay, arguments, blas_in_use, fail, hold_to_noise, noise_envelope,
                            noise_limit, relative, scalelab_run, skip_without, step_rows)

skip_without("numpy", "torch")
import torch  # noqa: E402

CLI, DATA, _ = arguments()
from scalelab_data import channel_statistics, normalise, read_idx_set  # noqa: E402
from scalelab_lr import LearningRate  # noqa: E402
from scalelab_models import build, load_initial_state  # noqa: E402
from scalelab_order import epoch_indices  # noqa: E402

MODEL, SUBSET, TEST_SUBSET, SEED, MOMENTUM = "resnet8", 2048, 512, 3, 0.9
DEVICES, BATCH, STEPS = 2, 32, 50
STEPS_PER_EPOCH = SUBSET // (DEVICES * BATCH)  # 32: the first epoch's evaluation is in range
EPOCHS = -(-STEPS // STEPS_PER_EPOCH)
TRAINING_LR, FROZEN_LR = 0.05, 1e-9
# name, ScaleLab flags, model options, whether the statistics are the global batch's
CASES = [("batch norm per device", [], {}, False),
         ("sync batch norm", ["--sync-bn"], {"sync_bn": True}, True),
         ("ghost batch 8", ["--ghost-batch", "8"], {"ghost_batch": 8}, False),
         ("zero-init residual", ["--zero-init-residual"], {"zero_init_residual": True}, False)]

torch.set_num_threads(1)
images, labels = read_idx_set(DATA, "train", SUBSET)
test_images, test_labels = read_idx_set(DATA, "t10k", TEST_SUBSET)
statistics = channel_statistics(images)  # the training set's, for the test images as well
inputs, targets = torch.from_numpy(normalise(images, statistics)), torch.from_numpy(labels)
test_inputs = torch.from_numpy(normalise(test_images, statistics))
test_targets = torch.from_numpy(test_labels)
cross_entropy = torch.nn.functional.cross_entropy


def scalelab_steps(folder, name, flags, lr):
    """The run's initial state file, its step rows and its first epoch row."""
    initial, rows = scalelab_run(
        CLI, ["--dataset", "fashion-mnist", "--data", DATA, "--model", MODEL, "--train-subset",
              str(SUBSET), "--test-subset", str(TEST_SUBSET), "--batch", str(BATCH),
              "--devices", str(DEVICES), "--threads", "1", "--epochs", str(EPOCHS), "--seed",
              str(SEED), "--lr", f"{lr:g}", "--momentum", str(MOMENTUM), *flags],
        os.path.join(folder, f"{name.replace(' ', '-')}-{lr:g}"))
    steps = step_rows(rows)[:STEPS]
    if len(steps) != STEPS:
        fail(f"{name}: {len(steps)} step rows, not {STEPS}")
    return initial, steps, next(row for row in rows if row["type"] == "epoch")


def check_initialisation(name, initial, options):
    """PyTorch's own initial state against ScaleLab's: the batch norms' gamma, beta and running
    statistics equal, the convolutions' and linear layers' weights and biases uniform in the
    same +-1 / sqrt(fan_in) (both inside it, and both reaching past half of it)."""
    torch.manual_seed(SEED)
    fresh = build(MODEL, channels=1, size=28, options=options).state_dict()
    for key, scalelab in load_initial_state(initial).items():
        ours = fresh[key]
        if ".bn." in key:
            if not torch.equal(ours, scalelab):
                fail(f"{name}: {key} starts at {ours.tolist()} in PyTorch, "
                     f"{scalelab.tolist()} in ScaleLab")
            continue
        bound = 1 / math.sqrt(fresh[key.replace(".bias", ".weight")][0].numel())
        for engine, values in (("PyTorch", ours), ("ScaleLab", scalelab)):
            largest = values.abs().max().item()
            if not bound / 2 < largest <= bound * (1 + 1e-6):
                fail(f"{name}: {key} in {engine} reaches {largest:.4g}, not about the bound "
                     f"1 / sqrt(fan_in) = {bound:.4g} of ScaleLab's uniform distribution")


@functools.lru_cache(maxsize=None)
def device_order(epoch, rank):
    """Device `rank`'s samples of the epoch, in the order it visits them."""
    return torch.tensor(epoch_indices(SUBSET, SEED, DEVICES, rank, epoch))


def device_batches(step):
    """Each device's batch of step `step`: its k-th run of BATCH samples, in its own order (the
    order matters to ghost batches, which are runs of consecutive samples)."""
    epoch, k = divmod(step, STEPS_PER_EPOCH)
    return [device_order(epoch, rank)[k * BATCH:(k + 1) * BATCH] for rank in range(DEVICES)]


class DeviceBuffers:
    """Each device's running statistics, swapped in and out of the one replayed model (they are
    all a device keeps of its own: parameters and momentum are the same on every device)."""

    def __init__(self, net):
        self.buffers = dict(net.named_buffers())
        self.devices = [{name: b.clone() for name, b in self.buffers.items()}
                        for _ in range(DEVICES)]

    def load(self, rank):
        for name, value in self.devices[rank].items():
            self.buffers[name].copy_(value)

    def save(self, rank):
        for name, value in self.devices[rank].items():
            value.copy_(self.buffers[name])

    def average(self):
        """ScaleLab's all-reduce (Average) of the devices' buffers before an evaluation."""
        for name in self.buffers:
            mean = sum(device[name] for device in self.devices) / DEVICES
            for device in self.devices:
                device[name].copy_(mean)


def validation_loss(net):
    net.eval()
    with torch.no_grad():
        loss = cross_entropy(net(test_inputs), test_targets).item()
    net.train()
    return loss


def pytorch_run(initial, options, synchronised, lr_value, replay_seed=0):
    """PyTorch's loss at each step from the initial state, and the validation loss at the
    first epoch's end with ScaleLab's running statistics (the devices' average) and, per device,
    with DDP's (rank 0's); with a replay seed, rounded otherwise (pytorch_checks.Replay: the
    samples reordered within each device's batch, or each ghost batch)."""
    replay = Replay(replay_seed)
    net = build(MODEL, channels=1, size=28, options=options)
    net.load_state_dict(replay.initial(load_initial_state(initial)), strict=True)
    devices = DeviceBuffers(net)
    lr = LearningRate({"lr": lr_value, "batch": BATCH, "epochs": EPOCHS}, DEVICES,
                      STEPS_PER_EPOCH)
    sgd = torch.optim.SGD(net.parameters(), lr=lr(0), momentum=MOMENTUM)
    losses, validation = [], {}
    for step in range(STEPS):
        for group in sgd.param_groups:
            group["lr"] = lr(step)
        batches = [replay.order(batch, options.get("ghost_batch", 0))
                   for batch in device_batches(step)]
        sgd.zero_grad()
        if synchronised:
            # Every device's buffers move alike (with the global statistics): one set does.
            everyone = torch.cat(batches)
            loss = cross_entropy(net(inputs[everyone]), targets[everyone])
            loss.backward()
            losses.append(loss.item())
        else:
            # DDP's gradient is the devices' average: each device's loss / DEVICES, summed.
            step_loss = 0.0
            for rank, batch in enumerate(batches):
                devices.load(rank)
                loss = cross_entropy(net(inputs[batch]), targets[batch])
                devices.save(rank)
                (loss / DEVICES).backward()
                step_loss += loss.item() / DEVICES
            losses.append(step_loss)
        sgd.step()
        if step + 1 == STEPS_PER_EPOCH:
            if not synchronised:
                devices.load(0)
                validation["ddp"] = validation_loss(net)
                devices.average()
                devices.load(0)
            validation["scalelab"] = validation_loss(net)
    return losses, validation


def check_training(folder, name, flags, options, synchronised):
    initial, rows, _ = scalelab_steps(folder, name, flags, TRAINING_LR)
    check_initialisation(name, initial, options)
    losses, _ = pytorch_run(initial, options, synchronised, TRAINING_LR)
    envelope = noise_envelope(
        lambda seed: pytorch_run(initial, options, synchronised, TRAINING_LR, seed)[0], losses)
    differences = relative(losses, [row["loss"] for row in rows])
    _, share = hold_to_noise(name, [row["loss"] for row in rows], losses, envelope)
    print(f"  training (lr {TRAINING_LR:g}): steps 1-3 "
          f"{', '.join(f'{d:.1e}' for d in differences[:3])}; largest in {STEPS} steps "
          f"{max(differences):.1e} (step {differences.index(max(differences)) + 1}), "
          f"{share:.1%} of its limit; PyTorch against itself {envelope[2]:.1e} in 3 steps, "
          f"{envelope[-1]:.1e} in {STEPS}", flush=True)
    return share


def check_frozen(folder, name, flags, options, synchronised):
    initial, rows, epoch_row = scalelab_steps(folder, name, flags, FROZEN_LR)
    losses, validation = pytorch_run(initial, options, synchronised, FROZEN_LR)
    replays = {}

    def replay(seed):
        replays[seed] = pytorch_run(initial, options, synchronised, FROZEN_LR, seed)
        return replays[seed][0]

    envelope = noise_envelope(replay, losses)
    largest, share = hold_to_noise(f"{name}, weights frozen", [row["loss"] for row in rows],
                                   losses, envelope)
    # The validation loss against its own replays': the same noise, one number.
    itself = max(relative([run[1]["scalelab"] for run in replays.values()],
                          [validation["scalelab"]] * len(replays)))
    [validation_difference] = relative([validation["scalelab"]], [epoch_row["val_loss"]])
    if validation_difference > noise_limit(itself):
        fail(f"{name}, weights frozen: validation loss after epoch 1 "
             f"{epoch_row['val_loss']:.8f} in ScaleLab, {validation['scalelab']:.8f} in PyTorch "
             f"with the devices' average running statistics ({validation_difference:.1e}; "
             f"limit {noise_limit(itself):.1e})")
    line = (f"  weights frozen (lr {FROZEN_LR:g}): largest step-loss difference "
            f"{largest:.1e}, {share:.1%} of its limit; validation loss {validation_difference:.1e}")
    if "ddp" in validation:
        line += (f" ({epoch_row['val_loss']:.6f}; with rank 0's running statistics, as DDP "
                 f"keeps them, {validation['ddp']:.6f})")
    print(line, flush=True)
    return max(share, validation_difference / noise_limit(itself))


worst = 0.0
started = time.perf_counter()
with tempfile.TemporaryDirectory() as folder:
    for name, flags, options, synchronised in CASES:
        print(f"{name}, {DEVICES} devices x batch {BATCH}, SGD momentum {MOMENTUM}:", flush=True)
        worst = max(worst, check_training(folder, name, flags, options, synchronised),
                    check_frozen(folder, name, flags, options, synchronised))
print(f"ok: every step within its limit, the closest at {worst:.1%} of it; PyTorch multiplied "
      f"with {blas_in_use()}; {time.perf_counter() - started:.0f} s")
