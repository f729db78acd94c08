// 64-byte aligned byte blocks: what tensors, the memory pool and the plan's constants live
// in. In the plan's layer so that Plan::constants (a ConstantBytes each) are already the
// memory a Session runs from: it takes them over without copying the weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
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

// The bytes of a constant — a graph's initializer or folded value, a plan's constant —
// 64-byte aligned and shared by reference: copying one copies a pointer. The plans that one
// model compiles (one per shape or per input values) and their sessions all run from the
// graph's bytes, never a copy of the weights each. Written only while it is the one
// reference to its bytes (building it, reading a file); mutable_data() copies them first
// when they are shared (copy on write), so a writer never changes what another holds.
class ConstantBytes {
 public:
  ConstantBytes() = default;
  // n bytes, each `fill`.
  explicit ConstantBytes(size_t n, uint8_t fill = 0) { assign(n, fill); }
  ConstantBytes(const uint8_t* first, const uint8_t* last) { assign(first, last); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Null when empty.
  const uint8_t* data() const { return block_ ? block_.get() : nullptr; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size_; }
  uint8_t operator[](size_t i) const { return block_.get()[i]; }

  // The bytes, to write: copied first when another ConstantBytes shares them.
  uint8_t* mutable_data();
  // Replaces the bytes (a fresh block, the old one left to whoever else holds it).
  void assign(const uint8_t* first, const uint8_t* last);
  void assign(size_t n, uint8_t fill);
  // Keeps the first min(n, size()) bytes, zeroes the rest; a fresh block.
  void resize(size_t n);
  void swap(ConstantBytes& o) noexcept {
    block_.swap(o.block_);
    std::swap(size_, o.size_);
  }
  // How many ConstantBytes share these bytes (0 when empty).
  long use_count() const { return block_.use_count(); }

  friend bool operator==(const ConstantBytes& a, const ConstantBytes& b);
  friend bool operator!=(const ConstantBytes& a, const ConstantBytes& b) { return !(a == b); }

 private:
  std::shared_ptr<uint8_t> block_;  // an aligned_alloc_bytes block
  size_t size_ = 0;
};

}  // namespace ferrite
