#include "runtime/tensor.h"

#include <cstdlib>
#include <cstring>
#include <string>

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

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += str_cat(i ? "," : "", shape[i]);
  return s + "]";
}

size_t checked_nbytes(DType dtype, const std::vector<int64_t>& shape) {
  if (dtype_size(dtype) == 0) fail("tensor: dtype ", dtype_name(dtype), " is not supported");
  int64_t n = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : shape) {
    if (d < 0) fail("tensor: negative dimension in shape ", shape_text(shape));
    if (__builtin_mul_overflow(n, d, &n))
      fail("tensor: byte size of shape ", shape_text(shape), " overflows");
  }
  return static_cast<size_t>(n);
}

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

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  nbytes_ = checked_nbytes(dtype_, shape_);
  data_ = aligned_alloc_bytes(nbytes_);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, const void* data)
    : Tensor(dtype, std::move(shape)) {
  if (nbytes_ > 0) std::memcpy(data_.get(), data, nbytes_);
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;  // the constructor checked that this cannot overflow
  return n;
}

}  // namespace ferrite
