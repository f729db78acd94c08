// Row-major walks over the elements of strided TensorRefs, for the reference externs that
// are not a single loop nest (scatters, TopK). Callers check their views first
// (operand_checks.h), so the offsets computed here stay inside the buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/plan/plan.h"

namespace ferrite {

// Advances `idx` to the next multi-index of `shape` in row-major order; false after the last.
inline bool next_index(std::vector<int64_t>* idx, const std::vector<int64_t>& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++(*idx)[d] < shape[d]) return true;
    (*idx)[d] = 0;
  }
  return false;
}

// The element offset of multi-index `idx` in view `r`.
inline int64_t view_offset(const TensorRef& r, const std::vector<int64_t>& idx) {
  int64_t off = r.offset;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * r.strides[d];
  return off;
}

// Whether `r` is dense and row-major (its elements are r.offset, r.offset + 1, ...).
inline bool is_contiguous(const TensorRef& r) {
  int64_t stride = 1;
  for (size_t d = r.shape.size(); d-- > 0;) {
    if (r.shape[d] != 1 && r.strides[d] != stride) return false;
    stride *= r.shape[d];
  }
  return true;
}

}  // namespace ferrite
