#include "backend/input_stage.h"

#include <string>

#include "error.h"

namespace scalelab {

void require_stage_room(std::size_t floats, std::size_t capacity) {
    if (floats > capacity)
        throw Error(ErrorKind::Internal, "a batch of " + std::to_string(floats) +
                                             " floats was staged for a replica whose input holds " +
                                             std::to_string(capacity));
}

}  // namespace scalelab
