// A host tensor: dtype, shape and an owned, 64-byte aligned, dense row-major buffer.
// What sessions take as inputs and give back as outputs. A string tensor (DType::String)
// holds its elements as std::strings instead (no buffer: nbytes() is 0): no plan holds
// strings, so only the engine's string ops (bindings/engine/string_ops.h) read and make them.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/plan/aligned_bytes.h"
#include "compiler/plan/dtype.h"

namespace ferrite {

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, std::vector<int64_t> shape);                    // zero-filled
  Tensor(DType dtype, std::vector<int64_t> shape, const void* data);  // copies
  // A string tensor; `strings` holds one element per position of `shape`, row-major.
  Tensor(std::vector<int64_t> shape, std::vector<std::string> strings);
  // A copy of `t` (a string tensor's strings, any other's bytes).
  static Tensor copy_of(const Tensor& t);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t elements() const;
  size_t nbytes() const { return nbytes_; }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  // A string tensor's elements (empty for any other dtype).
  const std::vector<std::string>& strings() const { return strings_; }
  std::vector<std::string>& strings() { return strings_; }
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
  std::vector<std::string> strings_;
};

}  // namespace ferrite
