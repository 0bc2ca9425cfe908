#pragma once

// The fused optimisers' passes (backend/cuda/module/fused_optimizer_passes.h) run on the host,
// one float after another, so that their formulas, coefficients and order of passes are checked
// against the CPU optimisers without a GPU. The GPU's kernels (segment_norms.cuh) differ in how
// they are scheduled, not in what they compute per float, with one exception: a GPU block adds a
// chunk's terms in a tree, here they are added in order, so norms may differ in their last bits.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/module/optimizer_chunks.h"

namespace scalelab::testing {

// Nothing orders host passes: they run when called.
struct HostContext {};

template <class T>
class HostArray {
  public:
    HostArray(std::size_t count, HostContext)
        : values_(std::make_unique<T[]>(count)), size_(count) {}
    HostArray(std::span<const T> values, HostContext) : HostArray(values.size(), HostContext{}) {
        std::copy(values.begin(), values.end(), values_.get());
    }

    // Null when empty, as DeviceArray.
    T* data() const { return size_ == 0 ? nullptr : values_.get(); }
    std::size_t size() const { return size_; }

  private:
    std::unique_ptr<T[]> values_;  // value-initialised: zero-filled
    std::size_t size_;
};

class HostChunkedSegments {
  public:
    HostChunkedSegments(cuda::ChunkTable table, int sums_per_chunk, HostContext)
        : table_(std::move(table)), sums_per_chunk_(sums_per_chunk) {}

    template <class Update>
    void update(const Update& update, const char*) const {
        for (const cuda::OptimizerChunk& chunk : table_.chunks) {
            const auto segment = update.segment(chunk.segment);
            for (std::uint64_t i = chunk.begin; i < chunk.begin + chunk.size; ++i)
                update(segment, i);
        }
    }

    template <int kSums, class Terms, class Finish>
    void sum(const Terms& terms, const Finish& finish, const char* pass) const {
        if (kSums != sums_per_chunk_)
            throw std::logic_error(std::string(pass) + ": the chunk table was made for " +
                                   std::to_string(sums_per_chunk_) + " sums, not " +
                                   std::to_string(kSums));
        std::vector<double> partials(table_.chunks.size() * kSums, 0.0);
        for (std::size_t k = 0; k < table_.chunks.size(); ++k) {
            const cuda::OptimizerChunk& chunk = table_.chunks[k];
            const auto segment = terms.segment(chunk.segment);
            for (std::uint64_t i = chunk.begin; i < chunk.begin + chunk.size; ++i)
                terms.add(segment, i, &partials[k * kSums]);
        }
        for (const cuda::SegmentChunks& range : table_.segments) {
            double sums[kSums] = {};
            for (std::uint64_t c = 0; c < range.chunk_count; ++c)
                for (int j = 0; j < kSums; ++j)
                    sums[j] += partials[(range.first_chunk + c) * kSums + j];
            finish(range.segment, sums);
        }
    }

  private:
    cuda::ChunkTable table_;
    int sums_per_chunk_;
};

struct HostPasses {
    using Context = HostContext;
    template <class T>
    using Array = HostArray<T>;
    using Segments = HostChunkedSegments;
};

}  // namespace scalelab::testing
