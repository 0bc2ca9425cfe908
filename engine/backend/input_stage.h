#pragma once

#include <cstddef>
#include <span>

namespace scalelab {

// Where a replica's input batches reach the backend's memory. stage() copies a batch from the
// host and returns where it now is. A batch's work is what the caller gives the backend between
// its stage() and the next one; the returned memory stays the batch's until the stage() after
// next, and its copy waits for the work of the batch that had the memory before it, and for
// nothing else: so batch i+1 is copied while the kernels of batch i run (on a GPU the copy then
// overlaps them). The host span may be reused as soon as stage() returns. Made, used and
// destroyed on the backend's thread.
class InputStage {
  public:
    virtual ~InputStage() = default;
    // Throws Error(Internal) for more floats than the stage was made for.
    virtual float* stage(std::span<const float> host) = 0;
};

// Throws Error(Internal) unless `floats` fit a stage made for `capacity` floats.
void require_stage_room(std::size_t floats, std::size_t capacity);

}  // namespace scalelab
