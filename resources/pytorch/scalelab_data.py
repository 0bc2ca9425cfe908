"""ScaleLab's inputs in Python: the IDX files it reads (MNIST, Fashion-MNIST) and its
normalisation, bit for bit (engine/data/dataset.cpp channel_statistics, engine/data/
batch_loader.cpp's lookup table), so that a PyTorch script sees the very numbers ScaleLab's
devices see.

    images, labels = read_idx_set("/usr/share/datasets/fashion-mnist", "train", subset=2048)
    inputs = normalise(images, channel_statistics(images))   # float32, N x C x H x W
"""
import gzip
import os

import numpy as np


def _read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def read_idx_set(folder, split, subset=0):
    """The first `subset` (0: all) images, N x 1 x H x W uint8, and labels of `split` ("train"
    or "t10k"), as ScaleLab's --train-subset keeps the first images."""
    def find(kind):
        for suffix in (".gz", ""):
            path = os.path.join(folder, f"{split}-{kind}{suffix}")
            if os.path.exists(path):
                return path
        raise FileNotFoundError(f"no {split}-{kind}[.gz] in {folder}")
    images = _read_idx(find("images-idx3-ubyte"))
    labels = _read_idx(find("labels-idx1-ubyte"))
    if subset:
        images, labels = images[:subset], labels[:subset]
    return images[:, None, :, :], labels.astype(np.int64)


def channel_statistics(images):
    """Each channel's mean and population standard deviation over the set, in units of 1/255,
    rounded to float32 as ScaleLab keeps them: integer sums, then double."""
    n = float(images.shape[0]) * images.shape[2] * images.shape[3]
    means, stddevs = [], []
    for c in range(images.shape[1]):
        plane = images[:, c].astype(np.uint64)
        total, squares = int(plane.sum()), int((plane * plane).sum())
        mean = total / n
        var = max(0.0, squares / n - mean * mean)
        stddev = np.sqrt(var) / 255.0
        means.append(np.float32(mean / 255.0))
        stddevs.append(np.float32(stddev if stddev != 0.0 else 1.0))
    return means, stddevs


def normalise(images, statistics):
    """float32 (v / 255 - mean) / stddev, computed in double per pixel value as ScaleLab's
    lookup table is, then rounded once."""
    means, stddevs = statistics
    out = np.empty(images.shape, dtype=np.float32)
    values = np.arange(256, dtype=np.float64)
    for c in range(images.shape[1]):
        table = ((values / 255.0 - float(means[c])) / float(stddevs[c])).astype(np.float32)
        out[:, c] = table[images[:, c]]
    return out
