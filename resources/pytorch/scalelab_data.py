"""ScaleLab's inputs in Python, bit for bit: the datasets it reads or generates (Fashion-MNIST and
MNIST's IDX files, CIFAR-10's binary batches, the synthetic dataset of engine/data/synthetic.cpp),
its normalisation (engine/data/dataset.cpp channel_statistics, the batch loader's lookup table)
and its training-time augmentation (engine/data/augment.cpp, drawn per sample as engine/data/
batch_loader.cpp draws it), so that a PyTorch script sees the very numbers ScaleLab's devices see
(tests/engine/data/check_data_port.py compares the two).

    images, labels = load_dataset(spec, "/usr/share/datasets/fashion-mnist", "train")
    statistics = channel_statistics(images)
    order = epoch_indices(len(labels), spec["seed"], ranks, rank, epoch)
    inputs = training_inputs(images, statistics, order[:128], spec, epoch, rank)  # float32 NCHW

`spec` is the experiment with ScaleLab's JSON keys (dataset, seed, augment, train_subset,
test_subset, synthetic_train, ...); DATA_DEFAULTS fills in those it lacks. Epochs count from 0
here, as in epoch_indices: ScaleLab's epoch e is epoch=e-1.
"""
import gzip
import math
import os

import numpy as np

from scalelab_order import GOLDEN, MASK, SplitMix64, derive_seed, finalize

# ScaleLab's defaults (engine/train/run_spec.h) of the keys this module reads.
DATA_DEFAULTS = {"dataset": "fashion-mnist", "seed": 0, "augment": "none", "train_subset": 0,
                 "test_subset": 0, "synthetic_train": 8192, "synthetic_test": 2048,
                 "synthetic_channels": 1, "synthetic_size": 28}


# ---- vectorised SplitMix64: one generator per image ----

def _finalize_array(z):
    """finalize on a uint64 array; numpy's uint64 arithmetic wraps modulo 2^64 as C++'s does."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _derive_seeds(seed, a, b=0):
    """derive_seed(seed, a, b) for every element of the integer arrays (or ints) a and b."""
    def plus(values, constant):
        return np.atleast_1d(np.asarray(values, dtype=np.uint64)) + np.uint64(constant)
    h = np.array([finalize((seed + GOLDEN) & MASK)], dtype=np.uint64)
    h = _finalize_array(h ^ plus(a, 0x632BE59BD9B4E019))
    return _finalize_array(h ^ plus(b, 0x85157AF5))


class _Streams:
    """Many SplitMix64 generators side by side, one per row (per image), each drawing exactly
    what its own data::SplitMix64 draws, so that k draws of n images cost a few array
    operations instead of n * k Python calls."""

    def __init__(self, seeds):
        self.state = np.array(seeds, dtype=np.uint64)

    def next(self, k=1):
        """Each row's next k outputs, rows x k: the j-th is finalize(state + j * GOLDEN)."""
        steps = np.arange(1, k + 1, dtype=np.uint64) * np.uint64(GOLDEN)
        out = _finalize_array(self.state[:, None] + steps)
        self.state += steps[-1]
        return out

    def below(self, n, k=1):
        """k draws of SplitMix64::below(n) per row (uint64, rows x k). below rejects the outputs
        under 2^64 mod n and draws again; a row that meets one (about k n / 2^64 of them: never,
        for the small n used here) is drawn again one value at a time by the scalar generator."""
        threshold = ((1 << 64) - n) % n
        start = self.state.copy()
        out = self.next(k)
        values = out % np.uint64(n)
        for row in np.flatnonzero((out < np.uint64(threshold)).any(axis=1)):
            rng = SplitMix64(int(start[row]))
            values[row] = [rng.below(n) for _ in range(k)]
            self.state[row] = rng.state
        return values

    def range(self, lo, hi, k=1):
        """k draws of SplitMix64::range(lo, hi) per row: lo + below(hi - lo + 1), int64."""
        return lo + self.below(hi - lo + 1, k).astype(np.int64)

    def uniform(self, lo, hi):
        """augment.cpp's uniform: lo + (hi - lo) * (next >> 11) * 2^-53, in [lo, hi)."""
        return lo + (hi - lo) * ((self.next()[:, 0] >> np.uint64(11)).astype(np.float64) * 2.0**-53)

    def coin(self):
        """augment.cpp's coin: the top bit of the next output."""
        return (self.next()[:, 0] >> np.uint64(63)) != 0


def _c_divide(a, b):
    """C++'s integer division of the int64 array a by b > 0: it truncates toward zero where
    numpy's // floors."""
    return np.sign(a) * (np.abs(a) // b)


# ---- the datasets ----

def _keep_first(images, labels, subset):
    """The first `subset` images (0: all), as ScaleLab's train_subset and test_subset; more than
    the set holds is an error there too."""
    if subset > len(labels):
        raise ValueError(f"a subset of {subset} images of a set of only {len(labels)}")
    if subset:
        images, labels = images[:subset], labels[:subset]
    return images, labels.astype(np.int64)


def _read_idx(path):
    """An IDX file, plain or gzip (told apart by gzip's magic bytes, as the engine does)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def read_idx_set(folder, split, subset=0):
    """The first `subset` (0: all) images, N x 1 x H x W uint8, and labels of `split` ("train"
    or "t10k") of an IDX folder; each file plain or .gz, plain first as the engine looks."""
    def find(kind):
        for suffix in ("", ".gz"):
            path = os.path.join(folder, f"{split}-{kind}{suffix}")
            if os.path.isfile(path):
                return path
        raise FileNotFoundError(f"no {split}-{kind}[.gz] in {folder}")
    images = _read_idx(find("images-idx3-ubyte"))
    labels = _read_idx(find("labels-idx1-ubyte"))
    return _keep_first(images[:, None, :, :], labels, subset)


CIFAR10_FILES = {"train": [f"data_batch_{k}.bin" for k in range(1, 6)], "test": ["test_batch.bin"]}


def read_cifar10_set(folder, split, subset=0):
    """CIFAR-10's binary version (engine/data/cifar10_reader.cpp): the first `subset` (0: all)
    images, N x 3 x 32 x 32 uint8, and labels of `split` ("train": data_batch_1..5.bin in
    order, "test": test_batch.bin). Each file is a run of 3073-byte records, a label byte and
    the red, green and blue planes. The files are in `folder` or, when it lacks any of the six,
    in its cifar-10-batches-bin (where the official tarball unpacks)."""
    def complete(path):
        return all(os.path.isfile(os.path.join(path, f)) for files in CIFAR10_FILES.values()
                   for f in files)
    inner = os.path.join(folder, "cifar-10-batches-bin")
    if not complete(folder) and complete(inner):
        folder = inner
    records = []
    for name in CIFAR10_FILES[split]:
        data = np.fromfile(os.path.join(folder, name), dtype=np.uint8)
        if data.size == 0 or data.size % 3073:
            raise ValueError(f"{name} is {data.size} bytes, not a whole number of 3073-byte "
                             "records")
        records.append(data.reshape(-1, 3073))
    records = np.concatenate(records)
    if records[:, 0].max() > 9:
        raise ValueError(f"CIFAR-10 {split} set has labels above 9")
    return _keep_first(records[:, 1:].reshape(-1, 3, 32, 32), records[:, 0], subset)


# engine/data/synthetic.cpp's constants: its streams for derive_seed, the prototypes' level
# where no blob reaches, blobs per channel, and the pixel noise's bound.
_SYNTHETIC_STREAMS = {"prototypes": 0, "train": 1, "test": 2}
_BACKGROUND, _BLOBS, _NOISE = 24, 4, 40


def _range(rng, lo, hi):
    """SplitMix64::range(lo, hi) of the scalar generator: lo + below(hi - lo + 1)."""
    return lo + rng.below(hi - lo + 1)


def _synthetic_prototypes(channels, size, classes, seed, margin):
    """Each class's prototype, classes x channels x side x side int64 with side = size +
    2 margin (the margin lets a shifted sample be a plain crop): the background plus per
    channel 4 blobs of random centre, radius r and amplitude, amp (r^2 - d^2)^2 / r^4 with
    C++'s integer division, wherever d < r."""
    side = size + 2 * margin
    prototypes = np.full((classes, channels, side, side), _BACKGROUND, dtype=np.int64)
    position = np.arange(side) - margin  # of each grid point, in image pixels
    for cls in range(classes):
        rng = SplitMix64(derive_seed(seed, _SYNTHETIC_STREAMS["prototypes"], cls))
        for channel in range(channels):
            for _ in range(_BLOBS):
                cx = _range(rng, size // 6, size - 1 - size // 6)
                cy = _range(rng, size // 6, size - 1 - size // 6)
                r = _range(rng, max(2, size // 7), max(3, size // 3))
                amp = _range(rng, -90, 200)
                w = r * r - ((position[None, :] - cx) ** 2 + (position[:, None] - cy) ** 2)
                prototypes[cls, channel] += np.where(w > 0, _c_divide(amp * w * w, r ** 4), 0)
    return prototypes


def synthetic_set(spec, split, classes=10):
    """engine/data/synthetic.cpp's `split` ("train" or "test") of the synthetic dataset that a
    run of `spec` trains on: synthetic_train or synthetic_test images of synthetic_channels x
    synthetic_size^2 uint8, and labels, seeded with the run's seed (engine/train/
    dataset_request.cpp; the spec has no classes key, so always 10). Sample i is its class's
    prototype shifted by (dx, dy) in [-margin, margin], scaled about the background by a
    contrast of 12..20 sixteenths, plus noise uniform in [-40, 40] per pixel, clamped to
    0..255, all drawn from the stream (seed, split, i); the labels are i % classes shuffled by
    the stream (seed, split, 2^64 - 1)."""
    spec = {**DATA_DEFAULTS, **spec}
    seed, channels, size = spec["seed"], spec["synthetic_channels"], spec["synthetic_size"]
    count, stream = spec[f"synthetic_{split}"], _SYNTHETIC_STREAMS[split]
    margin = max(1, size // 9)
    prototypes = _synthetic_prototypes(channels, size, classes, seed, margin)

    labels = np.arange(count) % classes
    order = SplitMix64(derive_seed(seed, stream, MASK))
    for i in range(count - 1, 0, -1):  # Fisher-Yates, as the engine's
        j = order.below(i + 1)
        labels[i], labels[j] = labels[j], labels[i]

    images = np.empty((count, channels, size, size), dtype=np.uint8)
    pixels = np.arange(size)
    for first in range(0, count, 1024):  # bounds the int64 temporaries
        rows = np.arange(first, min(first + 1024, count))
        rng = _Streams(_derive_seeds(seed, stream, rows))
        shift_x = rng.range(-margin, margin)
        shift_y = rng.range(-margin, margin)
        contrast = rng.range(12, 20)[:, :, None, None]
        noise = rng.range(-_NOISE, _NOISE, channels * size * size)
        y = (margin - shift_y + pixels)[:, None, :, None]
        x = (margin - shift_x + pixels)[:, None, None, :]
        crops = prototypes[labels[rows][:, None, None, None],
                           np.arange(channels)[None, :, None, None], y, x]
        values = _BACKGROUND + _c_divide((crops - _BACKGROUND) * contrast, 16)
        images[rows] = np.clip(values + noise.reshape(-1, channels, size, size), 0, 255)
    return images, labels


def load_dataset(spec, folder, split):
    """What a run of `spec` trains on ("train") or evaluates on ("test"): uint8 images
    N x C x H x W and int64 labels, of spec["dataset"] (fashion-mnist, mnist: IDX files in
    `folder`; cifar10: its binary batches in `folder`; synthetic: generated, `folder` unused),
    the first train_subset or test_subset of them as the engine keeps (0: all)."""
    spec = {**DATA_DEFAULTS, **spec}
    name, subset = spec["dataset"], spec[f"{split}_subset"]
    if name in ("fashion-mnist", "mnist"):
        return read_idx_set(folder, "train" if split == "train" else "t10k", subset)
    if name == "cifar10":
        return read_cifar10_set(folder, split, subset)
    if name == "synthetic":
        return _keep_first(*synthetic_set(spec, split), subset)
    raise ValueError(f"dataset '{name}' is unknown: choose fashion-mnist, mnist, cifar10 or "
                     "synthetic")


# ---- normalisation ----

def channel_statistics(images):
    """Each channel's mean and population standard deviation over the set, in units of 1/255,
    rounded to float32 as ScaleLab keeps them: integer sums (here from the counts of each
    value), then double: mean = sum / n, var = max(0, squares / n - mean^2)."""
    n = float(images.shape[0]) * images.shape[2] * images.shape[3]
    means, stddevs = [], []
    for c in range(images.shape[1]):
        counts = np.bincount(images[:, c].ravel(), minlength=256)
        total = sum(v * int(k) for v, k in enumerate(counts))
        squares = sum(v * v * int(k) for v, k in enumerate(counts))
        mean = total / n
        var = max(0.0, squares / n - mean * mean)
        stddev = math.sqrt(var) / 255.0
        means.append(np.float32(mean / 255.0))
        stddevs.append(np.float32(stddev if stddev != 0.0 else 1.0))
    return means, stddevs


def normalise(images, statistics):
    """float32 (v / 255 - mean) / stddev per channel, computed in double and rounded once, as
    the engine's loader: uint8 images through a table of the 256 values (its lookup table),
    float ones (augmented pixel values) value by value."""
    means, stddevs = statistics
    out = np.empty(images.shape, dtype=np.float32)
    for c in range(images.shape[1]):
        def formula(v):
            return ((v / 255.0 - float(means[c])) / float(stddevs[c])).astype(np.float32)
        if images.dtype == np.uint8:
            out[:, c] = formula(np.arange(256, dtype=np.float64))[images[:, c]]
        else:
            out[:, c] = formula(images[:, c].astype(np.float64))
    return out


# ---- augmentation ----

_CROP_PADDING = 4


def _crop_flip(images, dx, dy, flip):
    """augment.cpp's apply_crop_flip on each image: output (y, x) reads input (y + dy, x' + dx)
    with x' = W - 1 - x where flipped, else x; 0 outside the image."""
    n, channels, height, width = images.shape
    p = _CROP_PADDING
    padded = np.pad(images, ((0, 0), (0, 0), (p, p), (p, p)))
    y = np.arange(height)[None, :] + dy[:, None] + p
    columns = np.arange(width)
    x = np.where(flip[:, None], width - 1 - columns, columns) + dx[:, None] + p
    return padded[np.arange(n)[:, None, None, None], np.arange(channels)[None, :, None, None],
                  y[:, None, :, None], x[:, None, None, :]]


def _grey(rgb):
    """ITU-R 601 luma of images x 3 x H x W, in augment.cpp's order of operations."""
    return 0.2989 * rgb[:, 0] + 0.587 * rgb[:, 1] + 0.114 * rgb[:, 2]


def _assessment(images, rng):
    """augment.cpp's draw_assessment and apply_assessment on each image: flip, the affine
    (rotation, x shear, scale about the centre; bilinear, zero outside), then brightness,
    contrast and saturation in a random order, each clamped to [0, 255] and rounded to float32
    as the engine's float buffer does. float32 pixel values, images x C x H x W."""
    n, channels, height, width = images.shape
    flip = rng.coin()
    angle, shear, scale = rng.uniform(-10.0, 10.0), rng.uniform(-10.0, 10.0), rng.uniform(0.8, 1.2)
    factors = [rng.uniform(0.8, 1.2) for _ in range(3)]  # brightness, contrast, saturation
    orders = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
    steps = orders[rng.below(6)[:, 0].astype(np.int64)]

    # The inverse of M = R(angle) Shear_x(shear) scale: libm's cos, sin and tan through math
    # (numpy's own may differ in the last bit), the rest as augment.cpp writes it.
    rot, sx = angle * (math.pi / 180.0), shear * (math.pi / 180.0)
    cos, sin = np.array([math.cos(v) for v in rot]), np.array([math.sin(v) for v in rot])
    tan = np.array([math.tan(v) for v in sx])
    a, b = cos, -cos * tan - sin
    c, d = sin, -sin * tan + cos
    m00, m01, m10, m11 = ((v / scale)[:, None, None] for v in (d, -b, -c, a))
    cx, cy = (width - 1) * 0.5, (height - 1) * 0.5
    u = (np.arange(width) - cx)[None, None, :]
    v = (np.arange(height) - cy)[None, :, None]
    fx = m00 * u + m01 * v + cx
    fy = m10 * u + m11 * v + cy
    x0, y0 = np.floor(fx), np.floor(fy)
    wx, wy = fx - x0, fy - y0
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)

    # Bilinear: the four neighbours in augment.cpp's order (y0 x0, y0 x1, y1 x0, y1 x1), each
    # (w_y w_x) pixel; one outside the image adds +0, which leaves the sum as skipping it does.
    image = np.arange(n)[:, None, None, None]
    plane = np.arange(channels)[None, :, None, None]
    total = np.zeros((n, channels, height, width))
    for iy, weight_y in ((y0, 1.0 - wy), (y0 + 1, wy)):
        for ix, weight_x in ((x0, 1.0 - wx), (x0 + 1, wx)):
            inside = (iy >= 0) & (iy < height) & (ix >= 0) & (ix < width)
            column = np.where(flip[:, None, None], width - 1 - ix, ix)
            pixel = images[image, plane, np.clip(iy, 0, height - 1)[:, None],
                           np.clip(column, 0, width - 1)[:, None]]
            total = total + np.where(inside[:, None], (weight_y * weight_x)[:, None] * pixel, 0.0)
    out = np.clip(total, 0.0, 255.0).astype(np.float32)

    def blend(x, ratio, reference):
        """torchvision's _blend: ratio x + (1 - ratio) reference, clamped, as float32."""
        r = ratio[:, None, None, None]
        return np.clip(r * x.astype(np.float64) + (1.0 - r) * reference, 0.0, 255.0) \
            .astype(np.float32)

    for position in range(3):
        for step, factor in enumerate(factors):
            chosen = steps[:, position] == step
            if not chosen.any():
                continue
            x, k = out[chosen], factor[chosen]
            if step == 0:  # brightness: blend with black
                out[chosen] = blend(x, k, 0.0)
            elif step == 1:  # contrast: blend with the mean of the grey image (of all values
                # unless 3 channels), summed in order as the engine's loop (cumsum is sequential)
                values = _grey(x.astype(np.float64)) if channels == 3 else x.astype(np.float64)
                total = np.cumsum(values.reshape(len(x), -1), axis=1)[:, -1]
                out[chosen] = blend(x, k, (total / values[0].size)[:, None, None, None])
            elif channels == 3:  # saturation: blend with the pixel's grey
                out[chosen] = blend(x, k, _grey(x.astype(np.float64))[:, None])
    return out


def training_inputs(images, statistics, indices, spec, epoch, rank):
    """The normalised float32 inputs, len(indices) x C x H x W, that ScaleLab's device `rank`
    feeds its model for the training samples `indices` in epoch `epoch` (from 0), augmented
    as spec["augment"] says (none, flip, crop-flip, assessment). Sample i's transform comes
    from its own stream (seed, rank, epoch + 1, i) (augment.h augment_seed: the loader counts
    epochs from 1), so it depends on neither its batch nor its position; the engine augments
    the uint8 pixels, then normalises (assessment: its float pixel values)."""
    spec = {**DATA_DEFAULTS, **spec}
    indices = np.asarray(indices, dtype=np.int64)
    chosen, mode = images[indices], spec["augment"]
    if mode == "none":
        return normalise(chosen, statistics)
    rng = _Streams(_derive_seeds(derive_seed(spec["seed"], rank, epoch + 1), indices))
    if mode == "flip":
        zero = np.zeros(len(indices), dtype=np.int64)
        return normalise(_crop_flip(chosen, zero, zero, rng.coin()), statistics)
    if mode == "crop-flip":
        dx = rng.range(-_CROP_PADDING, _CROP_PADDING)[:, 0]
        dy = rng.range(-_CROP_PADDING, _CROP_PADDING)[:, 0]
        return normalise(_crop_flip(chosen, dx, dy, rng.coin()), statistics)
    if mode == "assessment":
        return normalise(_assessment(chosen, rng), statistics)
    raise ValueError(f"augmentation '{mode}' is unknown: choose none, flip, crop-flip or "
                     "assessment")
