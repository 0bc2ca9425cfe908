#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "data/augment.h"
#include "data/dataset.h"

namespace scalelab::data {

// One mini-batch, ready for a model: `size` images as plain NCHW floats, normalised per
// channel as x -> (x / 255 - mean[c]) / stddev[c], and their labels.
struct Batch {
    int size = 0;
    std::vector<float> images;         // size * channels * height * width
    std::vector<std::int32_t> labels;  // size
};

struct LoaderConfig {
    int batch = 128;         // images per batch (>= 1)
    bool drop_last = false;  // drop a last batch smaller than `batch`
    // The transforms of data/augment.h, in pixel space before normalisation (as torchvision's
    // transforms before Normalize). None for evaluation.
    AugmentMode augment = AugmentMode::None;
    int prefetch = 2;  // batches prepared ahead of the consumer (>= 1)
    std::uint64_t seed = 0;
    int rank = 0;  // the device this loader feeds: part of the augmentation's seed
};

// How many batches `samples` samples make.
int batch_count(std::size_t samples, int batch, bool drop_last);
// The sizes those batches have, each once, largest first: `batch` when there are that many
// samples, and the smaller last one unless drop_last.
std::vector<int> batch_sizes(std::size_t samples, int batch, bool drop_last);

// Turns a list of sample indices into batches on a background thread, `prefetch` batches ahead
// of the consumer, so that gathering, augmentation and normalisation overlap the training step.
//
// Memory: a ring of prefetch + 1 Batch buffers is allocated once in the constructor and reused
// (no allocation per batch: glibc would hand big freed blocks back to the system and fault
// them in again every step). The consumer holds one slot, the producer fills the others.
//
// Augmentation is deterministic: sample i of the dataset in epoch e on device `rank` gets its
// transform from the stream (seed, rank, e, i) (augment_seed). Keying on the dataset index (not
// the position in the batch) makes it independent of the order and the batching; keying on the
// rank makes each device augment differently, as the issue asks (seeded per device and epoch).
// So the same seed and device count give the same bytes, but N devices no longer augment
// exactly as one device does: an augmented run on N devices equals one on 1 device with batch
// N*b only in distribution. Without augmentation that equality still holds (up to rounding).
//
// Threading: one consumer thread calls start_epoch/next/batches_per_epoch; the Dataset must
// outlive the loader and not change while it runs.
class BatchLoader {
  public:
    // Throws scalelab::Error(InvalidSpec) if batch < 1 or prefetch < 1, and Error(Internal) if
    // the normalisation does not have one positive stddev and one mean per channel.
    BatchLoader(const Dataset& data, const Normalization& norm, LoaderConfig config);
    ~BatchLoader();  // stops and joins the thread, even mid-epoch
    BatchLoader(const BatchLoader&) = delete;
    BatchLoader& operator=(const BatchLoader&) = delete;

    // Starts delivering `indices` (e.g. EpochSampler::indices(epoch), or 0..n-1 in order for
    // evaluation); `epoch` seeds the augmentation. Whatever is left of the previous epoch is
    // discarded. Throws Error(Internal) for an index >= the dataset's count.
    void start_epoch(std::vector<std::uint32_t> indices, int epoch);

    // The next batch of the current epoch, or nullptr at its end (or before any epoch). The
    // batch stays valid until the following next() or start_epoch(). The last batch may be
    // smaller than config.batch unless drop_last.
    const Batch* next();

    // Batches in the epoch last started (0 before the first).
    int batches_per_epoch() const;

    const LoaderConfig& config() const { return config_; }

  private:
    void produce();
    // Runs on the producer thread only, the one user of pixels_.
    void fill(Batch& out, const std::vector<std::uint32_t>& indices, std::size_t first, int count,
              int epoch);

    const Dataset& data_;
    const LoaderConfig config_;
    std::vector<float> lut_;             // [channel][pixel value 0..255] -> normalised value
    std::vector<double> mean_, stddev_;  // per channel, for non-integer pixel values
    std::vector<std::uint8_t> pixels_;   // one image: the scratch of crop and flip
    std::vector<Batch> slots_;  // prefetch + 1 buffers; batch k of an epoch lives in k % size

    mutable std::mutex mutex_;
    std::condition_variable ready_;  // producer -> consumer: a batch was produced
    std::condition_variable wake_;   // consumer -> producer: slot freed, new epoch, or stop
    // Everything below mutex_ is guarded by it. The producer takes a reference to the epoch's
    // indices so that start_epoch can replace them while a stale batch is still being filled.
    std::shared_ptr<const std::vector<std::uint32_t>> indices_;
    std::uint64_t generation_ = 0;  // bumped by start_epoch; a stale fill is thrown away
    int epoch_ = 0;
    int total_ = 0;     // batches in the current epoch
    int produced_ = 0;  // batches of the current epoch filled
    int consumed_ = 0;  // batches of the current epoch handed out by next()
    bool stop_ = false;

    std::thread thread_;  // started last in the constructor
};

}  // namespace scalelab::data
