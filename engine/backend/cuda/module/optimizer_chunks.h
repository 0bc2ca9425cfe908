#pragma once

// How the fused optimisers split a replica's parameter segments into the pieces one GPU block
// works on. Pure host code (no CUDA headers), so the tests check it without a GPU.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "error.h"
#include "optim/parameter_segment.h"

namespace scalelab::cuda {

// Floats per chunk: one block of 256 threads takes 32 floats per thread. Small enough that a
// large tensor spreads over many blocks, large enough that a block does real work.
inline constexpr std::size_t kChunkFloats = 8192;

// A piece of one segment, [begin, begin + size) of the flat buffers, never crossing a segment
// boundary, so a block knows its segment's role, weight decay and per-tensor factors at once
// and never touches the gaps between segments.
struct OptimizerChunk {
    std::uint64_t begin;    // in floats, from the start of the flat buffers
    std::uint32_t size;     // 1 to kChunkFloats
    std::uint32_t segment;  // index into the optimiser's segments
};

// Where one segment's chunks lie in ChunkTable::chunks: [first_chunk, first_chunk +
// chunk_count), consecutive, in buffer order.
struct SegmentChunks {
    std::uint64_t first_chunk;
    std::uint64_t chunk_count;
    std::uint32_t segment;  // index into the optimiser's segments
};

struct ChunkTable {
    std::vector<OptimizerChunk> chunks;
    std::vector<SegmentChunks> segments;  // one per non-empty kept segment, in segments' order
};

// The chunks of every non-empty segment for which keep(segment) is true, segment by segment in
// the order given. Throws Error(Internal) past 2^32 segments or for a chunk size outside [1,
// 2^32) (chunks count both in 32 bits).
template <class Keep>
ChunkTable chunk_segments(const std::vector<optim::ParamSegment>& segments, Keep keep,
                          std::size_t chunk_floats = kChunkFloats) {
    if (chunk_floats == 0 || chunk_floats > std::numeric_limits<std::uint32_t>::max()) {
        throw Error(ErrorKind::Internal, "optimizer chunks of " + std::to_string(chunk_floats) +
                                             " floats: at least 1 and below 2^32");
    }
    if (segments.size() > std::numeric_limits<std::uint32_t>::max()) {
        throw Error(ErrorKind::Internal,
                    std::to_string(segments.size()) + " parameter segments: at most 2^32 - 1");
    }
    ChunkTable table;
    for (std::size_t s = 0; s < segments.size(); ++s) {
        const optim::ParamSegment& segment = segments[s];
        if (segment.size == 0 || !keep(segment)) {
            continue;
        }
        SegmentChunks range{.first_chunk = table.chunks.size(),
                            .chunk_count = 0,
                            .segment = static_cast<std::uint32_t>(s)};
        for (std::size_t done = 0; done < segment.size; done += chunk_floats) {
            const std::size_t size = std::min(chunk_floats, segment.size - done);
            table.chunks.push_back(OptimizerChunk{segment.offset + done,
                                                  static_cast<std::uint32_t>(size),
                                                  static_cast<std::uint32_t>(s)});
            ++range.chunk_count;
        }
        table.segments.push_back(range);
    }
    return table;
}

// Every non-empty segment.
inline ChunkTable chunk_segments(const std::vector<optim::ParamSegment>& segments) {
    return chunk_segments(segments, [](const optim::ParamSegment&) { return true; });
}

// The non-empty segments a layer-wise optimiser's config (LARS, LAMB, NovoGrad) adapts by their
// norms (optim::is_adapted).
template <class Config>
ChunkTable adapted_chunks(const std::vector<optim::ParamSegment>& segments, const Config& config) {
    return chunk_segments(segments, [&config](const optim::ParamSegment& segment) {
        return optim::is_adapted(config, segment);
    });
}

}  // namespace scalelab::cuda
