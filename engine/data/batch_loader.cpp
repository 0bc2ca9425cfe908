#include "data/batch_loader.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "data/rng.h"
#include "error.h"

namespace scalelab::data {

int batch_count(std::size_t samples, int batch, bool drop_last) {
    const std::size_t b = std::size_t(batch);
    return int(drop_last ? samples / b : (samples + b - 1) / b);
}

std::vector<int> batch_sizes(std::size_t samples, int batch, bool drop_last) {
    const std::size_t b = std::size_t(batch);
    std::vector<int> sizes;
    if (samples >= b)
        sizes.push_back(batch);
    if (samples % b != 0 && !drop_last)
        sizes.push_back(int(samples % b));
    return sizes;
}

BatchLoader::BatchLoader(const Dataset& data, const Normalization& norm, LoaderConfig config)
    : data_(data), config_(config) {
    if (config.batch < 1) {
        throw Error(ErrorKind::InvalidSpec, "the batch size must be at least 1 (it is " +
                                                std::to_string(config.batch) + ")");
    }
    if (config.prefetch < 1) {
        throw Error(ErrorKind::InvalidSpec,
                    "the loader's prefetch depth must be at least 1 (it "
                    "is " +
                        std::to_string(config.prefetch) + ")");
    }
    const std::size_t channels = std::size_t(data.channels);
    if (norm.mean.size() != channels || norm.stddev.size() != channels) {
        throw Error(ErrorKind::Internal, "batch loader: normalisation has " +
                                             std::to_string(norm.mean.size()) + " means and " +
                                             std::to_string(norm.stddev.size()) +
                                             " standard deviations for a dataset of " +
                                             std::to_string(channels) + " channels");
    }
    // A lookup table per channel: 256 entries replace a subtract and divide per pixel.
    lut_.resize(channels * 256);
    mean_.resize(channels);
    stddev_.resize(channels);
    for (std::size_t c = 0; c < channels; ++c) {
        const double sd = norm.stddev[c];
        if (!(sd > 0.0) || !std::isfinite(sd) || !std::isfinite(norm.mean[c])) {
            throw Error(ErrorKind::Internal, "batch loader: channel " + std::to_string(c) +
                                                 " has mean " + std::to_string(norm.mean[c]) +
                                                 " and stddev " + std::to_string(sd) +
                                                 "; the stddev must be positive");
        }
        for (int v = 0; v < 256; ++v) {
            lut_[c * 256 + std::size_t(v)] = float((v / 255.0 - double(norm.mean[c])) / sd);
        }
        mean_[c] = double(norm.mean[c]);
        stddev_[c] = sd;
    }
    pixels_.resize(data.image_size());

    slots_.resize(std::size_t(config.prefetch) + 1);
    for (Batch& b : slots_) {
        b.images.reserve(std::size_t(config.batch) * data.image_size());
        b.labels.reserve(std::size_t(config.batch));
    }
    thread_ = std::thread([this] { produce(); });
}

BatchLoader::~BatchLoader() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void BatchLoader::start_epoch(std::vector<std::uint32_t> indices, int epoch) {
    const std::size_t count = data_.count();
    for (std::uint32_t i : indices) {
        if (i >= count) {
            throw Error(ErrorKind::Internal, "batch loader: sample index " + std::to_string(i) +
                                                 " is out of range for a dataset of " +
                                                 std::to_string(count) + " images");
        }
    }
    // One allocation per epoch (not per batch), so a stale fill can keep the old list alive.
    auto shared = std::make_shared<const std::vector<std::uint32_t>>(std::move(indices));
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++generation_;
        total_ = batch_count(shared->size(), config_.batch, config_.drop_last);
        indices_ = std::move(shared);
        epoch_ = epoch;
        produced_ = 0;
        consumed_ = 0;
    }
    wake_.notify_one();
}

const Batch* BatchLoader::next() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (consumed_ >= total_) {
        return nullptr;
    }
    ready_.wait(lock, [this] { return produced_ > consumed_; });
    const Batch* batch = &slots_[std::size_t(consumed_) % slots_.size()];
    ++consumed_;  // frees the slot of the batch handed out before this one
    lock.unlock();
    wake_.notify_one();
    return batch;
}

int BatchLoader::batches_per_epoch() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return total_;
}

void BatchLoader::produce() {
    const int slots = int(slots_.size());
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        // Batch k may go into slot k % slots once the consumer no longer holds what was there:
        // it holds batch consumed_ - 1, so k must stay below consumed_ - 1 + slots.
        wake_.wait(lock, [&] {
            return stop_ || (produced_ < total_ && produced_ < std::max(consumed_ - 1, 0) + slots);
        });
        if (stop_) {
            return;
        }
        const std::uint64_t generation = generation_;
        const int k = produced_;
        const int epoch = epoch_;
        const std::shared_ptr<const std::vector<std::uint32_t>> indices = indices_;
        lock.unlock();

        const std::size_t first = std::size_t(k) * std::size_t(config_.batch);
        const int count = int(std::min(std::size_t(config_.batch), indices->size() - first));
        fill(slots_[std::size_t(k % slots)], *indices, first, count, epoch);

        lock.lock();
        // If start_epoch ran meanwhile, this batch belongs to a discarded epoch: drop it.
        if (generation == generation_) {
            ++produced_;
            ready_.notify_one();
        }
    }
}

void BatchLoader::fill(Batch& out, const std::vector<std::uint32_t>& indices, std::size_t first,
                       int count, int epoch) {
    const int channels = data_.channels, height = data_.height, width = data_.width;
    const std::size_t image = data_.image_size();
    const std::size_t plane = std::size_t(height) * std::size_t(width);
    // Within the reserved capacity: resize never reallocates here.
    out.size = count;
    out.images.resize(std::size_t(count) * image);
    out.labels.resize(std::size_t(count));

    // Normalises pixel values 0..255 through the lookup table.
    auto normalise = [&](const std::uint8_t* pixels, float* dst) {
        for (int c = 0; c < channels; ++c) {
            const float* lut = lut_.data() + std::size_t(c) * 256;
            const std::size_t at = std::size_t(c) * plane;
            for (std::size_t p = 0; p < plane; ++p) {
                dst[at + p] = lut[pixels[at + p]];
            }
        }
    };

    for (int j = 0; j < count; ++j) {
        const std::uint32_t index = indices[first + std::size_t(j)];
        const std::uint8_t* src = data_.images.data() + std::size_t(index) * image;
        float* dst = out.images.data() + std::size_t(j) * image;
        out.labels[std::size_t(j)] = data_.labels[index];

        if (config_.augment == AugmentMode::None) {
            normalise(src, dst);
            continue;
        }
        SplitMix64 rng(augment_seed(config_.seed, config_.rank, epoch, index));
        switch (config_.augment) {
            case AugmentMode::None:
                break;
            case AugmentMode::Flip:
            case AugmentMode::CropFlip: {
                const CropFlip t =
                    config_.augment == AugmentMode::Flip ? draw_flip(rng) : draw_crop_flip(rng);
                apply_crop_flip(src, pixels_.data(), channels, height, width, t);
                normalise(pixels_.data(), dst);
                break;
            }
            case AugmentMode::Assessment: {
                // Pixel values in [0, 255] straight into the batch, then normalised in place.
                apply_assessment(src, dst, channels, height, width, draw_assessment(rng));
                for (int c = 0; c < channels; ++c) {
                    float* p = dst + std::size_t(c) * plane;
                    const double mean = mean_[std::size_t(c)];
                    const double sd = stddev_[std::size_t(c)];
                    for (std::size_t k = 0; k < plane; ++k) {
                        p[k] = float((double(p[k]) / 255.0 - mean) / sd);
                    }
                }
                break;
            }
        }
    }
}

}  // namespace scalelab::data
