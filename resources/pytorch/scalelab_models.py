"""ScaleLab's models as PyTorch nn.Modules, layer for layer and named as ScaleLab names them, so
that the initial state `scalelab-cli train --save-initial FILE.npz` writes loads with
load_state_dict(strict=True) (docs/pytorch.md).

    model = build("resnet8", channels=1, size=28, classes=10,
                  options={"ghost_batch": 8, "zero_init_residual": True})
    model.load_state_dict(load_initial_state("resnet8.npz"), strict=True)

`options` is the experiment (ScaleLab's JSON config keys); the models read width (wrn),
ghost_batch and zero_init_residual from it, with ScaleLab's defaults where a key is absent, and
refuse ghost_batch with sync_bn as ScaleLab does.

Initialisation without a --save-initial file draws from ScaleLab's distributions (not its
numbers): convolutions' and linear layers' weights and biases uniform in +-1 / sqrt(fan_in),
fan_in = in_channels * kernel^2 or in_features (engine/nn/conv2d.cpp, linear.cpp: PyTorch's
own defaults, kaiming_uniform_(a = sqrt(5))); batch norms' gamma 1 (0 for the last one of each
resnet block with zero_init_residual), beta 0, running mean 0 and running variance 1.

Batch norm is ScaleLab's (engine/backend/kernels.h BatchNormConfig), which is PyTorch's
BatchNorm2d with its defaults: eps 1e-5, momentum 0.1 in PyTorch's convention
(running = 0.9 running + 0.1 batch), normalising with the biased batch variance and moving the
running variance with the unbiased one, var n / (n - 1), n = N H W. ScaleLab keeps no
num_batches_tracked (with a fixed momentum PyTorch never reads it either); PyTorch fills a
missing one with 0 when it loads a state dict without version metadata, as every dict of
load_initial_state is, so strict loading holds.

Running statistics: ScaleLab keeps them per device (each device's average over its own
batches) and, before every evaluation, replaces each device's with their mean over the devices
(engine/train/device_worker.cpp evaluate: an all-reduce (Average) of the buffers, which training
then continues from). DDP's default (broadcast_buffers=True) copies rank 0's buffers to every
rank at each forward instead, so its statistics follow rank 0's batches alone. ScaleLab's
semantics in DDP: broadcast_buffers=False, and average_running_statistics(model) before each
evaluation. With synchronised batch norm every device's statistics are the global batch's, the
same everywhere, and the two agree. (tests/app/pytorch/check_bn_steps.py checks ScaleLab's
against this module's and prints DDP's.)
"""
import numpy as np
import torch
import torch.distributed as dist
from torch import nn

# ScaleLab's defaults for the options the models read (engine/train/run_spec.h).
MODEL_DEFAULTS = {"width": 10, "ghost_batch": 0, "zero_init_residual": False, "sync_bn": False}
BN_EPS, BN_MOMENTUM = 1e-5, 0.1
WRN_DROPOUT = 0.01  # fixed in ScaleLab's wrn (engine/nn/model_zoo.cpp wrn_block)


class MLP(nn.Module):
    """mlp: flatten, 256, ReLU, 256, ReLU, classes (engine/nn/model_zoo.cpp)."""

    def __init__(self, channels, size, classes):
        super().__init__()
        self.fc1 = nn.Linear(channels * size * size, 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc3 = nn.Linear(256, classes)

    def forward(self, x):
        x = torch.relu(self.fc1(x.flatten(1)))
        return self.fc3(torch.relu(self.fc2(x)))


class CNN(nn.Module):
    """cnn: two 3x3 convolutions (32, 64) each followed by 2x2 max pooling and ReLU, then 128,
    ReLU, classes. ScaleLab pools before the ReLU (they commute: relu(max x) = max(relu x))."""

    def __init__(self, channels, size, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * (size // 4) * (size // 4), 128)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = torch.relu(nn.functional.max_pool2d(self.conv1(x), 2))
        x = torch.relu(nn.functional.max_pool2d(self.conv2(x), 2))
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


class GhostBatchNorm(nn.BatchNorm2d):
    """Ghost batch norm (Hoffer et al. 2017) as ScaleLab's (engine/nn/batch_norm.cpp
    forward_ghost). In training, a device batch of n = k g samples is cut into k virtual batches
    of g consecutive samples, each normalised with its own mean and variance:
        y[slice i] = gamma (x[slice i] - mean_i) / sqrt(var_i + eps) + beta
    and the running statistics move once per virtual batch, in order, so that a step moves them
    by 1 - 0.9^k instead of 0.1. A batch that does not split so (n <= g, or n not a multiple of
    g: an epoch's last, partial batch) is normalised as a whole, as plain batch norm.
    Evaluation uses the running statistics."""

    def __init__(self, channels, ghost_batch):
        super().__init__(channels, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.ghost_batch = ghost_batch

    def forward(self, x):
        n = x.shape[0]
        if not self.training or n <= self.ghost_batch or n % self.ghost_batch != 0:
            return super().forward(x)
        normalise = super().forward
        return torch.cat([normalise(ghost) for ghost in x.split(self.ghost_batch)])


def batch_norm(channels, ghost_batch):
    """ScaleLab's batch norm over `channels`: over ghost batches of that many samples, or (0)
    over the whole device batch."""
    if ghost_batch > 0:
        return GhostBatchNorm(channels, ghost_batch)
    return nn.BatchNorm2d(channels, eps=BN_EPS, momentum=BN_MOMENTUM)


class ConvBN(nn.Module):
    """ScaleLab's conv + batch norm unit: a k x k convolution without bias (the batch norm's
    shift takes its place), padding k // 2, then batch norm, then ReLU when `relu` (ScaleLab
    fuses it into the batch norm: the same function)."""

    def __init__(self, cin, cout, kernel, stride, relu, ghost_batch):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride, padding=kernel // 2, bias=False)
        self.bn = batch_norm(cout, ghost_batch)
        self.relu = relu

    def forward(self, x):
        x = self.bn(self.conv(x))
        return torch.relu(x) if self.relu else x


class BasicBlock(nn.ModuleDict):
    """resnet's block: relu(body(x) + shortcut(x)), the body "1" (3x3 conv with the block's
    stride, BN, ReLU) then "2" (3x3 conv, BN), the shortcut x itself or, where the shape
    changes, "shortcut" (1x1 conv with the stride, BN). A ModuleDict, so that the children carry
    ScaleLab's names: stage2.0.1.conv.weight, stage2.0.shortcut.bn.running_var."""

    def __init__(self, cin, cout, stride, ghost_batch):
        super().__init__({"1": ConvBN(cin, cout, 3, stride, True, ghost_batch),
                          "2": ConvBN(cout, cout, 3, 1, False, ghost_batch)})
        if stride != 1 or cin != cout:
            self["shortcut"] = ConvBN(cin, cout, 1, stride, False, ghost_batch)

    def forward(self, x):
        shortcut = self["shortcut"](x) if "shortcut" in self else x
        return torch.relu(self["2"](self["1"](x)) + shortcut)


class ResNet(nn.Module):
    """resnet8 (1 block per stage) and resnet20 (3): a 3x3 conv-BN-ReLU stem of 16 channels,
    three stages of basic blocks (16, 32, 64 channels; the 2nd and 3rd start with stride 2),
    global average pooling and a linear layer. With zero_init_residual each block's last batch
    norm starts with gamma = 0 (Goyal et al. 2017): the block starts as relu(shortcut(x))."""

    def __init__(self, channels, classes, blocks_per_stage, ghost_batch, zero_init_residual):
        super().__init__()
        self.stem = ConvBN(channels, 16, 3, 1, True, ghost_batch)
        cin = 16
        # nn.Sequential names its blocks 0, 1, ... as ScaleLab does (stage1.0, stage1.1, ...).
        for stage, (cout, stride) in enumerate(((16, 1), (32, 2), (64, 2)), start=1):
            blocks = []
            for i in range(blocks_per_stage):
                blocks.append(BasicBlock(cin, cout, stride if i == 0 else 1, ghost_batch))
                cin = cout
            self.add_module(f"stage{stage}", nn.Sequential(*blocks))
        self.fc = nn.Linear(64, classes)
        if zero_init_residual:
            for stage in (self.stage1, self.stage2, self.stage3):
                for block in stage:
                    nn.init.zeros_(block["2"].bn.weight)

    def forward(self, x):
        x = self.stage3(self.stage2(self.stage1(self.stem(x))))
        return self.fc(x.mean((2, 3)))


class Rescale(nn.Module):
    """wrn's shortcut where the width changes: a 1x1 convolution with bias."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        return self.conv(x)


class WideBlock(nn.ModuleDict):
    """wrn's block (the course's conv_block): body(x) + shortcut(x), with no ReLU after the sum;
    the body "1" (3x3 conv-BN-ReLU), inverted dropout of 0.01, "2" (3x3 conv-BN-ReLU); the
    shortcut x itself or, where the width changes, "rescale"."""

    def __init__(self, cin, cout, ghost_batch):
        super().__init__({"1": ConvBN(cin, cout, 3, 1, True, ghost_batch),
                          "dropout": nn.Dropout(WRN_DROPOUT),
                          "2": ConvBN(cout, cout, 3, 1, True, ghost_batch)})
        if cin != cout:
            self["rescale"] = Rescale(cin, cout)

    def forward(self, x):
        shortcut = self["rescale"](x) if "rescale" in self else x
        return self["2"](self["dropout"](self["1"](x))) + shortcut


class WRN(nn.Module):
    """wrn with widening factor k: a 16-channel conv-BN-ReLU stem, blocks 1-2 of 16 k channels,
    2x2 max pooling, blocks 3-4 of 32 k, 2x2 max pooling, blocks 5-6 of 64 k, global average
    pooling and a linear layer. Dropout draws other masks than ScaleLab's (its own generator),
    so runs agree in distribution, not step by step."""

    def __init__(self, channels, classes, width, ghost_batch):
        super().__init__()
        widths = (16 * width, 32 * width, 64 * width)
        self.stem = ConvBN(channels, 16, 3, 1, True, ghost_batch)
        self.block1 = WideBlock(16, widths[0], ghost_batch)
        self.block2 = WideBlock(widths[0], widths[0], ghost_batch)
        self.block3 = WideBlock(widths[0], widths[1], ghost_batch)
        self.block4 = WideBlock(widths[1], widths[1], ghost_batch)
        self.block5 = WideBlock(widths[1], widths[2], ghost_batch)
        self.block6 = WideBlock(widths[2], widths[2], ghost_batch)
        self.fc = nn.Linear(widths[2], classes)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))
        x = self.block4(self.block3(nn.functional.max_pool2d(x, 2)))
        x = self.block6(self.block5(nn.functional.max_pool2d(x, 2)))
        return self.fc(x.mean((2, 3)))


def build(name, channels, size, classes=10, options=None):
    """ScaleLab's model `name` for channels x size x size images, with the experiment's
    width, ghost_batch and zero_init_residual; refuses what ScaleLab refuses
    (engine/nn/model_zoo.cpp build_model, engine/train/run_spec.cpp)."""
    o = {**MODEL_DEFAULTS, **(options or {})}
    if o["ghost_batch"] < 0:
        raise ValueError("ghost_batch must be 0 (off) or positive")
    if o["ghost_batch"] > 0 and o["sync_bn"]:
        raise ValueError("ghost_batch and sync_bn cannot be combined: choose one")
    if o["zero_init_residual"] and name not in ("resnet8", "resnet20"):
        raise ValueError("zero_init_residual needs resnet8 or resnet20 (wrn's last batch norm "
                         "feeds a ReLU, whose gradient at 0 would stop its blocks from learning; "
                         "mlp and cnn have no residual blocks)")
    if name == "mlp":
        return MLP(channels, size, classes)
    if name == "cnn":
        return CNN(channels, size, classes)
    if name in ("resnet8", "resnet20"):
        return ResNet(channels, classes, 1 if name == "resnet8" else 3, o["ghost_batch"],
                      o["zero_init_residual"])
    if name == "wrn":
        if o["width"] < 1:
            raise ValueError("wrn width must be at least 1")
        return WRN(channels, classes, o["width"], o["ghost_batch"])
    raise ValueError(f"model '{name}' is unknown: choose mlp, cnn, resnet8, resnet20 or wrn")


def average_running_statistics(model):
    """ScaleLab's step before every evaluation: each batch norm's running mean and variance
    replaced by its mean over the processes (sum by all-reduce, then / world size). The integer
    num_batches_tracked, unused with a fixed momentum, is left alone."""
    world = dist.get_world_size()
    for buffer in model.buffers():
        if buffer.is_floating_point():
            dist.all_reduce(buffer)
            buffer /= world


def load_initial_state(path):
    """The arrays of a --save-initial file as a state dict of float32 tensors."""
    with np.load(path) as arrays:
        return {name: torch.from_numpy(arrays[name].copy()) for name in arrays.files}
