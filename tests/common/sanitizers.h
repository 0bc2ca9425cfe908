#pragma once

namespace scalelab::testing {

// Whether this program was built with AddressSanitizer or ThreadSanitizer, which check every
// memory access (ASan about twice as slow, TSan 5 to 15 times). GCC names its sanitizers with
// macros, clang 14 only through __has_feature. A macro as well as a constant: a test that stands
// in for the C library's allocation functions must not be compiled where a sanitizer's
// allocator replaces them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SCALELAB_ADDRESS_OR_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SCALELAB_ADDRESS_OR_THREAD_SANITIZER 1
#endif
#endif
#ifndef SCALELAB_ADDRESS_OR_THREAD_SANITIZER
#define SCALELAB_ADDRESS_OR_THREAD_SANITIZER 0
#endif
inline constexpr bool address_or_thread_sanitizer = SCALELAB_ADDRESS_OR_THREAD_SANITIZER;

// Whether the sanitizers' allocators replace the C library's: both of them do.
inline constexpr bool sanitizer_allocator = address_or_thread_sanitizer;

// Whether this program was built with ThreadSanitizer, which does not see the synchronisation
// inside uninstrumented libraries such as libgomp (see tests/tsan.supp).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool thread_sanitizer = true;
#elif defined(__has_feature)
inline constexpr bool thread_sanitizer = __has_feature(thread_sanitizer);
#else
inline constexpr bool thread_sanitizer = false;
#endif

}  // namespace scalelab::testing
