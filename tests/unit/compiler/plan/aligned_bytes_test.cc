// aligned_alloc_bytes: 64-byte aligned blocks, zeroed when asked, also where the heap hands
// back memory a freed block dirtied (run outputs are allocated and freed every run), and
// without touching a large block's pages up front (a plan may declare a huge output);
// ConstantBytes shared by reference and copied before a write.
#include "compiler/plan/aligned_bytes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace ferrite {
namespace {

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

TEST(AlignedBytesTest, ZeroedEvenWhereTheHeapReusesMemory) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}, size_t{3} << 20}) {
    for (Pages pages : {Pages::Heap, Pages::Mapped}) {
      for (int round = 0; round < 3; ++round) {
        AlignedBytes dirty = aligned_alloc_bytes(n, pages, /*zero=*/false);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(dirty.get()) % 64, 0u);
        std::memset(dirty.get(), 0xAB, n);
        dirty.reset();
        AlignedBytes clean = aligned_alloc_bytes(n, pages);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(clean.get()) % 64, 0u);
        EXPECT_TRUE(all_zero(clean.get(), n)) << n << " bytes, round " << round;
      }
    }
  }
}

TEST(ConstantBytesTest, CopiesShareTheBytesAndAWriterCopiesThemFirst) {
  const uint8_t v[5] = {1, 2, 3, 4, 5};
  ConstantBytes a(v, v + 5);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  ConstantBytes b = a;  // a pointer, not the bytes
  EXPECT_EQ(b.data(), a.data());
  EXPECT_EQ(a.use_count(), 2);
  b.mutable_data()[0] = 9;  // shared: b gets its own copy first
  EXPECT_NE(b.data(), a.data());
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(b[0], 9);
  EXPECT_EQ(b[4], 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  EXPECT_NE(a, b);
  uint8_t* own = a.mutable_data();  // the one reference now: written in place
  EXPECT_EQ(own, a.data());
  b.mutable_data()[0] = 1;
  EXPECT_EQ(a, b);
  b.resize(7);  // kept, then zeroes
  EXPECT_EQ(b.size(), 7u);
  EXPECT_EQ(b[4], 5);
  EXPECT_EQ(b[6], 0);
  ConstantBytes empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty, ConstantBytes(v, v));
  EXPECT_EQ(ConstantBytes(3, 7)[2], 7);
}

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
// Resident bytes of this process (Linux).
size_t resident_bytes() {
  size_t pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%zu %zu", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * 4096;
}

TEST(AlignedBytesTest, LargeZeroedBlocksAreNotTouchedUpFront) {
  // 1 GiB zeroed from the heap: the pages come fresh from the system, already zero, and
  // only those written become resident (a plan's huge output that a step writes a few
  // elements of costs no more).
  const size_t n = size_t{1} << 30;
  const size_t before = resident_bytes();
  AlignedBytes big = aligned_alloc_bytes(n, Pages::Heap);
  big[0] = 1;
  big[n - 1] = 2;
  EXPECT_EQ(big[n / 2], 0);
  EXPECT_LT(resident_bytes(), before + n / 4);
}
#endif

}  // namespace
}  // namespace ferrite
