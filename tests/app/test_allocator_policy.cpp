// return_large_blocks_to_the_system(): once a large block has been freed, the next block of
// 128 KiB or more is still served by mmap (and so goes back to the system when freed), where
// glibc on its own would have raised its threshold and served it from the heap.

#include <QtTest>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstddef>
#include <cstdlib>

#include "allocator_policy.h"
#include "sanitizers.h"

namespace {

// A block of `bytes`, written to so that the compiler cannot leave out the allocation.
void* used_block(std::size_t bytes) {
    void* block = std::malloc(bytes);
    if (block != nullptr)
        *static_cast<volatile char*>(block) = 1;
    return block;
}

}  // namespace

class TestAllocatorPolicy : public QObject {
    Q_OBJECT

  private slots:
    void a_block_after_a_larger_freed_one_is_still_mapped() {
#if defined(__GLIBC__)
        if (scalelab::testing::sanitizer_allocator)
            QSKIP("the sanitizers' allocators replace glibc's, which the policy sets up");
        scalelab::return_large_blocks_to_the_system();
        // Freeing a mapped 8 MiB block is what raises glibc's threshold to 8 MiB.
        void* large = used_block(8 << 20);
        QVERIFY(large != nullptr);
        std::free(large);

        const int mapped_before = mallinfo2().hblks;
        void* block = used_block(256 << 10);
        QVERIFY(block != nullptr);
        const int mapped_with_block = mallinfo2().hblks;
        std::free(block);
        QCOMPARE(mapped_with_block, mapped_before + 1);
        QCOMPARE(mallinfo2().hblks, mapped_before);  // unmapped again, not kept in a heap
#else
        QSKIP("the policy sets up glibc's allocator; this C library is not glibc");
#endif
    }
};

QTEST_APPLESS_MAIN(TestAllocatorPolicy)
#include "test_allocator_policy.moc"
