"""resources/pytorch/scalelab_data.py against the engine (print_dataset_samples): the same images
and labels of synthetic datasets (1, 2 and 3 channels, sizes 8 to 32, seeds up to 2^64 - 1,
subsets), of a small CIFAR-10 folder written here (in cifar-10-batches-bin, as the tarball
unpacks) and of an IDX folder written here (gzip and plain files, plain first), the same
normalisation statistics, and the same float inputs for some training samples, with each
augmentation, on two devices in two epochs: all bit for bit. Also checks the vectorised
generator against the scalar one where below() rejects half its draws.
Usage: check_data_port.py PRINT_DATASET_SAMPLES RESOURCES_PYTORCH_DIR"""
import gzip
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed for {sys.executable} "
          "(apt install python3-numpy)")
    sys.exit(0)

PRINTER = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from scalelab_data import (_Streams, channel_statistics, load_dataset,  # noqa: E402
                           training_inputs)
from scalelab_order import SplitMix64  # noqa: E402

AUGMENTS = ["none", "flip", "crop-flip", "assessment"]
DEVICES_AND_EPOCHS = [(0, 1), (1, 3)]  # ScaleLab's epochs, from 1
random = np.random.default_rng(2024)


def write_cifar10(folder):
    """Random records in CIFAR-10's binary format: 300 training images in five files of
    different lengths and 40 test images."""
    os.makedirs(folder)
    counts = {"data_batch_1.bin": 70, "data_batch_2.bin": 50, "data_batch_3.bin": 60,
              "data_batch_4.bin": 40, "data_batch_5.bin": 80, "test_batch.bin": 40}
    for name, count in counts.items():
        records = random.integers(0, 256, (count, 3073), dtype=np.uint8)
        records[:, 0] = random.integers(0, 10, count)
        records.tofile(os.path.join(folder, name))


def write_idx(folder):
    """An MNIST folder of random 28 x 28 images: train images gzipped, train labels plain,
    test images both plain and (other ones) .gz, of which the engine reads the plain, and test
    labels gzipped under the plain name (the engine goes by the gzip magic, not the name)."""
    os.makedirs(folder)

    def idx(values):
        header = bytes([0, 0, 8, values.ndim]) + b"".join(
            d.to_bytes(4, "big") for d in values.shape)
        return header + values.tobytes()

    def images(count):
        return idx(random.integers(0, 256, (count, 28, 28), dtype=np.uint8))

    def labels(count):
        return idx(random.integers(0, 10, count, dtype=np.uint8))

    files = {"train-images-idx3-ubyte.gz": gzip.compress(images(120)),
             "train-labels-idx1-ubyte": labels(120),
             "t10k-images-idx3-ubyte": images(30),
             "t10k-images-idx3-ubyte.gz": gzip.compress(images(30)),
             "t10k-labels-idx1-ubyte": gzip.compress(labels(30))}
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def engine(spec, out, augment, rank, epoch, indices):
    """The engine's datasets, statistics and loader inputs for `spec`, from the printer."""
    arguments = [f"{key}={value}" for key, value in spec.items()]
    result = subprocess.run([PRINTER, out, *arguments, f"augment={augment}", f"rank={rank}",
                             f"epoch={epoch}", "indices=" + ",".join(map(str, indices))],
                            capture_output=True, text=True, check=True)
    count, channels, height, width = map(int, result.stdout.split())

    def read(name, dtype):
        return np.fromfile(os.path.join(out, name), dtype=dtype)
    train = read("train_images.u8", np.uint8).reshape(count, channels, height, width)
    test = read("test_images.u8", np.uint8).reshape(-1, channels, height, width)
    statistics = read("statistics.f32", np.float32).reshape(2, channels)
    return {"train": (train, read("train_labels.u8", np.uint8)),
            "test": (test, read("test_labels.u8", np.uint8)),
            "statistics": statistics, "inputs": read("inputs.f32", np.float32)}


def check(what, got, expected):
    """Fails unless got and expected are the same values, naming the largest difference."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        sys.exit(f"FAIL: {what}: shape {got.shape}, the engine's {expected.shape}")
    differ = got != expected
    if differ.any():
        largest = np.abs(got.astype(np.float64) - expected.astype(np.float64)).max()
        sys.exit(f"FAIL: {what}: {differ.sum()} of {got.size} values differ, by up to "
                 f"{largest:g}; the first at {np.argwhere(differ)[0].tolist()}")


def check_streams():
    """_Streams.below equals each row's scalar SplitMix64, also when a row meets rejections:
    below(2^63 + 1) rejects the outputs under 2^63 - 1, about half of them."""
    seeds = random.integers(0, 2**63, 64, dtype=np.uint64)
    for n in (81, 2**63 + 1):
        streams = _Streams(seeds)
        got = np.concatenate([streams.below(n, 5), streams.below(n)], axis=1)
        for row, seed in enumerate(seeds):
            rng = SplitMix64(int(seed))
            expected = [rng.below(n) for _ in range(6)]
            if got[row].tolist() != expected or int(streams.state[row]) != rng.state:
                sys.exit(f"FAIL: vectorised below({n}) of seed {seed} drew {got[row].tolist()}, "
                         f"the scalar generator {expected}")


def main():
    check_streams()
    batches = 0
    with tempfile.TemporaryDirectory() as scratch:
        write_cifar10(os.path.join(scratch, "cifar", "cifar-10-batches-bin"))
        write_idx(os.path.join(scratch, "idx"))
        specs = [
            {"dataset": "synthetic", "seed": 7, "synthetic_train": 300, "synthetic_test": 50},
            {"dataset": "synthetic", "seed": 2**64 - 1, "synthetic_train": 260,
             "synthetic_test": 40, "synthetic_channels": 3, "synthetic_size": 32,
             "train_subset": 200, "test_subset": 30},
            {"dataset": "synthetic", "seed": 12345, "synthetic_train": 1100, "synthetic_test": 20,
             "synthetic_channels": 2, "synthetic_size": 8},
            {"dataset": "cifar10", "data_dir": os.path.join(scratch, "cifar"), "seed": 3,
             "train_subset": 250, "test_subset": 30},
            {"dataset": "mnist", "data_dir": os.path.join(scratch, "idx"), "seed": 11},
        ]
        for spec in specs:
            name = f"{spec['dataset']} (seed {spec['seed']})"
            train = load_dataset(spec, spec.get("data_dir", ""), "train")
            test = load_dataset(spec, spec.get("data_dir", ""), "test")
            statistics = channel_statistics(train[0])
            count = len(train[1])
            indices = [0, count - 1, *random.integers(0, count, 22).tolist(), 5, 5]
            for augment in AUGMENTS:
                for rank, epoch in DEVICES_AND_EPOCHS:
                    expected = engine(spec, scratch, augment, rank, epoch, indices)
                    if (augment, rank) == ("none", 0):  # the data: once is enough
                        for split, (images, labels) in (("train", train), ("test", test)):
                            check(f"{name} {split} images", images, expected[split][0])
                            check(f"{name} {split} labels", labels, expected[split][1])
                        check(f"{name} statistics", statistics, expected["statistics"])
                    inputs = training_inputs(train[0], statistics, indices,
                                             {**spec, "augment": augment}, epoch - 1, rank)
                    check(f"{name}, {augment}, device {rank}, epoch {epoch}: inputs",
                          inputs.ravel(), expected["inputs"])
                    batches += 1
    print(f"ok: {len(specs)} datasets, statistics and {batches} augmented or plain batches "
          "the same bit for bit")


main()
