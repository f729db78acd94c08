// Operand checks shared by the extern ops' parsers (MatMul, Conv, Scatter*, TopK, ...), so every op
// reports a bad TensorRef the same way. Each throws ferrite::Error whose message starts with `op`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/plan/externs/extern_op.h"  // dims_text
#include "runtime/backend.h"

namespace ferrite {

// Every element the view can reach lies inside the buffer (and the offsets do not overflow).
void check_bounds(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf);

// One strides entry per dim, no negative dim, and check_bounds.
void check_view(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf);

// The number of elements of `shape` (dims checked non-negative); throws on overflow.
int64_t element_count(const char* op, const std::vector<int64_t>& shape);

// A float32 view of rank `rank` (shape and strides), no negative dimension, inside its buffer.
void check_f32_view(const char* op, const char* what, const TensorRef& r, const ExternBuffer& buf,
                    size_t rank);

// Element i of a uint8 or int8 buffer (by its dtype), as an int.
inline int32_t int8_element(const ExternBuffer& buf, int64_t i) {
  return buf.dtype == DType::I8 ? static_cast<const int8_t*>(buf.data)[i]
                                : static_cast<const uint8_t*>(buf.data)[i];
}

}  // namespace ferrite
