// Scratch memory of the portable GEMM and convolutions: a 64-byte aligned float array that
// only grows, so that a prepared extern allocates on its first run and then reuses it.
#pragma once

#include <cstddef>

#include "runtime/tensor.h"

namespace ferrite {

class FloatBuffer {
 public:
  // At least n floats (zeroed when it grows; kept otherwise).
  float* reserve(size_t n) {
    if (n > capacity_) {
      bytes_ = aligned_alloc_bytes(n * sizeof(float));
      capacity_ = n;
    }
    return data();
  }
  float* data() const { return reinterpret_cast<float*>(bytes_.get()); }
  size_t capacity() const { return capacity_; }

 private:
  AlignedBytes bytes_;
  size_t capacity_ = 0;
};

}  // namespace ferrite
