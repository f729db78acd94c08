// Test helper: dense row-major operands of extern calls (bytes, a TensorRef over them and
// their ExternBuffer), so extern tests state their inputs as values.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compiler/plan/error.h"
#include "compiler/plan/plan.h"
#include "runtime/backend.h"

namespace ferrite {
namespace extern_test {

struct Operand {
  DType dtype = DType::F32;
  std::vector<uint8_t> bytes;
  TensorRef ref;

  int64_t elements() const { return static_cast<int64_t>(bytes.size() / dtype_size(dtype)); }
  ExternBuffer buffer() const {
    return ExternBuffer{const_cast<uint8_t*>(bytes.data()), dtype, elements()};
  }
  // The buffer's elements, in storage order, as T (sizeof(T) must be the dtype's size).
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

inline std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = stride;
    stride *= shape[d];
  }
  return s;
}

// A dense operand of `shape` holding `v` (stored as T, which has the dtype's size).
template <class T>
Operand operand(DType dtype, std::vector<int64_t> shape, const std::vector<T>& v) {
  Operand o;
  o.dtype = dtype;
  o.bytes.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(o.bytes.data(), v.data(), o.bytes.size());
  o.ref.strides = row_major_strides(shape);
  o.ref.shape = std::move(shape);
  return o;
}

// A dense operand of `shape` filled with 0xAB bytes: an extern must write all of it.
inline Operand garbage(DType dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Operand o;
  o.dtype = dtype;
  o.bytes.assign(static_cast<size_t>(n) * dtype_size(dtype), 0xAB);
  o.ref.strides = row_major_strides(shape);
  o.ref.shape = std::move(shape);
  return o;
}

// The message of the ferrite::Error that `fn` throws, or "no error".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace extern_test
}  // namespace ferrite
