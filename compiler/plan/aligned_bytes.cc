#include "compiler/plan/aligned_bytes.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define FERRITE_MAP_LARGE 1
#else
#define FERRITE_MAP_LARGE 0
#endif

#include "compiler/plan/error.h"

namespace ferrite {
namespace {

constexpr size_t kAlign = 64;

}  // namespace

// Every block starts with a header of kAlign bytes. Large blocks for what lives long
// (Pages::Mapped: weights, the pool) are mapped directly, so that freeing one returns its
// pages to the system at once: from the heap, glibc keeps them (its mmap threshold rises
// with the first large free), and a session's released copies of the weights would stay
// resident. The others come from malloc, not aligned_alloc: glibc serves a malloc of the
// size it last freed from its heap, where the freed block is reused, while aligned_alloc
// asks for more than the size, to align it, and so maps every block past the threshold
// afresh. The header holds what freeing the block needs.
#if FERRITE_MAP_LARGE
constexpr size_t kMapAtLeast = size_t{1} << 20;
#endif

struct Header {
  size_t mapped;  // the block's mapped size, or 0 for a heap block
  void* heap;     // malloc's pointer for a heap block
};
static_assert(sizeof(Header) <= kAlign, "the header fits in front of the data");

void AlignedFree::operator()(uint8_t* p) const {
  if (!p) return;
  Header h;
  std::memcpy(&h, p - kAlign, sizeof h);
#if FERRITE_MAP_LARGE
  if (h.mapped) {
    munmap(p - kAlign, h.mapped);
    return;
  }
#endif
  std::free(h.heap);
}

AlignedBytes aligned_alloc_bytes(size_t nbytes, Pages pages, bool zero) {
  if (nbytes > SIZE_MAX - 3 * kAlign) fail("cannot allocate ", nbytes, " bytes");
  // The header, then the data rounded up to whole kAlign blocks.
  const size_t rounded = (nbytes == 0 ? kAlign : (nbytes + kAlign - 1) / kAlign * kAlign) + kAlign;
  Header h{0, nullptr};
  uint8_t* block = nullptr;  // the header, then the data
#if !FERRITE_MAP_LARGE
  static_cast<void>(pages);  // everything comes from the heap
#else
  if (pages == Pages::Mapped && rounded >= kMapAtLeast) {
    void* m = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) fail("out of memory allocating ", nbytes, " bytes");
    block = static_cast<uint8_t*>(m);
    h.mapped = rounded;  // zero-filled by the system, page by page as it is touched
  }
#endif
  if (!block) {
    // Room to align the data. calloc, not malloc and memset: a large block it maps fresh
    // is zero already, and stays untouched (unresident) until it is written; a run's
    // output tensors are zeroed this way.
    h.heap = zero ? std::calloc(1, rounded + kAlign) : std::malloc(rounded + kAlign);
    if (!h.heap) fail("out of memory allocating ", nbytes, " bytes");
    const uintptr_t data =
        (reinterpret_cast<uintptr_t>(h.heap) + kAlign + kAlign - 1) / kAlign * kAlign;
    block = reinterpret_cast<uint8_t*>(data - kAlign);
  }
  std::memcpy(block, &h, sizeof h);
  return AlignedBytes(block + kAlign);
}

namespace {

std::shared_ptr<uint8_t> shared_block(size_t n, bool zero) {
  return std::shared_ptr<uint8_t>(aligned_alloc_bytes(n, Pages::Mapped, zero).release(),
                                  AlignedFree());
}

}  // namespace

uint8_t* ConstantBytes::mutable_data() {
  if (!block_) return nullptr;
  if (block_.use_count() > 1) {
    std::shared_ptr<uint8_t> copy = shared_block(size_, false);
    std::memcpy(copy.get(), block_.get(), size_);
    block_ = std::move(copy);
  }
  return block_.get();
}

void ConstantBytes::assign(const uint8_t* first, const uint8_t* last) {
  const size_t n = static_cast<size_t>(last - first);
  std::shared_ptr<uint8_t> b = n ? shared_block(n, false) : nullptr;
  if (n) std::memcpy(b.get(), first, n);
  block_ = std::move(b);
  size_ = n;
}

void ConstantBytes::assign(size_t n, uint8_t fill) {
  std::shared_ptr<uint8_t> b = n ? shared_block(n, fill == 0) : nullptr;
  if (n && fill != 0) std::memset(b.get(), fill, n);
  block_ = std::move(b);
  size_ = n;
}

void ConstantBytes::resize(size_t n) {
  std::shared_ptr<uint8_t> b = n ? shared_block(n, true) : nullptr;
  if (n && size_) std::memcpy(b.get(), block_.get(), std::min(n, size_));
  block_ = std::move(b);
  size_ = n;
}

bool operator==(const ConstantBytes& a, const ConstantBytes& b) {
  return a.size_ == b.size_ &&
         (a.block_ == b.block_ || std::memcmp(a.data(), b.data(), a.size_) == 0);
}

}  // namespace ferrite
