#include "runtime/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "compiler/plan/error.h"
#include "compiler/plan/resource_limits.h"

namespace ferrite {
namespace {

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
  // Named only when it does not fit (32-bit wasm): tensors are made around every run.
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max())
    return checked_size(n, str_cat("tensor of shape ", shape_text(shape)));  // throws
  return static_cast<size_t>(n);
}

// Tensors are what runs take and give back, allocated and freed around every run: from the
// heap, which reuses the memory (Pages::Heap). Past 1 GiB they are mapped: the page faults
// cost nothing beside such a tensor's use, and a size the system cannot give fails as an
// error under sanitizers too, whose malloc aborts the process past its maximum (1 TiB).
Pages pages_for(size_t nbytes) {
  return nbytes >= (size_t{1} << 30) ? Pages::Mapped : Pages::Heap;
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  nbytes_ = checked_nbytes(dtype_, shape_);
  data_ = aligned_alloc_bytes(nbytes_, pages_for(nbytes_));
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, const void* data)
    : dtype_(dtype), shape_(std::move(shape)) {
  nbytes_ = checked_nbytes(dtype_, shape_);
  data_ = aligned_alloc_bytes(nbytes_, pages_for(nbytes_), /*zero=*/false);
  if (nbytes_ > 0) std::memcpy(data_.get(), data, nbytes_);
}

Tensor::Tensor(std::vector<int64_t> shape, std::vector<std::string> strings)
    : dtype_(DType::String), shape_(std::move(shape)), strings_(std::move(strings)) {
  int64_t n = 1;
  for (int64_t d : shape_) {
    if (d < 0) fail("tensor: negative dimension in shape ", shape_text(shape_));
    if (__builtin_mul_overflow(n, d, &n))
      fail("tensor: element count of shape ", shape_text(shape_), " overflows");
  }
  if (static_cast<uint64_t>(n) != strings_.size())
    fail("tensor: ", strings_.size(), " strings for shape ", shape_text(shape_));
}

Tensor Tensor::copy_of(const Tensor& t) {
  if (t.dtype() == DType::String) return Tensor(t.shape(), t.strings());
  return Tensor(t.dtype(), t.shape(), t.data());
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;  // the constructor checked that this cannot overflow
  return n;
}

}  // namespace ferrite
