// A host tensor: dtype, shape and an owned, 64-byte aligned, dense row-major buffer.
// What sessions take as inputs and give back as outputs.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/plan/aligned_bytes.h"
#include "compiler/plan/dtype.h"

namespace ferrite {

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
