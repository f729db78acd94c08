// A host tensor: dtype, shape and an owned, 64-byte aligned, dense row-major buffer.
// What sessions take as inputs and give back as outputs.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/plan/dtype.h"

namespace ferrite {

struct AlignedFree {
  void operator()(uint8_t* p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t[], AlignedFree>;
// Zero-initialized, 64-byte aligned; at least 64 bytes even for size 0. Throws
// ferrite::Error when the allocation fails.
AlignedBytes aligned_alloc_bytes(size_t nbytes);

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, std::vector<int64_t> shape);                    // zero-filled
  Tensor(DType dtype, std::vector<int64_t> shape, const void* data);  // copies

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t elements() const;
  size_t nbytes() const { return nbytes_; }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data_.get());
  }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(data_.get());
  }

 private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  size_t nbytes_ = 0;
  AlignedBytes data_;
};

}  // namespace ferrite
