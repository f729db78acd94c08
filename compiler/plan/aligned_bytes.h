// 64-byte aligned byte blocks: what tensors, the memory pool and the plan's constants live
// in. In the plan's layer so that Plan::constants (a ConstantBytes each) are already the
// memory a Session runs from: it takes them over without copying the weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace ferrite {

struct AlignedFree {
  void operator()(uint8_t* p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t[], AlignedFree>;

// Where a block's pages come from. Mapped: blocks of 1 MiB and more are mapped directly
// (native Linux), so that freeing one returns its pages to the system at once — for what
// lives long (weights, the memory pool). Heap: the C library's heap, which keeps a freed
// block for the next allocation — for what is allocated and freed every run (a run's output
// and input tensors), which mapped would take fresh pages, a page fault each 4 KiB, in the
// kernel that first writes them (a 128x768x3072 MatMul writing a graph output took 6.3 ms,
// 5.6 into reused memory).
enum class Pages { Mapped, Heap };

// 64-byte aligned, its size rounded up to a multiple of 64 bytes (at least 64 even for size
// 0), zero-initialized unless `zero` is false. Throws ferrite::Error when the allocation
// fails.
AlignedBytes aligned_alloc_bytes(size_t nbytes, Pages pages = Pages::Mapped, bool zero = true);

// A std::allocator in aligned_alloc_bytes blocks.
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    return reinterpret_cast<T*>(aligned_alloc_bytes(n * sizeof(T)).release());
  }
  void deallocate(T* p, size_t) { AlignedFree()(reinterpret_cast<uint8_t*>(p)); }
};
template <class T, class U>
bool operator==(const AlignedAllocator<T>&, const AlignedAllocator<U>&) {
  return true;
}
template <class T, class U>
bool operator!=(const AlignedAllocator<T>&, const AlignedAllocator<U>&) {
  return false;
}

// The bytes of one plan constant.
using ConstantBytes = std::vector<uint8_t, AlignedAllocator<uint8_t>>;

}  // namespace ferrite
