#include "compiler/plan/aligned_bytes.h"

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

// Every block starts with a header of kAlign bytes: its mapped size, or 0 when it came from
// aligned_alloc. Large blocks (weights, the pool) are mapped directly, so that freeing one
// returns its pages to the system at once: from the heap, glibc keeps them (its mmap
// threshold rises with the first large free), and a session's released copies of the
// weights would stay resident.
#if FERRITE_MAP_LARGE
constexpr size_t kMapAtLeast = size_t{1} << 20;
#endif

void AlignedFree::operator()(uint8_t* p) const {
  if (!p) return;
  uint8_t* block = p - kAlign;
  size_t mapped = 0;
  std::memcpy(&mapped, block, sizeof mapped);
#if FERRITE_MAP_LARGE
  if (mapped) {
    munmap(block, mapped);
    return;
  }
#endif
  std::free(block);
}

AlignedBytes aligned_alloc_bytes(size_t nbytes) {
  if (nbytes > SIZE_MAX - 2 * kAlign) fail("cannot allocate ", nbytes, " bytes");
  // aligned_alloc wants a multiple of the alignment; the header comes first.
  const size_t rounded = (nbytes == 0 ? kAlign : (nbytes + kAlign - 1) / kAlign * kAlign) + kAlign;
  size_t mapped = 0;
  void* block = nullptr;
#if FERRITE_MAP_LARGE
  if (rounded >= kMapAtLeast) {
    block = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) fail("out of memory allocating ", nbytes, " bytes");
    mapped = rounded;  // zero-filled by the system, page by page as it is touched
  }
#endif
  if (!block) {
    block = std::aligned_alloc(kAlign, rounded);
    if (!block) fail("out of memory allocating ", nbytes, " bytes");
    std::memset(block, 0, rounded);
  }
  std::memcpy(block, &mapped, sizeof mapped);
  return AlignedBytes(static_cast<uint8_t*>(block) + kAlign);
}

}  // namespace ferrite
