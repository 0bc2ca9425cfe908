"""ScaleLab's models as PyTorch nn.Modules, layer for layer and named as ScaleLab names them, so
that the initial state `scalelab-cli train --save-initial FILE.npz` writes loads with
load_state_dict(strict=True) (docs/pytorch.md).

    model = build("cnn", channels=1, size=28, classes=10)
    model.load_state_dict(load_initial_state("cnn.npz"))
"""
import numpy as np
import torch
from torch import nn


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


MODELS = {"mlp": MLP, "cnn": CNN}


def build(name, channels, size, classes=10):
    if name not in MODELS:
        raise ValueError(f"model '{name}' has no PyTorch counterpart here yet: "
                         f"choose {', '.join(MODELS)}")
    return MODELS[name](channels, size, classes)


def load_initial_state(path):
    """The arrays of a --save-initial file as a state dict of float32 tensors."""
    with np.load(path) as arrays:
        return {name: torch.from_numpy(arrays[name].copy()) for name in arrays.files}
