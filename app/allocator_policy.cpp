#include "allocator_policy.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace scalelab {

void return_large_blocks_to_the_system() {
#if defined(__GLIBC__)
    // Setting the threshold, even to its default, turns off glibc's raising of it.
    constexpr int mmap_threshold_bytes = 128 * 1024;
    mallopt(M_MMAP_THRESHOLD, mmap_threshold_bytes);
#endif
}

}  // namespace scalelab
