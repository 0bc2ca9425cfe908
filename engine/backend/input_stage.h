#pragma once

#include <cstddef>
#include <span>

namespace scalelab {

// Where a replica's input batches reach the backend's memory. stage() copies a batch from the
// host and returns where it now is, for the work the caller gives the backend until the next
// stage() (the batch's work). A stage overwrites that memory only once the batch's work is done,
// and a batch's copy waits for nothing else: so batch i+1 is copied while the kernels of batch i
// still run (on a GPU the copy overlaps them). The host span may be reused as soon as stage()
// returns. Made, used and destroyed on the backend's thread.
class InputStage {
  public:
    virtual ~InputStage() = default;
    // Throws Error(Internal) for more floats than the stage was made for.
    virtual float* stage(std::span<const float> host) = 0;
};

// Throws Error(Internal) unless `floats` fit a stage made for `capacity` floats.
void require_stage_room(std::size_t floats, std::size_t capacity);

}  // namespace scalelab
