"""ScaleLab's epoch order in Python: which training samples each device visits, in which order,
bit for bit as engine/data/sampler.h and engine/data/rng.h compute them, so that a PyTorch
script can train on the same batches as a ScaleLab run (tests/engine/data/check_epoch_order.py
compares the two).

    from scalelab_order import epoch_indices
    order = epoch_indices(count=60000, seed=0, ranks=2, rank=0, epoch=0)

ScaleLab's epoch e (counted from 1, as it prints them) is epoch=e-1 here.
"""

MASK = (1 << 64) - 1  # the generator works in unsigned 64-bit arithmetic
GOLDEN = 0x9E3779B97F4A7C15


def finalize(z):
    """SplitMix64's output function: a bijective mix of 64 bits."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64, as data::SplitMix64."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + GOLDEN) & MASK
        return finalize(self.state)

    def below(self, n):
        """Uniform in [0, n) without modulo bias: rejects the values below 2^64 mod n."""
        threshold = ((1 << 64) - n) % n
        while True:
            r = self.next()
            if r >= threshold:
                return r % n


def derive_seed(seed, a, b=0):
    """The seed of the stream named by (seed, a, b), as data::derive_seed."""
    h = finalize((seed + GOLDEN) & MASK)
    h = finalize(h ^ ((a + 0x632BE59BD9B4E019) & MASK))
    return finalize(h ^ ((b + 0x85157AF5) & MASK))


def epoch_indices(count, seed, ranks, rank, epoch):
    """Rank `rank`'s samples of epoch `epoch` (from 0), as data::EpochSampler::indices: one
    Fisher-Yates shuffle of 0..count-1 per epoch, and rank r takes positions r, r + ranks, ...
    of it; the last count % ranks positions are dropped (PyTorch's drop_last=True)."""
    perm = list(range(count))
    rng = SplitMix64(derive_seed(seed, epoch & MASK))
    for i in range(count - 1, 0, -1):
        j = rng.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm[rank:(count // ranks) * ranks:ranks]
