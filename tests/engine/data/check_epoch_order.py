"""resources/pytorch/scalelab_order.py against the engine's own sampler (print_epoch_order):
the same indices, in the same order, for seeds up to 2^64 - 1, devices that do not divide the
dataset, and several epochs. Usage: check_epoch_order.py PRINT_EPOCH_ORDER RESOURCES_PYTORCH_DIR"""
import subprocess
import sys

sys.path.insert(0, sys.argv[2])
from scalelab_order import epoch_indices  # noqa: E402

CASES = [  # count, seed, ranks, rank, epoch
    (10, 0, 1, 0, 0), (1000, 0, 2, 1, 0), (1001, 7, 3, 2, 5), (60000, 12345, 4, 3, 1),
    (97, 2**64 - 1, 5, 0, 9), (2, 2**63, 2, 1, 3), (5000, 42, 1, 0, 29),
]
for count, seed, ranks, rank, epoch in CASES:
    engine = subprocess.run([sys.argv[1], str(count), str(seed), str(ranks), str(rank),
                             str(epoch)], capture_output=True, text=True, check=True)
    expected = [int(i) for i in engine.stdout.split()]
    got = epoch_indices(count, seed, ranks, rank, epoch)
    if got != expected:
        first = next((k for k, (a, b) in enumerate(zip(got, expected)) if a != b),
                     min(len(got), len(expected)))
        sys.exit(f"FAIL: count {count}, seed {seed}, {ranks} ranks, rank {rank}, epoch {epoch}:"
                 f" first difference at position {first} of {len(expected)}")
print(f"ok: {len(CASES)} orders the same")
