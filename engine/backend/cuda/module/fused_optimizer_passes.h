#pragma once

// What a fused optimiser (fused_*.h) runs its passes and keeps its state on. Each is a class
// template over one of these, so that the same formulas, coefficients and order of passes run
// as kernels on the GPU (GpuPasses, segment_norms.cuh) and, float after float, on the host
// (the tests' HostPasses), where they are checked against the CPU optimisers without a GPU.

#include <concepts>
#include <cstddef>
#include <span>

#include "backend/cuda/module/optimizer_chunks.h"

namespace scalelab::cuda {

// Passes::Context: what arrays and passes are made with (the stream they are ordered on).
// Passes::Array<T>: `count` values of T, zero-filled, or a copy of `values`; data() points at
// them wherever the passes' functors read them.
// Passes::Segments: made from a chunk table and the number of sums per chunk (0 for a table
// that is only updated):
//   update(u, name): for every chunk, s = u.segment(chunk's segment), then u(s, i) for each
//     float i of the chunk; the floats are independent (a GPU updates them at once);
//   sum<k>(terms, finish, name): for every chunk, terms.add(terms.segment(...), i, sums) adds
//     k doubles per float; then finish(segment index, sums) once per segment, with its chunks'
//     sums added up, in a fixed order (the same bits on every run).
// `name` names the pass in errors.
template <class P>
using SegmentsOf = typename P::Segments;
template <class P>
using FloatArrayOf = typename P::template Array<float>;

template <class P>
concept FusedOptimizerPasses = requires(const ChunkTable& table, typename P::Context context,
                                        std::size_t count, std::span<const float> values,
                                        const FloatArrayOf<P>& array) {
    SegmentsOf<P>(table, 0, context);
    FloatArrayOf<P>(count, context);
    FloatArrayOf<P>(values, context);
    { array.data() } -> std::same_as<float*>;
};

}  // namespace scalelab::cuda
